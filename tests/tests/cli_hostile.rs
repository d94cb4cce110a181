//! The `catalog` command line under hostile arguments and output locations:
//! no argument combination panics, every failure has its exit code and a
//! message, and a refused or failed write leaves the previous catalog (or the
//! user's files) intact.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use layouts::cli;
use pd_dsl::Layout;
use std::ffi::OsString;
use std::path::Path;

const SAMPLES: [&str; 2] = [
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a3_2p1d.json"),
    include_str!("../../pd-dsl/tests/fixtures/v3_1_a2_mixed_2node.json"),
];
const P2P1D: &str = "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1d";

fn samples() -> Vec<Layout> {
    SAMPLES
        .iter()
        .map(|j| {
            let spec: pd_dsl::LayoutSpec = serde_json::from_str(j).expect("parses");
            pd_dsl::check(&spec).unwrap_or_else(|d| panic!("{d}"))
        })
        .collect()
}

fn run(args: Vec<OsString>) -> (u8, String, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut argv = vec![OsString::from("catalog")];
    argv.extend(args);
    let code = cli::run(argv, Ok(samples()), None, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf8 temp path")
}

#[test]
fn a_foreign_out_directory_is_refused_and_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("mkdir");
    std::fs::write(home.join("notes.txt"), "mine").expect("write");
    let (code, _, err) = run(os(&["--out", path(&home)]));
    assert_eq!(code, cli::EXIT_RENDER, "{err}");
    assert!(
        err.contains("not a pd-dsl catalog") && err.contains("choose another `--out`"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(home.join("notes.txt")).expect("kept"),
        "mine"
    );
    // `render NAME` into a foreign directory at DIR/NAME is refused too.
    let target = tmp.path().join("cat").join(P2P1D);
    std::fs::create_dir_all(&target).expect("mkdir");
    std::fs::write(target.join("keep.txt"), "mine").expect("write");
    let (code, _, err) = run(os(&[
        "render",
        P2P1D,
        "--out",
        path(&tmp.path().join("cat")),
    ]));
    assert_eq!(code, cli::EXIT_RENDER, "{err}");
    assert!(target.join("keep.txt").is_file());
}

#[test]
fn a_file_as_out_is_refused_and_kept() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("catalog");
    std::fs::write(&file, "x").expect("write");
    let (code, _, err) = run(os(&["--out", path(&file)]));
    assert_eq!(code, cli::EXIT_RENDER, "{err}");
    assert!(err.contains("is a file, expected a directory"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "x");
}

#[test]
fn a_previous_catalog_survives_a_failed_write() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("catalog");
    let (code, _, err) = run(os(&["--out", path(&out)]));
    assert_eq!(code, 0, "{err}");
    let before = std::fs::read_to_string(out.join("index.json")).expect("index");
    // Unwritable: the parent cannot take the staging directory.
    #[cfg(target_os = "linux")]
    {
        let (code, _, err) = run(os(&["--out", "/proc/pd-dsl-catalog"]));
        assert_eq!(code, cli::EXIT_RENDER, "{err}");
        assert!(err.contains("left as it was"), "{err}");
    }
    let (code, _, err) = run(os(&["--check", "--out", path(&out)]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("index.json")).expect("index"),
        before
    );
}

/// A small deterministic generator (no extra dependency): xorshift64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Hundreds of argument lists drawn from flags, subcommands, values and junk
/// (empty, dashes, unicode, non-UTF-8, NUL-free control text): every one
/// returns an exit code from the documented set, never panics, and never
/// writes outside the temporary directory.
#[test]
fn no_argument_combination_panics() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out_ok = tmp.path().join("out");
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir(&foreign).expect("mkdir");
    std::fs::write(foreign.join("keep"), "k").expect("write");
    let mut vocab: Vec<OsString> = [
        "--out",
        "--check",
        "--format",
        "json",
        "table",
        "xml",
        "list",
        "show",
        "render",
        "help",
        "--help",
        "-h",
        "--version",
        "-V",
        "--",
        "-",
        "",
        " ",
        "--out=",
        "--check=true",
        "--frobnicate",
        P2P1D,
        "deepseek-v3.1-w8a8-mtp-quarot/a3-2p1",
        "../../etc/passwd",
        "模型/布局",
        "$(touch /tmp/pd-dsl-pwned)",
        "a\tb\nc",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        vocab.push(OsString::from_vec(vec![0x66, 0xff, 0xfe]));
    }
    let out_flag = OsString::from("--out");
    let render = OsString::from("render");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut codes = std::collections::BTreeMap::<u8, usize>::new();
    let mut tried = 0;
    while tried < 400 {
        let n = rng.below(6);
        let mut args: Vec<OsString> = (0..n)
            .map(|_| vocab[rng.below(vocab.len())].clone())
            .collect();
        // Everything that might write names an `--out` inside the temp dir:
        // every `--out` value is one of the temp paths, a global `--out`
        // comes first unless one is given, and `render` gets its own.
        let dirs = [&out_ok, &file, &foreign];
        for i in 0..args.len() {
            if args[i] == out_flag && i + 1 < args.len() {
                args[i + 1] = dirs[rng.below(dirs.len())].clone().into_os_string();
            }
        }
        if let Some(i) = args.iter().position(|a| *a == render)
            && !args[i..].contains(&out_flag)
        {
            args.extend([out_flag.clone(), out_ok.clone().into_os_string()]);
        }
        let mut argv = Vec::new();
        if !args.contains(&out_flag) || args.last() == Some(&out_flag) {
            argv.extend([
                out_flag.clone(),
                dirs[rng.below(dirs.len())].clone().into_os_string(),
            ]);
        }
        argv.extend(args);
        let shown = format!("{argv:?}");
        let (code, out, err) = std::panic::catch_unwind(|| run(argv))
            .unwrap_or_else(|_| panic!("catalog panicked on {shown}"));
        assert!(
            [0, 1, 2, 4].contains(&code),
            "exit {code} for {shown}: {err}"
        );
        if code != 0 {
            assert!(!err.trim().is_empty(), "silent failure for {shown}: {out}");
        }
        *codes.entry(code).or_default() += 1;
        tried += 1;
    }
    assert_eq!(
        std::fs::read_to_string(foreign.join("keep")).expect("kept"),
        "k"
    );
    assert_eq!(std::fs::read_to_string(&file).expect("kept"), "x");
    assert!(!Path::new("/tmp/pd-dsl-pwned").exists());
    // The spread reached success, usage errors and refused writes.
    for c in [0, 2, 4] {
        assert!(codes.contains_key(&c), "no exit {c} in {codes:?}");
    }
}
