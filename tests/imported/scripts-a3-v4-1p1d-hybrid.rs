// Written by `catalog import`; every value the input set is kept, every rule it
// breaks is acknowledged below, and what no rule covers is a `deviate`.

use pd_dsl::{LayoutSpec, layout};

/// The imported layout.
pub fn imported() -> LayoutSpec {
    layout! {
        /// Imported from `tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/launch.sh`, `tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/proxy.sh`, `tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/run_dp_template_decode.sh`, `tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/run_dp_template_prefill.sh`.
        name: "imported/a3-v4-1p1d-hybrid",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.30.0rc2",
        topology: <prefill 1 x dp4tp4; decode 1 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            max_model_len: 32768,
            expert_parallel: true,
            trust_remote_code: true,
            speculative: { method: mtp, tokens: 1, enforce_eager: true },
            env: {
                OMP_NUM_THREADS: "10",
                PYTORCH_NPU_ALLOC_CONF: "expandable_segments:True",
            },
        },
        prefill: {
            max_num_batched_tokens: 8192,
            max_num_seqs: 16,
            graph: eager,
            env: {
                HCCL_BUFFSIZE: "256",
            },
        },
        decode: {
            max_num_batched_tokens: 120,
            max_num_seqs: 60,
            graph: full_decode_only,
            env: {
                HCCL_BUFFSIZE: "1024",
            },
        },
        provenance: { recorded: "2026-10-13", sources: ["imported from tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/launch.sh", "imported from tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/proxy.sh", "imported from tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/run_dp_template_decode.sh", "imported from tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/run_dp_template_prefill.sh"] },
        deviate("the proxy lists 1 `--decoder-hosts` for 16 `--decoder-ports` (tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/proxy.sh:3)", "the proxy refuses to start unless every decoder has one host and one port; pd-dsl lists both for every rank"),
        deviate("no `--tokenizer-mode` (vLLM's default) (tests/fixtures/import/scripts/a3-v4-1p1d-hybrid/run_dp_template_prefill.sh:6)", "pd-dsl passes the model table's `--tokenizer-mode deepseek_v4` for `deepseek_v4_flash_w8a8_mtp`"),
    }
}
