//! `additional_config` keys and env variables per image: what each release reads, renamed or ignores.

use super::*;

// ---------------------------------------------------------------------------
// additional_config keys per version: the generated facts (`additional_config`)
// ---------------------------------------------------------------------------

/// Keys renamed or split (the old and the new names); a key an image does not
/// read gets its counterpart as a hint when that image reads it
/// (`enable_sparse_c8` is read @v0.18.0 to @v0.22.1rc1, @v0.24.0rc1 and
/// @v0.25.1rc1; `enable_sparse_sfa_c8` and `enable_sparse_li_c8` @v0.23.0rc1,
/// @v0.23.0 and from @v0.26.0rc1: the release branches; ascend_config.py).
pub const KEY_RENAMES: &[(&str, &str)] = &[
    ("enable_sparse_c8", "enable_sparse_sfa_c8"),
    ("enable_sparse_c8", "enable_sparse_li_c8"),
];

/// Why `image` ignores top-level `additional_config` key `key`, or `None`
/// when it reads it. Everything in the answer is computed from the facts:
/// the images that read the key, and what this image reads instead (the same
/// key nested under another one, a renamed key, the environment variable it
/// replaced).
pub fn config_key_ignored(key: &str, image: &Image) -> Option<String> {
    if image.reads_config_key(key) {
        return None;
    }
    let readers = crate::upstream::config_key_readers(key);
    let mut why = if readers.is_empty() {
        "no image of the table reads it".to_owned()
    } else {
        format!("it is read by {}", crate::upstream::describe(&readers))
    };
    if let Some(r) = image.facts() {
        let nested: Vec<String> = r
            .additional_config
            .iter()
            .filter(|k| {
                k.sub_keys
                    .as_ref()
                    .is_some_and(|s| s.iter().any(|s| s == key))
            })
            .map(|k| format!("`{}.{key}`", k.key))
            .collect();
        if !nested.is_empty() {
            why.push_str(&format!("; this image reads {}", nested.join(" and ")));
        }
        let renamed: Vec<String> = KEY_RENAMES
            .iter()
            .filter_map(|&(a, b)| match key {
                k if k == a => Some(b),
                k if k == b => Some(a),
                _ => None,
            })
            .filter(|k| r.config_key(k).is_some())
            .map(|k| format!("`{k}`"))
            .collect();
        if !renamed.is_empty() {
            why.push_str(&format!(
                "; this image reads {} instead",
                renamed.join(" and ")
            ));
        }
        // #9064 moved env variables to keys (the facts' `env_migration`).
        if let Some((_, env)) = crate::upstream::env_migration()
            .into_iter()
            .find(|(k, _)| *k == key)
            && r.reads_env(env)
        {
            why.push_str(&format!("; this image reads env `{env}` instead"));
        }
    }
    Some(why)
}

/// The `eplb_config` sub-keys `image` accepts: `EplbConfig` in
/// vllm_ascend/ascend_config.py raises `ValueError("Config has no attribute
/// ...")` for any other key at every tag (@v0.18.0 L367-391, @v0.23.0
/// L831-856); the list is the `sub_keys` of `eplb_config` in the facts
/// (`strict` there).
pub fn eplb_config_keys(image: &Image) -> Vec<&'static str> {
    image
        .facts()
        .and_then(|r| r.config_key("eplb_config"))
        .and_then(|k| k.sub_keys.as_ref())
        .map_or_else(Vec::new, |s| s.iter().map(String::as_str).collect())
}

/// The images whose `eplb_config` accepts sub-key `key`, for the message.
pub fn eplb_config_key_readers(key: &str) -> Vec<&'static Image> {
    IMAGES
        .iter()
        .filter(|img| eplb_config_keys(img).contains(&key))
        .collect()
}

/// Block sizes vllm-ascend keeps for DeepSeek-V4 on `image`; any other value
/// is replaced with a warning. `refresh_block_size` in vllm_ascend/utils.py:
/// v0.20.2rc1 forces 128 (L1319-1321); from v0.21.0rc1 it keeps 32, 64 or 128
/// and rewrites anything else to 32 (@v0.21.0rc1 L1263-1270, @v0.25.1rc1
/// L1245-1253, @v0.27.1rc1 L1201-1209, the same to @v0.30.0rc2). Before
/// v0.20.2rc1 there is no V4 branch and the generic 128 rule applies.
pub fn dsv4_block_sizes(image: &str) -> &'static [u64] {
    match image {
        "v0.18.0" | "v0.19.1rc1" | "v0.20.2rc1" => &[128],
        _ => &[32, 64, 128],
    }
}

