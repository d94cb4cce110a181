//! Fields that cannot hold such text: rejected by their rule, or plain words.

use crate::free_text::{TEXT_FIELDS, set_text};
use crate::{PD, config, hostile, rules_of, spec, with_control};
use pd_dsl::render::shell;
use pd_dsl::spec::{EnvEntry, EnvValue, FlagEntry};
use pd_dsl::{LayoutSpec, Spanned};
use proptest::prelude::*;

type Setter = fn(&mut LayoutSpec, String);

/// Fields whose values must be plain words, with the rule that guards each.
const PLAIN_FIELDS: &[(&str, Setter, &str)] = &[
    ("name", |s, v| s.name = v.into(), "name_format"),
    (
        "model_path",
        |s, v| s.model_path = Some(v.into()),
        "path_format",
    ),
    (
        "served_model_name",
        |s, v| s.served_model_name = Some(v.into()),
        "served_name_format",
    ),
    (
        "env name",
        |s, v| {
            s.serve.env.push(EnvEntry {
                name: v.into(),
                value: Spanned::bare(EnvValue::Literal("1".into())),
            })
        },
        "env_name_format",
    ),
    (
        "env prepend",
        |s, v| {
            s.serve.env.push(EnvEntry {
                name: "PD_EXTRA_PATH".into(),
                value: Spanned::bare(EnvValue::Prepend { prepend: v }),
            })
        },
        "path_format",
    ),
    (
        "flag name",
        |s, v| {
            s.serve.flags.push(FlagEntry {
                name: v.into(),
                value: None,
            })
        },
        "flag_format",
    ),
    (
        "derived_from",
        |s, v| s.provenance.derived_from = Some(v.into()),
        "name_format",
    ),
    (
        "recorded",
        |s, v| s.provenance.recorded = v.into(),
        "date_format",
    ),
    (
        "request_rate",
        |s, v| {
            if let Some(b) = &mut s.bench {
                b.request_rate = Some(v.into());
            }
        },
        "text_format",
    ),
    (
        "gpu_memory_utilization",
        |s, v| s.serve.gpu_memory_utilization = Some(v.into()),
        "gpu_memory_utilization",
    ),
    ("image", |s, v| s.image = v.into(), "unknown_image"),
    ("model", |s, v| s.model = v.into(), "unknown_model"),
    (
        "speculative method",
        |s, v| {
            if let Some(sp) = &mut s.serve.speculative {
                sp.method = v.into();
            }
        },
        "speculative_method_unknown",
    ),
];

proptest! {
    #![proptest_config(config(256))]

    /// Each plain field either passes check with a value the shell reads as
    /// one bare word (nothing to quote, so nothing to inject), or is rejected
    /// naming its rule.
    #[test]
    fn plain_fields_are_words_or_rejected(v in hostile(), which in 0..PLAIN_FIELDS.len()) {
        let (field, set, rule) = PLAIN_FIELDS[which];
        let mut s = spec(PD);
        set(&mut s, v.clone());
        match rules_of(&s) {
            Ok(()) => prop_assert_eq!(
                shell::quote(&v), v.clone(),
                "{} accepted {:?}, which needs quoting", field, v
            ),
            Err(rules) => prop_assert!(
                rules.contains(rule),
                "{} = {:?} rejected by {:?}, expected `{}`", field, v, rules, rule
            ),
        }
    }

    /// Control characters in any free-text field are rejected by
    /// `text_format`, whatever else the text holds.
    #[test]
    fn control_characters_are_rejected(v in with_control(), which in 0..TEXT_FIELDS) {
        let mut s = spec(PD);
        set_text(&mut s, which, v.clone());
        let rules = rules_of(&s).err().unwrap_or_default();
        prop_assert!(rules.contains("text_format"), "text field {} = {:?}: {:?}", which, v, rules);
    }
}
