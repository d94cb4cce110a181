//! An engine pod's volumes and mounts: scripts, `/dev/shm`, driver tools,
//! host paths, device nodes, weights and logs.

use crate::Layout;
use crate::render::k8s::settings::{K8sSettings, LogsVolume, WeightsVolume};
use crate::render::k8s::{DRIVER_TOOLS, SCRIPTS_DIR};
use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, EmptyDirVolumeSource, HostPathVolumeSource,
    PersistentVolumeClaimVolumeSource, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

fn mount(name: &str, path: &str, read_only: bool) -> VolumeMount {
    VolumeMount {
        name: name.to_owned(),
        mount_path: path.to_owned(),
        read_only: read_only.then_some(true),
        ..VolumeMount::default()
    }
}

pub(super) fn scripts_volume(base: &str) -> (Volume, VolumeMount) {
    (
        Volume {
            name: "scripts".to_owned(),
            config_map: Some(ConfigMapVolumeSource {
                name: format!("{base}-scripts"),
                // The scripts call each other directly (`"$HERE/preflight.sh"`).
                default_mode: Some(0o755),
                ..ConfigMapVolumeSource::default()
            }),
            ..Volume::default()
        },
        mount("scripts", SCRIPTS_DIR, true),
    )
}

fn host_path_volume(name: &str, path: &str) -> Volume {
    Volume {
        name: name.to_owned(),
        host_path: Some(HostPathVolumeSource {
            path: path.to_owned(),
            ..HostPathVolumeSource::default()
        }),
        ..Volume::default()
    }
}

/// The volumes and mounts of an engine pod: scripts, `/dev/shm` in memory,
/// the driver tools and every host path the hardware's docker command mounts
/// (read-only), and the weights at the model path.
/// Where the rank logs are mounted: `run.sh`'s `PD_LOG_DIR` default
/// (`/var/log/pd-dsl/<layout>/node<i>/`) lies under it.
pub const LOGS_DIR: &str = "/var/log/pd-dsl";

/// Device nodes of the hardware that the Ascend device plugin does not hand
/// out with an NPU (it mounts `/dev/davinciN`, `davinci_manager`,
/// `devmm_svm` and `hisi_hdc`): on 950DT `/dev/ummu` and `/dev/uburma`,
/// which `docker.sh` passes with `--device`.
pub fn extra_device_nodes(layout: &Layout) -> Vec<&'static str> {
    let plugin = crate::tables::ATLAS_800_DEVICES;
    layout
        .hardware
        .extra_devices
        .iter()
        .copied()
        .filter(|d| !plugin.contains(d))
        .collect()
}

pub(super) fn engine_volumes(
    layout: &Layout,
    base: &str,
    settings: &K8sSettings,
    shm: &str,
) -> (Vec<Volume>, Vec<VolumeMount>) {
    let (scripts, scripts_mount) = scripts_volume(base);
    let logs = match &settings.logs {
        LogsVolume::HostPath(p) => Volume {
            name: "logs".to_owned(),
            host_path: Some(HostPathVolumeSource {
                path: p.clone(),
                type_: Some("DirectoryOrCreate".to_owned()),
            }),
            ..Volume::default()
        },
        LogsVolume::Pvc(claim) => Volume {
            name: "logs".to_owned(),
            persistent_volume_claim: Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.clone(),
                read_only: None,
            }),
            ..Volume::default()
        },
        LogsVolume::Pod => Volume {
            name: "logs".to_owned(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Volume::default()
        },
    };
    let mut volumes = vec![
        scripts,
        Volume {
            name: "dshm".to_owned(),
            // Memory-backed, as large as the upstream docker command's
            // --shm-size; its pages count against the memory limit, which
            // leaves room for it (sizing.rs).
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_owned()),
                size_limit: Some(Quantity(shm.to_owned())),
            }),
            ..Volume::default()
        },
        host_path_volume("driver-tools", DRIVER_TOOLS),
        logs,
    ];
    let mut mounts = vec![
        scripts_mount,
        mount("dshm", "/dev/shm", false),
        mount("driver-tools", DRIVER_TOOLS, true),
        mount("logs", LOGS_DIR, false),
    ];
    // The hardware's other device nodes, as character devices: the kubelet
    // refuses to start a pod whose node lacks one (a clear event, not a
    // failure minutes into the load).
    for (i, dev) in extra_device_nodes(layout).into_iter().enumerate() {
        let name = format!("dev-{i}");
        volumes.push(Volume {
            name: name.clone(),
            host_path: Some(HostPathVolumeSource {
                path: dev.to_owned(),
                type_: Some("CharDevice".to_owned()),
            }),
            ..Volume::default()
        });
        mounts.push(mount(&name, dev, false));
    }
    let mut i = 0;
    let mut seen: Vec<&str> = Vec::new();
    // The host paths preflight requires are mounted too, so its `host_paths`
    // check sees what the node has.
    for path in layout
        .hardware
        .mounts
        .iter()
        .chain(layout.hardware.required_host_paths)
    {
        let path = path.trim_end_matches('/');
        if seen.contains(&path) {
            continue;
        }
        seen.push(path);
        // Covered by the driver tools mount; `/root/.cache` is where docker.sh
        // keeps weights, which here come from the weights volume.
        if path.starts_with(DRIVER_TOOLS) || path == "/root/.cache" {
            continue;
        }
        let name = format!("host-{i}");
        i += 1;
        volumes.push(host_path_volume(&name, path));
        mounts.push(mount(&name, path, true));
    }
    volumes.push(Volume {
        name: "weights".to_owned(),
        persistent_volume_claim: match &settings.weights {
            WeightsVolume::Pvc(claim) => Some(PersistentVolumeClaimVolumeSource {
                claim_name: claim.clone(),
                read_only: Some(true),
            }),
            WeightsVolume::HostPath(_) => None,
        },
        host_path: match &settings.weights {
            WeightsVolume::HostPath(p) => Some(HostPathVolumeSource {
                path: p.clone(),
                type_: Some("Directory".to_owned()),
            }),
            WeightsVolume::Pvc(_) => None,
        },
        ..Volume::default()
    });
    mounts.push(mount("weights", &layout.model_path, true));
    (volumes, mounts)
}