/// An `additional_config` key only some attention backends read; on other
/// models it is silently ignored.
#[derive(Debug)]
pub struct AttentionKey {
    /// Key name.
    pub name: &'static str,
    /// Attention kinds whose backend reads it.
    pub attention: &'static [Attention],
    /// Where it is read.
    pub source: &'static str,
}

/// Keys read only by some attention backends (`enable_kv_nz` is a hard
/// error elsewhere and has its own rule).
pub static ATTENTION_CONFIG_KEYS: &[AttentionKey] = &[
    AttentionKey {
        name: "enable_mlapo",
        attention: &[Attention::Mla, Attention::DsaSparse],
        source: "only the MLA and SFA backends read it (attention/mla_v1.py and attention/sfa_v1.py at every release, e.g. L910 and L898 at v0.30.0rc2)",
    },
    // `... and use_sparse` (ascend_config.py @v0.21.0rc1 L256, @v0.23.0
    // L280-281, @v0.25.1rc1 L241, @v0.30.0rc2 L920-921); V4 counted as
    // sparse up to v0.22.1rc1 (`hasattr(index_topk)`, @v0.21.0rc1 L232-236),
    // so it is not flagged for V4. Which images read which of the keys is
    // the facts' business (`unknown_additional_config_key`).
    AttentionKey {
        name: "enable_sparse_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L256 at v0.21.0rc1, L241 at v0.25.1rc1)",
    },
    AttentionKey {
        name: "enable_sparse_sfa_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L280 at v0.23.0, L920 at v0.30.0rc2)",
    },
    AttentionKey {
        name: "enable_sparse_li_c8",
        attention: &[Attention::DsaSparse, Attention::V4Hybrid],
        source: "it is ANDed with sparse attention (ascend_config.py `use_sparse`, L281 at v0.23.0, L921 at v0.30.0rc2)",
    },
];

/// Looks a top-level `additional_config` key up: whether any image of the
/// table reads it (the facts' `additional_config`).
pub fn config_key_known(name: &str) -> bool {
    crate::upstream::known_config_keys().contains(&name)
}

/// A reader of environment variables that is not vllm-ascend but runs in
/// every image of the table: a variable it reads is not dead even though the
/// generated `env` table (vllm-ascend's own reads) lacks it. This cannot come
/// from the vllm-ascend sdist; each entry cites the reader's source and the
/// build checked.
#[derive(Debug)]
pub struct OtherReader {
    /// Variable name.
    pub name: &'static str,
    /// Who reads it.
    pub reader: &'static str,
    /// Where.
    pub source: &'static str,
}

/// Variables read by CANN-side libraries or Mooncake in every image.
pub static OTHER_ENV_READERS: &[OtherReader] = &[
    // torch_npu is pinned by every release's requirements.txt (2.9.0 at
    // v0.18.0 … 2.10.0.post4 at v0.30.0rc2); `libtorch_npu.so` of the
    // torch-npu 2.9.0 and 2.10.0.post4 wheels holds the read and its warning.
    OtherReader {
        name: "ACL_OP_INIT_MODE",
        reader: "torch_npu (the ACL op init mode, 0/1/2)",
        source: "Ascend/pytorch torch_npu/csrc/core/npu/register/OptionsManager.cpp `GetAclOpInitMode`",
    },
    // Mooncake's ADXL transport, at every MOONCAKE_TAG the images install.
    OtherReader {
        name: "ASCEND_BUFFER_POOL",
        reader: "Mooncake's Ascend direct transport (buffer pool mode)",
        source: "kvcache-ai/Mooncake mooncake-transfer-engine/src/transport/ascend_transport/ascend_direct_transport/ascend_direct_transport.cpp @v0.3.8.post1 L237, @v0.3.9 L259; transfer_executor_base.cpp @v0.3.11.post1 L105-108",
    },
];

