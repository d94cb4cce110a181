//! `write_catalog` against hostile output locations: a foreign directory, a
//! file, an unwritable parent, a write that fails half way. The previous
//! catalog (or the user's files) always stays as it was, and the error says
//! what happened.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use pd_dsl::render::{self, Artifact};
use std::fs;
use std::path::Path;

fn catalog() -> Vec<Artifact> {
    vec![
        Artifact::new("index.json", "[]"),
        Artifact::new("README.md", "# catalog"),
        Artifact::new("demo/a3-1p1d/run.sh", "#!/usr/bin/env bash\ntrue"),
        Artifact::new("demo/a3-1p1d/meta.yaml", "name: demo/a3-1p1d"),
    ]
}

fn newer() -> Vec<Artifact> {
    let mut a = catalog();
    a[1] = Artifact::new("README.md", "# catalog v2");
    a
}

fn siblings(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_previous_catalog_is_replaced_whole() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    render::write_catalog(&out, &catalog()).expect("first write");
    fs::write(out.join("stray.txt"), "old").expect("stray");
    render::write_catalog(&out, &newer()).expect("rewrite");
    assert!(render::check_catalog(&out, &newer()).is_empty());
    assert_eq!(
        siblings(tmp.path()),
        ["catalog"],
        "no temporary left behind"
    );
    // An empty directory (e.g. a fresh `mkdir`) is fine too.
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).expect("mkdir");
    render::write_catalog(&empty, &catalog()).expect("into an empty dir");
    assert!(render::check_catalog(&empty, &catalog()).is_empty());
}

#[test]
fn a_foreign_directory_is_never_replaced() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("home");
    fs::create_dir(&out).expect("mkdir");
    fs::write(out.join("thesis.tex"), "precious").expect("write");
    let err = render::write_catalog(&out, &catalog()).expect_err("refused");
    let msg = err.to_string();
    assert!(
        msg.contains("not a pd-dsl catalog") && msg.contains("refusing to replace"),
        "{msg}"
    );
    assert_eq!(
        fs::read_to_string(out.join("thesis.tex")).expect("kept"),
        "precious"
    );
    assert_eq!(siblings(&out), ["thesis.tex"]);
    assert_eq!(siblings(tmp.path()), ["home"]);
}

#[test]
fn a_file_or_an_empty_path_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("catalog");
    fs::write(&file, "x").expect("write");
    let msg = render::write_catalog(&file, &catalog())
        .expect_err("file")
        .to_string();
    assert!(msg.contains("is a file, expected a directory"), "{msg}");
    assert_eq!(fs::read_to_string(&file).expect("kept"), "x");
    // A file where a parent directory must go.
    let msg = render::write_catalog(&file.join("sub"), &catalog())
        .expect_err("parent is a file")
        .to_string();
    assert!(
        msg.contains("a parent of it is a file, expected a directory"),
        "{msg}"
    );
    assert_eq!(fs::read_to_string(&file).expect("kept"), "x");
    let msg = render::write_catalog(Path::new(""), &catalog())
        .expect_err("empty")
        .to_string();
    assert!(msg.contains("empty path"), "{msg}");
}

#[cfg(unix)]
#[test]
fn a_symlink_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = tmp.path().join("real");
    render::write_catalog(&real, &catalog()).expect("write");
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let msg = render::write_catalog(&link, &newer())
        .expect_err("link")
        .to_string();
    assert!(msg.contains("symbolic link"), "{msg}");
    assert!(render::check_catalog(&real, &catalog()).is_empty());
}

/// `/proc` refuses new directories even for root, so this is an unwritable
/// parent wherever the tests run (including CI, which runs as root).
#[cfg(target_os = "linux")]
#[test]
fn an_unwritable_parent_says_so() {
    let msg = render::write_catalog(Path::new("/proc/pd-dsl-catalog"), &catalog())
        .expect_err("unwritable")
        .to_string();
    assert!(
        msg.contains("cannot create a temporary directory in `/proc`")
            && msg.contains("left as it was"),
        "{msg}"
    );
}

#[test]
fn a_write_failing_half_way_leaves_the_previous_catalog() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    render::write_catalog(&out, &catalog()).expect("write");
    // The third file cannot be created (its parent is a file): the first two
    // were already staged, as after a partial write on a full disk.
    let mut broken = newer();
    broken.insert(2, Artifact::new("README.md/inner.md", "x"));
    let msg = render::write_catalog(&out, &broken)
        .expect_err("fails")
        .to_string();
    assert!(msg.contains("left as it was"), "{msg}");
    assert!(render::check_catalog(&out, &catalog()).is_empty());
    assert_eq!(siblings(tmp.path()), ["catalog"], "staging was removed");
}

/// A really full file system, where the machine lets us make one: a 64 KiB
/// tmpfs. Mounting needs root and a kernel that allows it; where it does not,
/// the staged-failure test above covers the same path.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_leaves_the_previous_catalog() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mnt = tmp.path().join("small");
    fs::create_dir(&mnt).expect("mkdir");
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("a_full_disk_leaves_the_previous_catalog: cannot mount a tmpfs here");
        return;
    }
    let out = mnt.join("catalog");
    let result = std::panic::catch_unwind(|| {
        render::write_catalog(&out, &catalog()).expect("small catalog fits");
        let mut huge = newer();
        huge.push(Artifact::new("big.txt", "x".repeat(1 << 20)));
        let msg = render::write_catalog(&out, &huge)
            .expect_err("disk full")
            .to_string();
        assert!(msg.contains("left as it was"), "{msg}");
        assert!(render::check_catalog(&out, &catalog()).is_empty());
        assert_eq!(siblings(&mnt), ["catalog"]);
    });
    let _ = std::process::Command::new("umount").arg(&mnt).status();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
