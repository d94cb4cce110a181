//! `vllm serve` flags as the build reads them: the spellings it normalises,
//! the flags and env pd-dsl derives per rank, and literal numbers.

use super::{Fail, P, p};

/// The PCP option; a size above 1 becomes the topology's `pcp<N>`.
pub(super) const PCP_FLAG: &str = pd_dsl_core::check::PCP_FLAG;

/// Flags pd-dsl derives per rank; front ends consume them into node facts.
pub(crate) const RANK_FLAGS: &[&str] = &[
    "--host",
    "--port",
    "--data-parallel-size",
    "--data-parallel-rank",
    "--data-parallel-address",
    "--data-parallel-rpc-port",
    "--data-parallel-size-local",
    "--data-parallel-start-rank",
    "--tensor-parallel-size",
    "--headless",
];

/// vLLM's `--data-parallel-rpc-port` default (vllm `vllm/config/parallel.py`,
/// `data_parallel_rpc_port`: 29550 in every vLLM of the corpus, 0.18.0 to
/// 0.30.0).
pub(super) const VLLM_DP_RPC_PORT: u64 = 29550;

/// Env run.sh derives per node or rank, and harness-internal variables
/// of the upstream e2e runner (`SERVER_PORT` is its port placeholder).
pub(super) const DERIVED_ENV: &[&str] = &[
    "ASCEND_RT_VISIBLE_DEVICES",
    "HCCL_IF_IP",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "HCCL_SOCKET_IFNAME",
    "ENGINE_ID",
    "KV_PORT",
    "SERVER_PORT",
];

/// Splits `--flag=value` and normalises `--flag_name` to `--flag-name`
/// (vLLM's argparse accepts both; one spelling lets rules see duplicates).
pub(crate) fn normalise_flag(raw: &str) -> (String, Option<String>) {
    let (name, value) = match raw.split_once('=') {
        Some((n, v)) => (n, Some(v.to_owned())),
        None => (raw, None),
    };
    // A dotted key into a JSON option (`--attention-config.indexer_kv_dtype`)
    // is passed as written: only the flag before the first `.` is spelled.
    let (flag, keys) = match name.split_once('.') {
        Some((f, k)) => (f, format!(".{k}")),
        None => (name, String::new()),
    };
    // A short alias (`-tp 8`, `-pcp 2`) is the long flag vLLM defines it for.
    if !flag.starts_with("--")
        && let Some(long) = pd_dsl_core::upstream::long_name_of_alias(flag)
    {
        return (format!("--{long}{keys}"), value);
    }
    (
        format!("--{}{keys}", flag.trim_start_matches('-').replace('_', "-")),
        value,
    )
}

/// Whether a flag takes no value.
pub(crate) fn is_switch(flag: &str) -> bool {
    matches!(
        flag,
        "--headless"
            | "--enable-expert-parallel"
            | "--trust-remote-code"
            | "--enforce-eager"
            | "--no-enable-prefix-caching"
            | "--enable-prefix-caching"
            | "--async-scheduling"
            | "--disable-log-stats"
            | "--disable-log-requests"
            | "--enable-chunked-prefill"
            | "--no-enable-chunked-prefill"
            | "--enable-auto-tool-choice"
            | "--disable-uvicorn-access-log"
    )
}

/// Parses a number the input wrote, pointing at it when it is not one.
pub(crate) fn number(v: &P<String>, what: &str) -> Result<P<u64>, Fail> {
    v.v.trim()
        .parse::<u64>()
        .map(|n| p(n, v.at))
        .map_err(|_| {
            (
                v.at,
                format!(
                    "found `{}` for {what}, expected a whole number: the importer follows literal values only",
                    v.v
                ),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::normalise_flag;

    /// Short aliases read as the long flag vLLM's argument table defines
    /// them for (the embedded facts), so `-tp 8` sets the TP size and
    /// `-pcp 2` meets rule `parallel_groups_expressible`; other spellings
    /// keep their normalisation.
    #[test]
    fn short_aliases_are_vllm_s_long_flags() {
        let long = |raw: &str| normalise_flag(raw).0;
        assert_eq!(long("-tp"), "--tensor-parallel-size");
        assert_eq!(long("-dp"), "--data-parallel-size");
        assert_eq!(long("-pcp"), "--prefill-context-parallel-size");
        assert_eq!(long("-pp"), "--pipeline-parallel-size");
        assert_eq!(
            normalise_flag("-tp=4"),
            ("--tensor-parallel-size".to_owned(), Some("4".to_owned()))
        );
        assert_eq!(long("--max_model_len"), "--max-model-len");
        assert_eq!(long("-not-an-alias"), "--not-an-alias");
    }
}
