//! The registry of per-layout artifacts: one row per file, naming its path,
//! when it applies, whether it is executable and how it renders from the
//! [`LayoutModel`]. Adding an artifact is one template under
//! `pd-dsl/templates/` plus one row here.

use super::RenderError;
use super::model::LayoutModel;
use super::scripts::{
    BenchSh, DockerSh, DpTemplateSh, HealthSh, PreflightSh, ProxySh, RunMixedSh, RunSh, StopSh,
    VerifySh,
};
use crate::Role;
use askama::Template;

/// Which layouts an artifact belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every layout.
    Always,
    /// PD layouts (prefill and decode engines, a proxy).
    Pd,
    /// Mixed layouts (no PD).
    Mixed,
}

impl When {
    /// Whether an artifact with this condition belongs to `m`.
    pub fn applies(self, m: &LayoutModel) -> bool {
        match self {
            When::Always => true,
            When::Pd => m.is_pd,
            When::Mixed => !m.is_pd,
        }
    }
}

/// How one file renders.
pub type RenderFn = fn(&LayoutModel) -> Result<String, RenderError>;

/// One per-layout artifact.
#[derive(Clone, Copy, Debug)]
pub struct ArtifactKind {
    /// File name inside the layout's directory.
    pub path: &'static str,
    /// Which layouts have it.
    pub when: When,
    /// Written with mode 0755.
    pub executable: bool,
    /// Renders it.
    pub render: RenderFn,
}

/// Every per-layout file, in the order the layout's other artifacts
/// (Kubernetes manifests, the HTML page) see them.
pub const ARTIFACTS: &[ArtifactKind] = &[
    doc("README.md", When::Always, |m| super::docs::readme(&m.docs)),
    doc("meta.yaml", When::Always, |m| {
        super::docs::meta_yaml_of(&m.docs.meta)
    }),
    row("run.sh", When::Always, |m| tpl(m, RunSh { m })),
    row("preflight.sh", When::Always, |m| tpl(m, PreflightSh { m })),
    row("verify.sh", When::Always, |m| tpl(m, VerifySh { m })),
    row("bench.sh", When::Always, |m| tpl(m, BenchSh { m })),
    row("docker.sh", When::Always, |m| tpl(m, DockerSh { m })),
    row("stop.sh", When::Always, |m| tpl(m, StopSh { m })),
    row("health.sh", When::Always, |m| tpl(m, HealthSh { m })),
    row("run_dp_template_prefill.sh", When::Pd, |m| {
        dp_template(m, Role::Prefill)
    }),
    row("run_dp_template_decode.sh", When::Pd, |m| {
        dp_template(m, Role::Decode)
    }),
    // A static file: upstream's launcher contract, not a template.
    row("launch_online_dp.py", When::Pd, |_| {
        Ok(super::launcher::launch_online_dp_py())
    }),
    row("proxy.sh", When::Pd, |m| tpl(m, ProxySh { m })),
    row("run_mixed.sh", When::Mixed, run_mixed),
];

/// A row for an executable file (every script is one).
const fn row(path: &'static str, when: When, render: RenderFn) -> ArtifactKind {
    ArtifactKind {
        path,
        when,
        executable: true,
        render,
    }
}

/// A row for a document (not executable).
const fn doc(path: &'static str, when: When, render: RenderFn) -> ArtifactKind {
    ArtifactKind {
        path,
        when,
        executable: false,
        render,
    }
}

/// Renders a template, naming the layout in any error.
fn tpl(m: &LayoutModel, t: impl Template) -> Result<String, RenderError> {
    let mut s = t.render().map_err(|e| error(m, e.to_string()))?;
    // Rendered catalogs are kept whole in memory: no growth slack.
    s.shrink_to_fit();
    Ok(s)
}

fn error(m: &LayoutModel, message: String) -> RenderError {
    RenderError::Layout {
        layout: m.name().to_owned(),
        message,
    }
}

fn dp_template(m: &LayoutModel, role: Role) -> Result<String, RenderError> {
    let r = m
        .role(role)
        .ok_or_else(|| error(m, format!("no serve settings for role `{role}`")))?;
    let kv_transfer_config = r
        .kv_transfer_config
        .as_deref()
        .ok_or_else(|| error(m, format!("no {role} engine")))?;
    tpl(
        m,
        DpTemplateSh {
            m,
            r,
            kv_transfer_config,
        },
    )
}

fn run_mixed(m: &LayoutModel) -> Result<String, RenderError> {
    let r = m
        .role(Role::Mixed)
        .ok_or_else(|| error(m, "no serve settings for role `mixed`".into()))?;
    let x = m
        .mixed
        .as_ref()
        .ok_or_else(|| error(m, "no mixed engine".into()))?;
    tpl(m, RunMixedSh { m, r, x })
}