/// Variables upstream configs export that nothing in the images reads.
/// Checked against vllm-ascend (the generated `env` tables, every release),
/// torch_npu (`libtorch_npu.so` of torch-npu 2.9.0 and 2.10.0.post4) and
/// Mooncake (source at v0.3.8.post1, v0.3.9 and v0.3.11.post1, and the
/// mooncake-transfer-engine-npu 0.3.11.post1 wheel's libraries).
pub static UNREAD_ENV: &[(&str, &str)] = &[
    (
        "ASCEND_A3_ENABLE",
        "nothing in the image reads it: not vllm-ascend, not torch_npu, and not the Mooncake it installs (kvcache-ai/Mooncake v0.3.8.post1, v0.3.9, v0.3.11.post1)",
    ),
    (
        "USE_MULTI_BLOCK_POOL",
        "not an env var: it was a Python constant, removed in v0.14.0rc1",
    ),
    (
        "USE_MULTI_GROUPS_KV_CACHE",
        "not an env var: a Python constant in patch_kv_cache_coordinator.py",
    ),
];

/// The upper-case name something in `image` reads, when `name` is a
/// lowercase spelling of it (the case [`dead_env`] reports as "names are
/// case-sensitive").
pub fn upper_spelling_read(name: &str, image: &Image) -> Option<String> {
    // The namespaces of CANN, HCCL, torch(_npu), OpenMP, Mooncake and vLLM
    // spell every variable upper-case.
    const UPPER_ONLY: &[&str] = &[
        "VLLM_",
        "ASCEND_",
        "HCCL_",
        "ACL_",
        "PYTORCH_",
        "TORCH_",
        "OMP_",
        "MOONCAKE_",
        "GLOO_",
        "TASK_QUEUE_",
    ];
    let upper = name.to_ascii_uppercase();
    let read = image.reads_env(&upper) || OTHER_ENV_READERS.iter().any(|r| r.name == upper);
    (upper != name
        && (read
            || UNREAD_ENV.iter().any(|(n, _)| *n == upper)
            || UPPER_ONLY.iter().any(|p| upper.starts_with(p))))
    .then_some(upper)
}

/// Why `name` does nothing on `image`, or `None` when something in the image
/// reads it or it is not ours to judge. A `VLLM_ASCEND_*` variable is
/// vllm-ascend's own: dead on an image whose generated `env` table lacks it
/// (the answer names the images that read it). Other names are dead only when
/// [`UNREAD_ENV`] lists them and no [`OTHER_ENV_READERS`] entry reads them.
pub fn dead_env(name: &str, image: &Image) -> Option<String> {
    let read = |n: &str| image.reads_env(n) || OTHER_ENV_READERS.iter().any(|r| r.name == n);
    if read(name) {
        return None;
    }
    if name.bytes().any(|b| b.is_ascii_lowercase()) {
        return upper_spelling_read(name, image).map(|upper| {
            format!("environment names are case-sensitive and what reads this one reads `{upper}`")
        });
    }
    if name.starts_with("VLLM_ASCEND_") {
        let readers: Vec<&Image> = IMAGES.iter().filter(|i| i.reads_env(name)).collect();
        let mut why = if readers.is_empty() {
            "vllm-ascend reads no such variable at any image of the table".to_owned()
        } else {
            format!(
                "vllm-ascend reads it only at {}",
                crate::upstream::describe(&readers)
            )
        };
        if let Some((key, _)) = crate::upstream::env_migration()
            .into_iter()
            .find(|(_, e)| *e == name)
            && image.reads_config_key(key)
        {
            why.push_str(&format!("; use `additional_config.{key}`"));
        }
        return Some(why);
    }
    UNREAD_ENV
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| (*why).to_owned())
}

/// The `speculative_config.method` values the vLLM of `image` accepts: the
/// `SpeculativeMethod` Literal of vllm/config/speculative.py at that vLLM
/// (`speculative_methods` of the vLLM facts), sorted; every MTP model type
/// (`deepseek_mtp`, ...) is among them, rewritten to `mtp` upstream. With no
/// image (an unknown tag, reported on its own), every method some image's
/// vLLM accepts.
pub fn speculative_methods(image: Option<&Image>) -> Vec<&'static str> {
    let releases: Vec<&'static crate::upstream::VllmRelease> = match image {
        Some(img) => crate::upstream::vllm_of(img).into_iter().collect(),
        None => IMAGES
            .iter()
            .filter_map(|i| crate::upstream::vllm_of(i).ok())
            .collect(),
    };
    let mut out: Vec<&'static str> = releases
        .iter()
        .flat_map(|r| r.speculative_methods.iter().map(|m| m.name.as_str()))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
