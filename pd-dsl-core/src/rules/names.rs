//! Names from the closed tables (model, hardware, image), whether the image ships a build for the hardware, and the layout's `verified` image.

use crate::check::Cx;
use crate::rules::{Rule, did_you_mean};
use crate::site::Spanned;
use crate::spec::{HardwareSpec, LayoutSpec, Role, Verification};
use crate::tables::{self, Hardware, Image, Model, Version};

declare_rules! {
    /// The model is not in the model table.
    UnknownModel = "unknown_model", Hard, "the model must be an entry of the model table";
    /// The hardware is not in the hardware table.
    UnknownHardware = "unknown_hardware", Hard, "the hardware must be an entry of the hardware table";
    /// The image is not in the image table.
    UnknownImage = "unknown_image", Hard, "the image must be an entry of the image table";
    /// The image ships no build for the hardware: the facts' `image_suffixes`
    /// (the build matrix of .github/workflows/schedule_image_build_and_push.yaml
    /// pushes a 950DT `a5` image at v0.23.0 and from v0.26.0rc1 to
    /// v0.30.0rc2, none from v0.18.0 to v0.23.0rc1 or at v0.24.0rc1 and
    /// v0.25.1rc1).
    ImageHardwareUnavailable = "image_hardware_unavailable", Hard, "the image must ship a build for the hardware";
    /// P and D on different hardware families (docs/source/developer_guide/
    /// Design_Documents/disaggregated_prefill.md "Limitations", L101 at every
    /// release from v0.18.0 to v0.30.0rc2).
    HardwareHomogeneous = "hardware_homogeneous", Hard, "prefill and decode run on one hardware family";
    /// Verification image malformed or newer than the layout's.
    VerificationImage = "verification_image", Hard, "verification names an image no newer than the layout's";
}

