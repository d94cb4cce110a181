//! Check a layout kept in a YAML (or JSON) file with the same rules as
//! `layout!`, and print its node table.
//!
//! ```sh
//! cargo run -p pd-dsl-examples --example load_yaml -- examples/layouts/a3-1p1d.yaml
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: load_yaml FILE.yaml");
        return ExitCode::from(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    match pd_dsl::load::from_yaml(&path, &text) {
        Ok(layout) => {
            println!(
                "{}: {} on {} nodes",
                layout.name(),
                layout.topology_text(),
                layout.node_count()
            );
            for n in &layout.placement.nodes {
                let ports: Vec<String> = n
                    .ranks
                    .iter()
                    .filter_map(|r| r.api_port)
                    .map(|p| p.to_string())
                    .collect();
                println!(
                    "  node {} {} ranks {}+{} api {}",
                    n.index,
                    n.role,
                    n.dp_rank_start,
                    n.dp_size_local,
                    ports.join(",")
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
