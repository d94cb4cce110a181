//! `cargo run --bin catalog`: see `layouts::cli` for commands and exit codes.
//!
//! Multi-call: invoked as `vllm`, `pd-proxy`, `npu-smi` or `hccn_tool` (a
//! symlink a rehearsal puts first on `PATH`), it is that stand-in
//! (`pd_rehearse::standin`), so a rehearsal needs no separate build step.

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os();
    if let Some(argv0) = args.next()
        && pd_rehearse::standin::dispatch(&argv0, args.map(|a| a.to_string_lossy().into_owned()))
    {
        return std::process::ExitCode::SUCCESS;
    }
    layouts::cli::main_with_guide(
        layouts::catalog().map(<[_]>::to_vec),
        Some(layouts::scenarios::scenario_guide()),
    )
}
