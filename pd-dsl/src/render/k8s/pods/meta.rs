//! Object metadata: the image, labels, annotations and selectors every
//! object carries, and the objects several layouts share (the namespace,
//! the claims).

use crate::Layout;
use crate::render::k8s::settings::K8sSettings;
use k8s_openapi::api::core::v1::{
    Namespace, PersistentVolumeClaim, PersistentVolumeClaimSpec, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

pub(super) fn image(layout: &Layout, settings: &K8sSettings) -> String {
    match (&settings.image_registry, layout.image_ref.rsplit_once('/')) {
        (Some(registry), Some((_, name))) => format!("{registry}/{name}"),
        _ => layout.image_ref.clone(),
    }
}

/// The labels a selector matches: stable for the life of the layout (a
/// Deployment's selector cannot change).
pub(in crate::render::k8s) fn selector_labels(
    base: &str,
    component: &str,
) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        ("app.kubernetes.io/instance".to_owned(), base.to_owned()),
        (
            "app.kubernetes.io/component".to_owned(),
            component.to_owned(),
        ),
    ])
}

/// Label: the engine a pod or set belongs to.
pub const ENGINE_LABEL: &str = "pd-dsl/engine";
/// Annotation: the layout's full name (object names may shorten it).
pub const LAYOUT_ANNOTATION: &str = "pd-dsl/layout";
/// Annotation: the pd-dsl version that rendered the object.
pub const VERSION_ANNOTATION: &str = "pd-dsl/version";
/// Annotation: the image the layout runs.
pub const IMAGE_ANNOTATION: &str = "pd-dsl/image";
/// Label Kueue admits a workload's queue by.
pub const KUEUE_QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// An object's labels: the selector's, plus who manages it and the image
/// tag it runs (`app.kubernetes.io/version`).
pub(in crate::render::k8s) fn object_labels(
    layout: &Layout,
    base: &str,
    component: &str,
) -> BTreeMap<String, String> {
    let mut labels = selector_labels(base, component);
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        "pd-dsl".to_owned(),
    );
    labels.insert("app.kubernetes.io/part-of".to_owned(), base.to_owned());
    if let Some(tag) = image_tag_label(&layout.image_ref) {
        labels.insert("app.kubernetes.io/version".to_owned(), tag);
    }
    labels
}

/// The image's tag when it is a valid label value.
fn image_tag_label(image: &str) -> Option<String> {
    let tag = image.rsplit_once(':')?.1;
    let ok = !tag.is_empty()
        && tag.len() <= 63
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric())
        && tag.ends_with(|c: char| c.is_ascii_alphanumeric());
    ok.then(|| tag.to_owned())
}

/// The annotations every object carries: the full layout name, the pd-dsl
/// version and the image.
pub(in crate::render::k8s) fn annotations(layout: &Layout) -> BTreeMap<String, String> {
    BTreeMap::from([
        (LAYOUT_ANNOTATION.to_owned(), layout.name().to_owned()),
        (
            VERSION_ANNOTATION.to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ),
        (IMAGE_ANNOTATION.to_owned(), layout.image_ref.clone()),
    ])
}

pub(in crate::render::k8s) fn meta(
    layout: &Layout,
    name: &str,
    labels: BTreeMap<String, String>,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(labels),
        annotations: Some(annotations(layout)),
        ..ObjectMeta::default()
    }
}

/// Labels of what several layouts share (the namespace, the claims): not
/// one layout's instance, so applying another layout's `setup/` changes
/// nothing but the annotations of who wrote it last.
fn shared_labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), "pd-dsl".to_owned()),
        (
            "app.kubernetes.io/managed-by".to_owned(),
            "pd-dsl".to_owned(),
        ),
    ])
}

/// The namespace, at the Pod Security level the pods need: host paths are
/// admitted only by `privileged` (the `baseline` and `restricted` levels
/// refuse every hostPath volume).
pub(in crate::render::k8s) fn namespace(layout: &Layout, name: &str) -> Namespace {
    let mut labels = shared_labels();
    for mode in ["enforce", "audit", "warn"] {
        labels.insert(
            format!("pod-security.kubernetes.io/{mode}"),
            "privileged".to_owned(),
        );
    }
    Namespace {
        metadata: meta(layout, name, labels),
        ..Namespace::default()
    }
}

/// A claim of `gib` GiB with one access mode, in the cluster's default
/// storage class.
pub(in crate::render::k8s) fn claim(
    layout: &Layout,
    name: &str,
    access_mode: &str,
    gib: u64,
) -> PersistentVolumeClaim {
    PersistentVolumeClaim {
        metadata: meta(layout, name, shared_labels()),
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec![access_mode.to_owned()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_owned(),
                    Quantity(format!("{gib}Gi")),
                )])),
                ..VolumeResourceRequirements::default()
            }),
            ..PersistentVolumeClaimSpec::default()
        }),
        ..PersistentVolumeClaim::default()
    }
}
