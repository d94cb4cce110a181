//! Context parallelism: prefill context parallelism (PCP) from the topology and decode context parallelism (DCP) from `--decode-context-parallel-size`, against what vLLM's `ParallelConfig` and vllm-ascend's platform refuse at start, from the generated facts.

use super::features::{flag_site, v2_runner_on};
use super::serve::Facts;
use super::settings::PCP_FLAG;
use crate::capacity;
use crate::check::Cx;
use crate::layout::Serve;
use crate::rules::Rule;
use crate::site::Site;
use crate::spec::Role;

declare_rules! {
    /// A PD engine with context parallelism (PCP from the topology, DCP from
    /// `--decode-context-parallel-size`) whose `--cp-kv-cache-interleave-size`
    /// (vLLM's default 1) is not its block size (128 unless set): vllm-ascend
    /// asserts they are equal (platform.py `check_and_update_config`
    /// @v0.18.0 L484, @v0.23.0 L743; DCP only from v0.28.0rc1, @v0.30.0rc2
    /// L1408). Which sizes count is the generated facts'
    /// `cp_interleave_refusal`.
    CpInterleaveMatchesBlock = "cp_interleave_matches_block", Hard, "a PD engine with context parallelism interleaves its KV cache by its block size";
    /// `pcp<N>` above 1 where the image refuses it: vllm-ascend's
    /// `_validate_parallel_config` (platform.py) refuses PCP with DP above 1
    /// at 0.21.0rc1 to 0.24.0rc1, and on the V1 model runner from 0.25.1rc1;
    /// vLLM's V2 runner, on with env `VLLM_USE_V2_MODEL_RUNNER`, refuses PCP
    /// from 0.20.2 to 0.28.0 (vllm/config/vllm.py `_validate_v2_model_runner`
    /// @0.20.2 L1804, `_get_v2_model_runner_unsupported_features` @0.24.0),
    /// at DP1 too, except where vllm-ascend's patch allows it (0.28.0rc1);
    /// vLLM's `ParallelConfig`
    /// refuses PCP with DP above 1 at 0.26.0 to 0.29.0 ("PCP does not support
    /// data parallelism yet", vllm/config/parallel.py
    /// `_validate_parallel_config` @v0.28.0 L527), which vllm-ascend
    /// 0.29.0rc1 patches out for vLLM 0.29.0
    /// (patch/platform/patch_parallel_config.py L116). Read from the
    /// generated facts (`pcp_refusals`, `v2_runner_allows`, `v2_model_runner`,
    /// `context_parallel`, `parallel_config_patches`).
    PrefillContextParallelSupported = "prefill_context_parallel_supported", Hard, "PCP only where the image's vllm-ascend and vLLM start it";
    /// `--decode-context-parallel-size` that vLLM's `ParallelConfig`
    /// refuses at start (vllm/config/parallel.py `_validate_parallel_config`,
    /// @v0.18.0 L416, @v0.26.0 L512-L514, @v0.30.0 L563-L565): without PCP
    /// it must divide TP (DCP reuses the TP ranks); from vLLM 0.26.0, with
    /// PCP above 1 it must be 1, the PCP size or TP x PCP. Read from the
    /// generated facts (`context_parallel`).
    DcpFitsTp = "dcp_fits_tp", Hard, "the decode context parallel size divides TP (with PCP: is 1, PCP or TP x PCP)";
}

/// `--cp-kv-cache-interleave-size` against the block size on a PD engine
/// with context parallelism (rule `cp_interleave_matches_block`).
pub(crate) fn check_cp_interleave(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    pcp: u32,
    cx: &mut Cx,
) {
    const INTERLEAVE_FLAG: &str = "--cp-kv-cache-interleave-size";
    if !facts.pd {
        return;
    }
    let Some(img) = facts.image else {
        return;
    };
    let Some(r) = img.facts().and_then(|r| r.cp_interleave_refusal.as_ref()) else {
        return;
    };
    let reads = |n: &str| r.reads.iter().any(|x| x == n);
    let dcp = capacity::flag_u64(serve, DCP_FLAG).unwrap_or(1);
    let why = if pcp > 1 && reads("prefill_context_parallel_size") {
        format!("pcp{pcp}")
    } else if dcp > 1 && reads("decode_context_parallel_size") {
        format!("`{DCP_FLAG} {dcp}`")
    } else {
        return;
    };
    // vLLM's defaults: interleave 1 (`ParallelConfig.cp_kv_cache_interleave_size`,
    // vllm/config/parallel.py), block 128 (vllm-ascend `refresh_block_size`).
    let interleave = capacity::flag_u64(serve, INTERLEAVE_FLAG).unwrap_or(1);
    let block = serve.block_size.unwrap_or(capacity::DEFAULT_BLOCK_SIZE);
    if interleave == block {
        return;
    }
    let spec = facts.spec;
    let site = flag_site(spec, role, INTERLEAVE_FLAG, true)
        .or_else(|| {
            spec.topology
                .iter()
                .find(|g| g.role.value == role)
                .map(|g| g.pcp.as_ref().map_or(g.shape_site, |p| p.site))
        })
        .unwrap_or(Site::NONE);
    cx.report(
        Rule::CpInterleaveMatchesBlock,
        site,
        format!("{role}.flags"),
        format!(
            "found a {role} engine of a PD layout with {why} and {}, expected `{INTERLEAVE_FLAG} {block}` (its block size): vllm-ascend asserts they are equal at start on image `{}` ({})",
            if capacity::flag_u64(serve, INTERLEAVE_FLAG).is_some() {
                format!("`{INTERLEAVE_FLAG} {interleave}`")
            } else {
                format!("no `{INTERLEAVE_FLAG}` (vLLM's default 1)")
            },
            img.tag,
            r.source
        ),
    );
}

