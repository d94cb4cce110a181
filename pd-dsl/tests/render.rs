//! Snapshots of every artifact of representative layouts (built at run time
//! from JSON specs, checked by the same rules as `layout!`), plus the
//! renderer's write/check behaviour.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render::{self, Artifact, StaleKind};
use pd_dsl::{Layout, LayoutSpec};

const FIXTURES: [(&str, &str); 3] = [
    ("v3_1_a3_2p1d", include_str!("fixtures/v3_1_a3_2p1d.json")),
    (
        "v4_flash_a3_1p1d",
        include_str!("fixtures/v4_flash_a3_1p1d.json"),
    ),
    (
        "v3_1_a2_mixed_2node",
        include_str!("fixtures/v3_1_a2_mixed_2node.json"),
    ),
];

fn load(json: &str) -> Layout {
    let spec: LayoutSpec = match serde_json::from_str(json) {
        Ok(s) => s,
        Err(e) => panic!("fixture does not parse: {e}"),
    };
    match pd_dsl::check(&spec) {
        Ok(l) => l,
        Err(d) => panic!("fixture breaks rules:\n{d}"),
    }
}

fn layouts() -> Vec<Layout> {
    FIXTURES.iter().map(|(_, j)| load(j)).collect()
}

/// `<fixture>__<path inside the layout directory>`, `/` written `__`
/// (`k8s/README.md` and `README.md` are two snapshots).
fn snapshot_name(fixture: &str, layout: &Layout, a: &Artifact) -> String {
    let inside: Vec<String> = a
        .path
        .strip_prefix(layout.name())
        .unwrap_or(&a.path)
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    format!("{fixture}__{}", inside.join("__"))
}

#[test]
fn fixtures_pass_the_rules() {
    assert_eq!(layouts().len(), 3);
}

#[test]
fn artifacts_match_snapshots() {
    for (name, json) in FIXTURES {
        let layout = load(json);
        let artifacts = match render::render_layout(&layout) {
            Ok(a) => a,
            Err(e) => panic!("{name}: {e}"),
        };
        for a in &artifacts {
            insta::assert_snapshot!(snapshot_name(name, &layout, a), a.contents);
        }
    }
}

#[test]
fn index_matches_snapshot() {
    let artifacts = match render::render_catalog_with(
        &layouts(),
        Some("## 场景指南 · Scenario guide\n\n*scenario guide goes here*"),
    ) {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    for a in artifacts
        .iter()
        .filter(|a| a.path.components().count() == 1)
    {
        insta::assert_snapshot!(format!("index__{}", a.path.display()), a.contents);
    }
}

#[test]
fn rendering_is_deterministic_and_normalized() {
    let a = render::render_catalog(&layouts()).map_err(|e| e.to_string());
    let mut reversed = layouts();
    reversed.reverse();
    let b = render::render_catalog(&reversed).map_err(|e| e.to_string());
    assert_eq!(
        a, b,
        "render twice (any input order) must be byte-identical"
    );
    let a = a.unwrap_or_default();
    let paths: Vec<_> = a.iter().map(|x| x.path.clone()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted, "artifacts sorted by path");
    for x in &a {
        assert!(
            x.contents.ends_with('\n') && !x.contents.ends_with("\n\n"),
            "{}",
            x.path.display()
        );
        assert!(
            render::parse_check(x).is_ok(),
            "{:?}",
            render::parse_check(x)
        );
        let exec = x.path.extension().is_some_and(|e| e == "sh" || e == "py");
        assert_eq!(x.executable, exec, "{}", x.path.display());
    }
}

#[test]
fn write_then_check_is_fresh_and_reports_every_kind_of_staleness() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    let artifacts = render::render_catalog(&layouts()).expect("render");
    render::write_catalog(&out, &artifacts).expect("write");
    assert!(render::check_catalog(&out, &artifacts).is_empty());
    // No temporary directories are left next to the catalog.
    let siblings: Vec<_> = std::fs::read_dir(tmp.path()).expect("read").collect();
    assert_eq!(siblings.len(), 1);

    let first = &artifacts[0].path;
    let last = &artifacts[artifacts.len() - 1].path;
    std::fs::remove_file(out.join(first)).expect("rm");
    std::fs::write(out.join(last), "changed\n").expect("write");
    std::fs::write(out.join("stray.txt"), "x\n").expect("write");
    let stale = render::check_catalog(&out, &artifacts);
    let kinds: Vec<_> = stale.iter().map(|s| (s.path.clone(), s.kind)).collect();
    assert!(
        kinds.contains(&(first.clone(), StaleKind::Missing)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&(last.clone(), StaleKind::Differs)),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("stray.txt".into(), StaleKind::Extra)),
        "{kinds:?}"
    );

    // Rewriting replaces the whole directory: fresh again, stray file gone.
    render::write_catalog(&out, &artifacts).expect("rewrite");
    assert!(render::check_catalog(&out, &artifacts).is_empty());
}

#[test]
fn a_failed_write_leaves_the_previous_catalog_intact() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    let artifacts = render::render_catalog(&layouts()).expect("render");
    render::write_catalog(&out, &artifacts).expect("write");

    // A bad artifact path fails while staging: the old catalog is untouched.
    let mut bad = artifacts.clone();
    bad.push(Artifact::new("../escape.txt", "x"));
    assert!(render::write_catalog(&out, &bad).is_err());
    assert!(render::check_catalog(&out, &artifacts).is_empty());
    assert!(!tmp.path().join("escape.txt").exists());

    // A file where a directory must go fails while staging, too.
    let mut clash = artifacts.clone();
    clash.push(Artifact::new("README.md/inner.md", "x"));
    assert!(render::write_catalog(&out, &clash).is_err());
    assert!(render::check_catalog(&out, &artifacts).is_empty());
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).expect("read").collect();
    assert_eq!(leftovers.len(), 1, "no temporary directory left behind");

    // An output whose parent is a file cannot be written at all.
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, "x").expect("write");
    let err = render::write_catalog(&file.join("catalog"), &artifacts);
    assert!(err.is_err());
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "x");
}

