//! `catalog rehearse` without a rehearsal: the options that do not apply,
//! and the `catalog` binary as every stand-in by name.

use crate::{CATALOG, MIXED, PD};
use std::process::Command;

#[test]
fn options_that_do_not_apply_are_usage_errors() {
    let out = Command::new(CATALOG)
        .args([
            "rehearse",
            "deepseek-v4-flash-w8a8-mtp/a3-1node-dp4tp4",
            "--fault",
            "unreachable-master",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not apply"));
    for kill in ["9:0", "1:9", "x"] {
        let out = Command::new(CATALOG)
            .args(["rehearse", MIXED, "--kill", kill])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--kill {kill}");
    }
    let out = Command::new(CATALOG)
        .args(["rehearse", MIXED, "--fault", "proxy-misses-rank"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no proxy (mixed layout)"));
    // On Kubernetes the proxy is its own Deployment: node 0's run.sh neither
    // checks its script nor restarts it.
    for fault in ["proxy-exits", "missing-proxy-script"] {
        let out = Command::new(CATALOG)
            .args(["rehearse", PD, "--fault", fault, "--k8s-env"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{fault}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("fault {fault} does not apply with --k8s-env")),
            "{fault}: {err}"
        );
    }
    let out = Command::new(CATALOG)
        .args(["rehearse", PD, "--proxy-policy", "random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(CATALOG)
        .args(["rehearse", PD, "--fault", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_catalog_binary_is_every_stand_in_by_name() {
    let dir = std::env::temp_dir().join(format!("pd-multicall-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for name in pd_rehearse::BINARIES {
        std::os::unix::fs::symlink(CATALOG, dir.join(name)).unwrap();
    }
    let run = |name: &str, args: &[&str]| {
        let out = Command::new(dir.join(name))
            .args(args)
            .env("PD_STANDIN_NPUS", "8")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // The vLLM version of the newest image (PD_STANDIN_IMAGE unset).
    let newest = pd_dsl::tables::IMAGES.last().map_or("", |i| i.tag);
    let vllm = pd_rehearse::facts::vllm_version_of_image(newest).unwrap();
    assert_eq!(
        run("vllm", &["--version"]).1.trim(),
        format!("{vllm}+standin")
    );
    assert!(
        run("npu-smi", &["info", "-l"])
            .1
            .contains("Total Count                    : 8")
    );
    assert!(
        run("hccn_tool", &["-i", "0", "-link", "-g"])
            .1
            .contains("UP")
    );
    assert_eq!(run("pd-proxy", &["--bogus"]).0, Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