pub(crate) fn lookup_tables(
    spec: &LayoutSpec,
    cx: &mut Cx,
) -> (
    Option<&'static Model>,
    Option<&'static Hardware>,
    Option<&'static Image>,
) {
    let model = tables::model(&spec.model.value);
    if model.is_none() {
        let hint = model_hint(&spec.model.value);
        cx.report(
            Rule::UnknownModel,
            spec.model.site,
            "model",
            format!(
                "found model `{}`, expected {}: models are a closed table{hint}",
                spec.model.value,
                model_choices(&spec.model.value)
            ),
        );
    }
    let hw_of = |cx: &mut Cx, id: &Spanned<String>, field: &str| {
        let hw = tables::hardware(&id.value);
        if hw.is_none() {
            let hint = did_you_mean(&id.value, tables::HARDWARE.iter().map(|h| h.id));
            cx.report(
                Rule::UnknownHardware,
                id.site,
                field,
                format!(
                    "found hardware `{}`, expected one of {}: hardware is a closed table{hint}",
                    id.value,
                    list(tables::HARDWARE.iter().map(|h| h.id))
                ),
            );
        }
        hw
    };
    let hardware = match &spec.hardware {
        HardwareSpec::All(id) => hw_of(cx, id, "hardware"),
        HardwareSpec::PerRole(map) => {
            let mut first: Option<(&'static Hardware, Role)> = None;
            let mut result = None;
            for (role, id) in map {
                let Some(hw) = hw_of(cx, id, &format!("hardware.{role}")) else {
                    continue;
                };
                match first {
                    None => {
                        first = Some((hw, *role));
                        result = Some(hw);
                    }
                    Some((f, frole)) if f.family != hw.family => cx.report(
                        Rule::HardwareHomogeneous,
                        id.site,
                        format!("hardware.{role}"),
                        format!(
                            "found {role} on {} and {frole} on {}, expected one hardware family: KV transfer between families is not supported (disaggregated_prefill.md limitations)",
                            hw.product, f.product
                        ),
                    ),
                    Some((f, frole)) if f.npus_per_node != hw.npus_per_node => cx.report(
                        Rule::HardwareHomogeneous,
                        id.site,
                        format!("hardware.{role}"),
                        format!(
                            "found {role} on {} and {frole} on {}, expected one node kind: placement and the kv port table assume one NPU count per node",
                            hw.product, f.product
                        ),
                    ),
                    Some(_) => {}
                }
            }
            result
        }
    };
    let image = tables::image(&spec.image.value);
    if image.is_none() {
        let hint = did_you_mean(&spec.image.value, tables::IMAGES.iter().map(|i| i.tag));
        cx.report(
            Rule::UnknownImage,
            spec.image.site,
            "image",
            format!(
                "found image `{}`, expected one of {}: per-version rules need the image's facts{hint}",
                spec.image.value,
                list(tables::IMAGES.iter().map(|i| i.tag))
            ),
        );
    }
    if let (Some(hw), Some(img)) = (hardware, image)
        && img.reference(hw).is_none()
    {
        cx.report(
                Rule::ImageHardwareUnavailable,
                spec.image.site,
                "image",
                format!(
                    "found image `{}` on {}, expected an image built for {}: {} ships none for it (installation.md, image workflow)",
                    img.tag, hw.product, hw.product, img.tag
                ),
            );
    }
    (model, hardware, image)
}

/// "did you mean" for a model id. Ids are long (`family_version_quant_...`)
/// and authors often write a prefix (`deepseek_v4_flash`), so each id is
/// compared on its first `word.len()` characters, then on the whole id.
pub(crate) fn model_hint(word: &str) -> String {
    let n = word.chars().count();
    let limit = (n / 3).max(2);
    tables::MODELS
        .iter()
        .map(|m| {
            let head: String = m.id.chars().take(n).collect();
            (
                crate::rules::edit_distance(word, &head),
                crate::rules::edit_distance(word, m.id),
                m.id,
            )
        })
        .filter(|(d, _, _)| *d <= limit)
        .min()
        .map(|(_, _, id)| format!("; did you mean `{id}`?"))
        .unwrap_or_default()
}

/// The model ids to offer for an unknown `word`: those sharing its longest
/// `_`-separated prefix (`deepseek_v5_flash` -> every `deepseek_v...`), or
/// one id per family when no family matches, so the list stays readable as
/// the table grows.
pub(crate) fn model_choices(word: &str) -> String {
    let ids = || tables::MODELS.iter().map(|m| m.id);
    let tokens: Vec<&str> = word.split('_').collect();
    for n in (1..=tokens.len()).rev() {
        let prefix = tokens[..n].join("_");
        let same: Vec<&str> = ids()
            .filter(|id| *id == prefix || id.starts_with(&format!("{prefix}_")))
            .collect();
        if !same.is_empty() {
            return format!("one of {}", list(same.into_iter()));
        }
    }
    let mut families: Vec<String> = Vec::new();
    for id in ids() {
        let f = format!("{}_*", id.split('_').next().unwrap_or(id));
        if !families.contains(&f) {
            families.push(f);
        }
    }
    format!(
        "a model-table id of the families {}",
        list(families.iter().map(String::as_str))
    )
}

pub(crate) fn list<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn check_verification(spec: &LayoutSpec, image: Option<&Image>, cx: &mut Cx) -> bool {
    let (tag, on) = match &spec.verified.value {
        Verification::Never => return false,
        Verification::On(t) => (t, true),
        Verification::Before(t) => (t, false),
    };
    let Some(v) = Version::parse(&tag.value) else {
        cx.report(
            Rule::VerificationImage,
            tag.site,
            "verified",
            format!("found image {:?}, expected a vllm-ascend version like `v0.21.0rc1`: verification belongs to an image", tag.value),
        );
        return false;
    };
    let Some(img) = image else { return false };
    let newer = v > img.version();
    if newer {
        cx.report(
            Rule::VerificationImage,
            tag.site,
            "verified",
            format!("found verification on `{}`, expected an image no newer than the layout's `{}`: a layout cannot have been verified on a later image than it runs", tag.value, img.tag),
        );
        return false;
    }
    on && v == img.version()
}