/// The rendered launcher fails fast: one rank exits 3, the others sleep; the
/// launcher exits non-zero naming the rank within seconds, and no rank
/// process survives.
#[test]
fn launcher_fails_fast_and_leaves_no_children() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let launcher = dir.join("launch_online_dp.py");
    std::fs::write(&launcher, render::launcher::launch_online_dp_py()).expect("write");
    let template = dir.join("fake_template.sh");
    let pids = dir.join("pids");
    std::fs::create_dir(&pids).expect("mkdir");
    std::fs::write(
        &template,
        format!(
            "#!/usr/bin/env bash\n[[ $# -eq 7 ]] || exit 9\necho $$ > {pids}/rank$4\nif [[ $4 == 5 ]]; then sleep 0.5; exit 3; fi\nexec sleep 60\n",
            pids = pids.display()
        ),
    )
    .expect("write");
    let started = std::time::Instant::now();
    let out = std::process::Command::new("python3")
        .arg(&launcher)
        .args([
            "--dp-size",
            "8",
            "--tp-size",
            "2",
            "--dp-size-local",
            "4",
            "--dp-rank-start",
            "4",
            "--dp-address",
            "127.0.0.1",
            "--dp-rpc-port",
            "12321",
            "--vllm-start-port",
            "7100",
            "--visible-npus",
            "8",
            "--grace-seconds",
            "2",
        ])
        .arg("--template")
        .arg(&template)
        .output()
        .expect("python3 runs");
    let elapsed = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stderr: {stderr}");
    assert!(
        stderr.contains("rank 5 exited with code 3"),
        "stderr: {stderr}"
    );
    assert!(
        elapsed < std::time::Duration::from_secs(8),
        "took {elapsed:?}"
    );
    let mut seen = 0;
    for e in std::fs::read_dir(&pids).expect("read") {
        let pid = std::fs::read_to_string(e.expect("entry").path()).expect("read");
        let pid = pid.trim();
        seen += 1;
        assert!(stopped(pid), "rank process {pid} survived");
    }
    assert_eq!(seen, 4, "every rank started");
}

/// Whether process `pid` is gone (or a zombie: dead, its parent not yet
/// reaped), within 5 s: on a loaded machine the kernel may still be tearing a
/// killed process down when the launcher returns. A live process fails.
fn stopped(pid: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            // The state follows the parenthesised command name.
            Ok(stat)
                if stat
                    .rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) if std::time::Instant::now() >= deadline => return false,
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
}

/// A dropped SSH session (SIGHUP) stops every rank, and the rank process
/// groups that stop.sh reads (`rank<r>.pgid`) exist exactly while ranks run.
#[test]
fn launcher_stops_every_rank_on_hangup() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let launcher = dir.join("launch_online_dp.py");
    std::fs::write(&launcher, render::launcher::launch_online_dp_py()).expect("write");
    let template = dir.join("fake_template.sh");
    std::fs::write(&template, "#!/usr/bin/env bash\nexec sleep 60\n").expect("write");
    let logs = dir.join("logs");
    let child = std::process::Command::new("python3")
        .arg(&launcher)
        .args([
            "--dp-size",
            "4",
            "--tp-size",
            "1",
            "--dp-size-local",
            "2",
            "--dp-rank-start",
            "2",
            "--dp-address",
            "127.0.0.1",
            "--dp-rpc-port",
            "12321",
            "--vllm-start-port",
            "7100",
            "--grace-seconds",
            "2",
        ])
        .arg("--template")
        .arg(&template)
        .arg("--log-dir")
        .arg(&logs)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let pgid = |r: u32| logs.join(format!("rank{r}.pgid"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !(pgid(2).exists() && pgid(3).exists()) {
        assert!(
            std::time::Instant::now() < deadline,
            "no rank<r>.pgid files"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let groups: Vec<String> = [2, 3]
        .iter()
        .map(|r| {
            std::fs::read_to_string(pgid(*r))
                .expect("read")
                .trim()
                .to_owned()
        })
        .collect();
    for g in &groups {
        assert!(std::path::Path::new(&format!("/proc/{g}")).exists());
    }
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(hup.success());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(129), "stderr: {stderr}");
    assert!(
        stderr.contains("received signal 1; stopping all ranks"),
        "{stderr}"
    );
    for g in &groups {
        assert!(stopped(g), "rank process group {g} survived the hangup");
    }
    assert!(!pgid(2).exists() && !pgid(3).exists(), "stale pgid files");
}

#[test]
fn launcher_rejects_bad_arguments() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let launcher = tmp.path().join("launch_online_dp.py");
    std::fs::write(&launcher, render::launcher::launch_online_dp_py()).expect("write");
    let run = |args: &[&str]| {
        std::process::Command::new("python3")
            .arg(&launcher)
            .args(args)
            .output()
            .expect("python3 runs")
    };
    // --dp-rpc-port is required (upstream's int default crashes).
    let o = run(&["--dp-size", "2", "--dp-address", "127.0.0.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--dp-rpc-port"));
    // More NPUs than the node has.
    let o = run(&[
        "--dp-size",
        "4",
        "--tp-size",
        "4",
        "--dp-address",
        "x",
        "--dp-rpc-port",
        "1",
        "--visible-npus",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("16 NPUs"));
}
