//! Preflight and the image's environment: Mooncake in `ldconfig`, the
//! installed vllm-ascend version, and the CANN environment `run.sh` sources.

use crate::scripts::which;
use crate::{PD, render, run};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every preflight check of `dir`'s layout except `keep`, comma-joined (for
/// `PD_SKIP_PREFLIGHT`).
pub(crate) fn skip_all_but(dir: &Path, keep: &[&str]) -> String {
    let text = std::fs::read_to_string(dir.join("preflight.sh")).unwrap();
    let line = text.lines().find(|l| l.starts_with("CHECKS=(")).unwrap();
    let names: Vec<&str> = line
        .trim_start_matches("CHECKS=(")
        .trim_end_matches(')')
        .split_whitespace()
        .collect();
    for k in keep {
        assert!(names.contains(k), "{k} is not a check of {line}");
    }
    names
        .into_iter()
        .filter(|n| !keep.contains(n))
        .collect::<Vec<_>>()
        .join(",")
}

/// The interpreter `python3` on PATH runs (not a version manager's shim,
/// which needs its own tools on PATH).
fn real_python() -> PathBuf {
    let o = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// A private bin directory holding `tools` from PATH (symlinked) plus
/// `scripts` (name, text) as executables.
pub(crate) fn bin_with(tools: &[&str], scripts: &[(&str, &str)]) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    for tool in tools {
        let p = if *tool == "python3" {
            real_python()
        } else {
            which(tool).unwrap_or_else(|()| panic!("`{tool}` is not on PATH"))
        };
        std::os::unix::fs::symlink(p, bin.path().join(tool)).unwrap();
    }
    for (name, text) in scripts {
        let p = bin.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

/// `ldconfig -p` lists thousands of libraries on a real image; preflight's
/// Mooncake check must still see one listed first (a `| grep -q` under
/// `pipefail` reports the SIGPIPE of ldconfig as a miss).
#[test]
fn preflight_finds_mooncake_in_a_long_ldconfig_listing() {
    let (_tmp, dir) = render(PD);
    // 200,000 lines (several MB, far past a pipe buffer), the match first.
    let ldconfig = "#!/usr/bin/env bash\necho '\tlibmooncake_transfer_engine.so (libc6,x86-64) => /usr/local/lib/libmooncake_transfer_engine.so'\nfor ((i = 0; i < 200000; i++)); do echo \"\tlibfiller$i.so (libc6,x86-64) => /usr/lib/libfiller$i.so\"; done\n";
    let bin = bin_with(&[], &[("ldconfig", ldconfig)]);
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap()
    );
    let skip = skip_all_but(&dir, &["mooncake"]);
    let (code, out) = run(
        &dir,
        "preflight.sh",
        &["0"],
        &[
            ("PATH", path.as_str()),
            ("PD_SKIP_PREFLIGHT", skip.as_str()),
            // No `import mooncake` and no library directory to find it in.
            ("PYTHONPATH", "/nonexistent"),
            ("LD_LIBRARY_PATH", "/nonexistent"),
        ],
    );
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("preflight: ok   mooncake: found by ldconfig"),
        "{out}"
    );
}