/// A role whose topology says `pcp<N>` above 1 (rule
/// `prefill_context_parallel_supported`), and the PCP flag it renders.
pub(crate) fn check_pcp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    dp: u32,
    pcp: u32,
    cx: &mut Cx,
) {
    let spec = facts.spec;
    let Some(g) = spec.topology.iter().find(|g| g.role.value == role) else {
        return;
    };
    let site = g.pcp.as_ref().map_or(g.shape_site, |p| p.site);
    let field = "topology.pcp";
    if serve.flags.iter().any(|(name, _)| name == PCP_FLAG) {
        let at = flag_site(spec, role, PCP_FLAG, false).unwrap_or(site);
        cx.report(
            Rule::DerivedSetting,
            at,
            format!("{role}.flags"),
            format!("found flag `{PCP_FLAG}` on a {role} engine of `{}`, expected it left out: it is rendered from the topology's `pcp{pcp}`", g.shape()),
        );
    }
    let Some(img) = facts.image else {
        return;
    };
    let Some(rel) = img.facts() else {
        return;
    };
    let v2 = v2_runner_on(serve);
    let vllm = img.vllm();
    let dcp = capacity::flag_u64(serve, DCP_FLAG).unwrap_or(1);
    let message = match crate::upstream::pcp_verdict(rel, vllm, dp, pcp, dcp, v2) {
        None => return,
        Some(crate::upstream::PcpVerdict::VllmWithDp { source }) => format!(
            "found `{}` (PCP{pcp} with DP{dp}) on image {}, expected DP1 with PCP: vLLM {vllm} refuses PCP and DP together at start-up (\"PCP does not support data parallelism yet.\", {source}), and vllm-ascend {} does not patch that out for this layout",
            g.shape(),
            img.tag,
            rel.version
        ),
        Some(crate::upstream::PcpVerdict::WithDp(r)) => format!(
            "found `{}` (PCP{pcp} with DP{dp}) on image {}, expected DP1 with PCP: vllm-ascend {} refuses PCP and DP together at start-up ({} `{}`)",
            g.shape(),
            img.tag,
            rel.version,
            r.source,
            r.condition
        ),
        Some(crate::upstream::PcpVerdict::V1Runner(r)) => format!(
            "found `{}` on a {role} engine without env `VLLM_USE_V2_MODEL_RUNNER=1` on image {}, expected both: vllm-ascend {} refuses PCP on the V1 model runner ({} `{}`), and on Ascend only that env selects the V2 runner",
            g.shape(),
            img.tag,
            rel.version,
            r.source,
            r.condition
        ),
        Some(crate::upstream::PcpVerdict::V2Runner { v1: None, runner }) => format!(
            "found `{}` on a {role} engine running vLLM's V2 model runner (env `VLLM_USE_V2_MODEL_RUNNER`) on image {}, expected PCP1, or the V1 model runner (no `VLLM_USE_V2_MODEL_RUNNER`), which vllm-ascend {} runs PCP on: vLLM {vllm}'s V2 model runner refuses it at start (\"{}\", {})",
            g.shape(),
            img.tag,
            rel.version,
            runner.refusal_text([crate::upstream::PCP_FEATURE]),
            runner.refusal_source
        ),
        Some(crate::upstream::PcpVerdict::V2Runner {
            v1: Some(v1),
            runner,
        }) => format!(
            "found `{}` on image {}, expected PCP1: vLLM {vllm}'s V2 model runner refuses it (\"{}\", {}) and vllm-ascend {} refuses PCP on the V1 runner ({}), so no PCP starts on this image",
            g.shape(),
            img.tag,
            runner.refusal_text([crate::upstream::PCP_FEATURE]),
            runner.refusal_source,
            rel.version,
            v1.source
        ),
    };
    cx.report(Rule::PrefillContextParallelSupported, site, field, message);
}

/// The flag that sets decode context parallelism (vLLM's
/// `ParallelConfig.decode_context_parallel_size`).
const DCP_FLAG: &str = "--decode-context-parallel-size";

/// `--decode-context-parallel-size` against the role's TP and PCP (rule
/// `dcp_fits_tp`), as vLLM's `ParallelConfig` checks it at start.
pub(crate) fn check_dcp(
    facts: &Facts<'_>,
    role: Role,
    serve: &Serve,
    tp: u32,
    pcp: u32,
    cx: &mut Cx,
) {
    let Some(dcp) = capacity::flag_u64(serve, DCP_FLAG) else {
        return;
    };
    let Some(img) = facts.image else {
        return;
    };
    let vllm = img.vllm();
    let Some(r) = crate::upstream::dcp_refusal(vllm, u64::from(tp), u64::from(pcp), dcp) else {
        return;
    };
    let (expected, source) = match &r.valid_with_pcp {
        Some(valid) => (
            format!(
                "one of {} with PCP{pcp} (off, across PCP, or across TP x PCP)",
                valid
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            r.source,
        ),
        None => (
            format!("a divisor of TP {tp} (DCP splits each TP group's ranks)"),
            r.source,
        ),
    };
    let site = flag_site(facts.spec, role, DCP_FLAG, true).unwrap_or(Site::NONE);
    cx.report(
        Rule::DcpFitsTp,
        site,
        format!("{role}.flags"),
        format!(
            "found `{DCP_FLAG} {dcp}` on a {role} engine of TP {tp}, expected {expected}: vLLM {vllm} refuses it at start-up ({source} `_validate_parallel_config`)"
        ),
    );
}
