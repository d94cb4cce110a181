//! `cargo run --bin catalog`: see `layouts::cli` for commands and exit codes.

fn main() -> std::process::ExitCode {
    layouts::cli::main_with_guide(
        layouts::catalog().map(<[_]>::to_vec),
        Some(layouts::scenarios::scenario_guide()),
    )
}