/// The unpacked source distribution `spec` (`NAME==VERSION`) of the upstream
/// corpus (`scripts/upstream/corpus.py`, fetched and sha256-checked on first
/// use); fails naming the command when it cannot be had.
pub(crate) fn corpus_tree(spec: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new("python3")
        .arg(root.join("scripts/upstream/corpus.py"))
        .args(["path", spec])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 scripts/upstream/corpus.py: {e}"));
    assert!(
        out.status.success(),
        "`python3 scripts/upstream/corpus.py path {spec}` failed (the upstream corpus is needed, never skipped): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// A stand-in of an installed vllm-ascend release: the package as the sdist
/// ships it (`__init__.py` imports vLLM and defines no `__version__`;
/// setuptools-scm writes `_version.py`), and optionally pip's `.dist-info`.
fn fake_vllm_ascend(root: &Path, version_py: Option<&str>, metadata: Option<&str>) {
    let pkg = root.join("vllm_ascend");
    std::fs::create_dir_all(&pkg).unwrap();
    // As the release's: importing it needs vLLM, which is not here.
    std::fs::write(
        pkg.join("__init__.py"),
        "import vllm_ascend.logger  # noqa: F401\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("logger.py"),
        "from vllm.logger import init_logger\n",
    )
    .unwrap();
    if let Some(v) = version_py {
        std::fs::write(
            pkg.join("_version.py"),
            format!("__version__ = version = {v:?}\n__version_tuple__ = version_tuple = (0, 21, 0, 'rc1')\n"),
        )
        .unwrap();
    }
    if let Some(v) = metadata {
        let info = root.join(format!("vllm_ascend-{v}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\nName: vllm_ascend\nVersion: {v}\n"),
        )
        .unwrap();
    }
}

/// preflight's `vllm_ascend_version` reads the version the way an installed
/// release has it (no release defines `vllm_ascend.__version__`), compares it
/// with the layout's image tag without its `v`, and names both on a mismatch.
#[test]
fn preflight_reads_the_installed_vllm_ascend_version() {
    let (_tmp, dir) = render(PD);
    let layout = layouts::catalog()
        .unwrap()
        .iter()
        .find(|l| l.name() == PD)
        .unwrap();
    let tag = layout.image.tag;
    let want = tag.trim_start_matches('v');
    assert_ne!(want, tag, "image tags start with v: {tag}");
    let skip = skip_all_but(&dir, &["vllm_ascend_version"]);
    let check = |pythonpath: &Path| {
        let pp = pythonpath.display().to_string();
        run(
            &dir,
            "preflight.sh",
            &["0"],
            &[
                ("PD_SKIP_PREFLIGHT", skip.as_str()),
                ("PYTHONPATH", pp.as_str()),
            ],
        )
    };
    // The release itself (its sdist, through scripts/upstream/corpus.py): its
    // `__init__.py` and `_version.py`, then its PKG-INFO as pip's METADATA.
    let release = corpus_tree(&format!("vllm-ascend=={want}"));
    let site = tempfile::tempdir().unwrap();
    let pkg = site.path().join("vllm_ascend");
    std::fs::create_dir_all(&pkg).unwrap();
    for f in ["__init__.py", "_version.py"] {
        std::fs::copy(release.join("vllm_ascend").join(f), pkg.join(f)).unwrap();
    }
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "preflight: ok   vllm_ascend_version: {want} ({}/vllm_ascend/_version.py)",
            site.path().display()
        )),
        "{out}"
    );
    let info = site.path().join(format!("vllm_ascend-{want}.dist-info"));
    std::fs::create_dir_all(&info).unwrap();
    std::fs::copy(release.join("PKG-INFO"), info.join("METADATA")).unwrap();
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "ok   vllm_ascend_version: {want} (package metadata)"
        )),
        "{out}"
    );
    // A stand-in shaped like it, without metadata.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some(want), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("vllm_ascend/_version.py)"), "{out}");
    // A wrong version names both.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some("0.18.0"), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "FAIL vllm_ascend_version: found vllm_ascend 0.18.0 ({}/vllm_ascend/_version.py), but the layout's image is {} (expects {want})",
            site.path().display(),
            layout.image_ref
        )),
        "{out}"
    );
    // pip's metadata wins over the file.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some("0.18.0"), Some(want));
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!(
            "ok   vllm_ascend_version: {want} (package metadata)"
        )),
        "{out}"
    );
    // A source build: at the tag with a local part passes, saying so; past
    // the tag (`.devN`) fails, saying what it found.
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(
        site.path(),
        Some(&format!("{want}+g35d600725.d20260101")),
        None,
    );
    let (code, out) = check(site.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("a source build (local part +g35d600725.d20260101)"),
        "{out}"
    );
    let site = tempfile::tempdir().unwrap();
    fake_vllm_ascend(site.path(), Some(&format!("{want}.dev3+g35d600725")), None);
    let (code, out) = check(site.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "found vllm_ascend {want}.dev3+g35d600725 ({}/vllm_ascend/_version.py), a source build past a release (dev3), but the layout's image is {} (expects {want})",
            site.path().display(),
            layout.image_ref
        )),
        "{out}"
    );
    // Nothing installed: said, not a traceback.
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = check(empty.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(
            "cannot read the installed vllm_ascend version: vllm_ascend is not installed in"
        ),
        "{out}"
    );
}

