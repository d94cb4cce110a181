//! Author a layout with `layout!`, look at what was derived, and render it.
//!
//! ```sh
//! cargo run -p pd-dsl-examples --example author_and_render -- /tmp/demo-catalog
//! ```

use pd_dsl::layout;
use std::process::ExitCode;

fn main() -> ExitCode {
    // The compiler has already run every rule on this by the time it runs.
    let spec = layout! {
        /// Decode-heavy 1P3D for chat traffic (short prompts, long outputs).
        name: "demo/a3-1p3d",
        model: deepseek_v4_flash_w8a8_mtp,
        hardware: a3,
        image: "v0.21.0rc1",
        topology: <prefill 1 x dp4tp4; decode 3 x dp16tp1;>,
        connector: mooncake_hybrid { kv_port: { prefill: 36100, decode: 36200 } },
        ports: { api: 7100, dp_rpc: 12321 },
        proxy: { port: 1999 },
        serve: {
            expert_parallel: true,
            trust_remote_code: true,
            speculative: { method: mtp, tokens: 1, enforce_eager: true },
        },
        prefill: { max_num_batched_tokens: 8192, max_num_seqs: 16, graph: eager },
        decode: { max_num_batched_tokens: 120, max_num_seqs: 60, graph: full_decode_only },
        provenance: { recorded: "2026-06-30" },
        workload: "decode-heavy: short prompts, long outputs",
    };
    // The runtime runs the same rules again (for layouts built at run time
    // this is the only check).
    let layout = match pd_dsl::check(&spec) {
        Ok(l) => l,
        Err(d) => {
            eprintln!("{d}");
            return ExitCode::FAILURE;
        }
    };
    println!("{} {}", layout.name(), layout.topology_text());
    for node in &layout.placement.nodes {
        let engine = &layout.placement.engines[node.engine];
        println!(
            "node {}: {} engine {} (engine_id {:?}), DP ranks {}..{} of {}, devices per rank {}, master node {}",
            node.index,
            node.role,
            node.engine,
            engine.engine_id,
            node.dp_rank_start,
            node.dp_rank_start + node.dp_size_local,
            engine.dp,
            engine.tp,
            node.dp_master
        );
    }
    println!(
        "proxy: {} prefill + {} decode endpoints",
        layout.placement.proxy.prefill.len(),
        layout.placement.proxy.decode.len()
    );
    let Some(out) = std::env::args_os().nth(1) else {
        println!("pass a directory to render the scripts and docs into it");
        return ExitCode::SUCCESS;
    };
    let artifacts = match pd_dsl::render::render_layout(&layout) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("render: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = pd_dsl::render::write_catalog(std::path::Path::new(&out), &artifacts) {
        eprintln!("write: {e}");
        return ExitCode::FAILURE;
    }
    println!(
        "wrote {} files under {}",
        artifacts.len(),
        out.to_string_lossy()
    );
    ExitCode::SUCCESS
}
