//! a workload of 100 concurrent requests on ranks that run 8 sequences each
use pd_dsl::layout;

fn main() {
    let _spec = layout! {
        name: "demo/a3-mixed",
        model: minimax_m2_7_w8a8_quarot,
        hardware: a3,
        image: "v0.23.0",
        topology: <mixed 1 x dp4tp4>,
        ports: { api: 8000 },
        provenance: { recorded: "2026-08-20" },
        serve: { expert_parallel: true },
        mixed: { max_num_seqs: 8, max_model_len: 32768 },
        bench: { input_len: 1000, output_len: 1000, num_prompts: 100, max_concurrency: 100 },
    };
}