/// A stand-in Ascend root: each of the image's environment scripts
/// (`render::model::CANN_ENV_FILES`, a glob's `*` as `9.0.0`) records that it
/// was sourced by run.sh itself (not run as a child) with `set -u` off, and
/// the toolkit's exports what CANN's does. `skip`
/// leaves files out.
fn fake_ascend_root(root: &Path, record: &Path, skip: &[&str]) {
    for (n, f) in pd_dsl::render::model::CANN_ENV_FILES.iter().enumerate() {
        if skip.contains(&f.what) {
            continue;
        }
        let path = root.join(f.path.replace('*', "9.0.0"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = format!(
            "# stand-in of {what}\n# As vendor scripts do: an unset variable must not stop the caller.\nexport LD_LIBRARY_PATH=/stand-in/{n}:$LD_LIBRARY_PATH_UNSET_HERE\necho \"{what} sourced by ${{BASH_SOURCE[1]##*/}}\" >>{record}\n",
            what = f.what,
            record = record.display()
        );
        if f.required {
            text.push_str(&format!(
                "export {}={}/latest\n",
                pd_dsl::render::model::CANN_ENV_MARKER,
                path.parent().unwrap().display()
            ));
        }
        std::fs::write(&path, text).unwrap();
    }
}

/// run.sh sources the image's CANN, bisheng and ATB environment when no shell
/// did (a non-interactive `docker exec` or pod), says what it sourced, and
/// stops naming the toolkit's script when it is missing.
#[test]
fn run_sh_sources_the_cann_environment_or_names_what_is_missing() {
    let (_tmp, dir) = render(PD);
    let files = pd_dsl::render::model::CANN_ENV_FILES;
    assert_eq!(files.iter().filter(|f| f.required).count(), 1);
    let marker = pd_dsl::render::model::CANN_ENV_MARKER;
    let ips = "127.0.0.1,127.0.0.2,127.0.0.3,127.0.0.4";
    let go = |root: &Path, dry: bool, extra: &[(&str, &str)]| {
        let root = root.display().to_string();
        let mut env = vec![
            ("PD_NODE_IPS", ips),
            ("PD_NODE_INDEX", "0"),
            ("PD_LOCAL_IP", "127.0.0.1"),
            ("PD_NIC", "lo"),
            ("PD_ASCEND_ROOT", root.as_str()),
        ];
        if dry {
            env.push(("PD_DRY_RUN", "1"));
        }
        env.extend_from_slice(extra);
        let mut cmd = Command::new(dir.join("run.sh"));
        cmd.current_dir(&dir).env_remove(marker);
        for (k, _) in std::env::vars() {
            if k.starts_with("PD_") {
                cmd.env_remove(k);
            }
        }
        let out = super::output(cmd.envs(env.iter().copied()));
        (
            out.status.code().unwrap_or(-1),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let ascend = tempfile::tempdir().unwrap();
    let record = ascend.path().join("sourced");
    fake_ascend_root(ascend.path(), &record, &[]);
    let (code, out) = go(ascend.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    let sourced = std::fs::read_to_string(&record).unwrap();
    let want: Vec<String> = files
        .iter()
        .map(|f| format!("{} sourced by run.sh", f.what))
        .collect();
    assert_eq!(sourced.lines().collect::<Vec<_>>(), want, "{out}");
    let root = ascend.path().display();
    assert!(
        out.contains(&format!(
            "run.sh: sourced the CANN environment: CANN toolkit {root}/ascend-toolkit/set_env.sh; bisheng (ascendnpu-ir) {root}/cann-9.0.0/share/info/ascendnpu-ir/bin/set_env.sh; ATB {root}/nnal/atb/set_env.sh;"
        )),
        "{out}"
    );
    // Already set up by a shell: nothing is sourced.
    std::fs::remove_file(&record).unwrap();
    let (code, out) = go(ascend.path(), true, &[(marker, "/opt/cann/latest")]);
    assert_eq!(code, 0, "{out}");
    assert!(!record.exists(), "{out}");
    assert!(
        out.contains(&format!(
            "CANN environment already set up ({marker}=/opt/cann/latest); sourcing nothing"
        )),
        "{out}"
    );
    // Only the toolkit: the optional ones are named and skipped.
    let toolkit_only = tempfile::tempdir().unwrap();
    let record2 = toolkit_only.path().join("sourced");
    fake_ascend_root(
        toolkit_only.path(),
        &record2,
        &["ATB", "bisheng (ascendnpu-ir)"],
    );
    let (code, out) = go(toolkit_only.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        std::fs::read_to_string(&record2).unwrap(),
        "CANN toolkit sourced by run.sh\n"
    );
    assert!(
        out.contains(&format!(
            "no ATB environment ({}/nnal/atb/set_env.sh does not exist); going on without it",
            toolkit_only.path().display()
        )),
        "{out}"
    );
    // No toolkit: a real start stops before anything runs, naming the file.
    let empty = tempfile::tempdir().unwrap();
    let (code, out) = go(empty.path(), false, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "run.sh: error: no CANN toolkit environment: {}/ascend-toolkit/set_env.sh does not exist and {marker} is unset",
            empty.path().display()
        )),
        "{out}"
    );
    assert!(out.contains("set PD_ASCEND_ROOT"), "{out}");
    assert!(!out.contains("preflight"), "{out}");
    // The dry run warns instead.
    let (code, out) = go(empty.path(), true, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("a real start stops here"), "{out}");
}
