//! The generated shell scripts: one askama template each under
//! `pd-dsl/templates/sh/`, reading only the [`LayoutModel`]. Every
//! `{{ value }}` in them is quoted by [`shell::quote`](super::shell::quote)
//! (the `.sh` escaper registered in `pd-dsl/askama.toml`).

use super::filters;
use super::model::{LayoutModel, MixedModel, RoleModel};
use askama::Template;

pub use super::model::{DEFAULT_WAIT_SECONDS, PROXY_DIR, node_ports};

/// `run.sh`: the per-node entry point.
#[derive(Debug, Template)]
#[template(path = "sh/run.sh")]
pub struct RunSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `preflight.sh NODE_INDEX`: fails fast naming every problem found.
#[derive(Debug, Template)]
#[template(path = "sh/preflight.sh")]
pub struct PreflightSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `verify.sh [HOST]`: one chat completion through the proxy / API port.
#[derive(Debug, Template)]
#[template(path = "sh/verify.sh")]
pub struct VerifySh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `bench.sh [HOST] [extra vllm bench args...]`: the layout's workload.
#[derive(Debug, Template)]
#[template(path = "sh/bench.sh")]
pub struct BenchSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `docker.sh`: the container for one node of this layout's hardware.
#[derive(Debug, Template)]
#[template(path = "sh/docker.sh")]
pub struct DockerSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `proxy.sh`: the image's proxy with the derived backend lists (PD).
#[derive(Debug, Template)]
#[template(path = "sh/proxy.sh")]
pub struct ProxySh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `stop.sh [NODE_INDEX]`: stops this node's ranks (and proxy) by the
/// records `run.sh` and the launcher keep, then checks the ports are free.
#[derive(Debug, Template)]
#[template(path = "sh/stop.sh")]
pub struct StopSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

/// `run_dp_template_<role>.sh`: one rank, upstream's 7-argument contract.
#[derive(Debug, Template)]
#[template(path = "sh/run_dp_template.sh")]
pub struct DpTemplateSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
    /// The role's serve settings.
    pub r: &'a RoleModel,
    /// The role's `--kv-transfer-config` with run-time placeholders.
    pub kv_transfer_config: &'a str,
}

/// `run_mixed.sh`: this node's share of a mixed engine with native DP.
#[derive(Debug, Template)]
#[template(path = "sh/run_mixed.sh")]
pub struct RunMixedSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
    /// The mixed role's serve settings.
    pub r: &'a RoleModel,
    /// The mixed engine.
    pub x: &'a MixedModel,
}

/// `health.sh PORT...`: every given API port of this host answers
/// `/health` (through `http_request`, as `run.sh` polls); the Kubernetes
/// probes run it.
#[derive(Debug, Template)]
#[template(path = "sh/health.sh")]
pub struct HealthSh<'a> {
    /// The layout.
    pub m: &'a LayoutModel,
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use std::path::Path;

    /// In a shell template every `{{ value }}` is quoted by the escaper;
    /// the only ways around it are the named filters of `render::filters`.
    /// `|safe` or a switched-off escaper would put layout text into a
    /// script unquoted, so no template may use them.
    #[test]
    fn no_shell_template_bypasses_the_quoting_escaper() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/sh");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("templates/sh is listed") {
            let path = entry.expect("a directory entry").path();
            let text = std::fs::read_to_string(&path).expect("a template is text");
            seen += 1;
            for banned in ["|safe", "| safe", "escape(", "|e(", "autoescape"] {
                assert!(
                    !text.contains(banned),
                    "{} uses `{banned}`: values must reach a script through the quoting escaper or a named filter",
                    path.display()
                );
            }
        }
        assert!(
            seen >= 10,
            "found only {seen} templates in {}",
            dir.display()
        );
    }
}
