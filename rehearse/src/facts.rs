//! The generated upstream fact tables, as the rehearsal reads them: the one
//! loader is `pd_dsl::upstream` (the vLLM tables embedded by pd-dsl-core's
//! `build.rs`, each vllm-ascend table by its `IMAGES` row). The rehearsal
//! takes from them what a real node's image would give: `vllm serve`'s flags
//! at the image's vLLM version ([`crate::serve_flags`]), the tools on a
//! non-interactive shell's `PATH`, the image's `ENV`, the `set_env.sh` files
//! a shell must source, and how the `vllm_ascend` package carries its
//! version.

pub use pd_dsl::upstream::{
    ImageFact, Release, ServeFlag, VllmRelease, image_key, vllm, vllm_versions,
};

/// The table of vllm-ascend `release` (with or without `v`), which must be
/// a row of the image table.
pub fn ascend_required(release: &str) -> Result<&'static Release, String> {
    let tag = format!("v{}", release.strip_prefix('v').unwrap_or(release));
    let img = pd_dsl::tables::image(&tag).ok_or_else(|| not_in_table(&tag))?;
    img.facts().ok_or_else(|| {
        format!(
            "the facts of image `{tag}` do not parse: {}",
            pd_dsl::upstream::errors().join("; ")
        )
    })
}

/// The vLLM version image `tag` ships (its release table's `vllm.version`).
pub fn vllm_version_of_image(tag: &str) -> Result<String, String> {
    Ok(ascend_required(tag)?.vllm.version.clone())
}

fn not_in_table(tag: &str) -> String {
    let known: Vec<&str> = pd_dsl::tables::IMAGES.iter().map(|i| i.tag).collect();
    format!(
        "image `{tag}` is not in the image table (expected one of {})",
        known.join(", ")
    )
}
