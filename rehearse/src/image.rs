//! The image contract: what a shell inside the layout's image has, so the
//! rehearsal runs `run.sh`, the templates, preflight and stop.sh with exactly
//! that and no more (`docker exec NAME bash run.sh`, or the pod command
//! `bash /opt/pd-dsl/run.sh`: a non-interactive shell, which reads no
//! `~/.bashrc`).
//!
//! Everything comes from the release's generated table
//! (`upstream/facts/vllm-ascend/<release>.json`, `images.<a2|a3|950dt>`):
//!
//! - **`PATH`** is two directories: the stand-ins (`vllm`, `pd-proxy`,
//!   `npu-smi`, `hccn_tool`; the last two are the host driver's, mounted into
//!   the container at run time) and `image-bin/`, symlinks to this machine's
//!   copies of the tools the table says the image has (`tools`: `true`). A
//!   tool the table says it lacks (`ip`, `ss`, `ps`, … on some images) is
//!   absent, whatever this machine has. Every other command is the base
//!   system's: the programs of the Debian/Ubuntu packages marked
//!   `Essential: yes` (coreutils, findutils, util-linux, …, read from this
//!   machine's dpkg database), which every Ubuntu base image holds; a tool
//!   the table names follows the table even when it is one of them.
//! - **Environment**: the image's `ENV` lines (with `/usr/local/Ascend`
//!   moved under the rehearsal's fake root), `HOME`, `HOSTNAME` and `PATH`,
//!   nothing of the caller's environment.
//! - **CANN** exists only once a script sources the image's `set_env.sh`
//!   files (`set_env_scripts`): stand-ins of them live under a fake Ascend
//!   root (`ascend/`, passed as [`ASCEND_ROOT_ENV`], the prefix the scripts
//!   source them from) and put a stand-in library (`libascendcl.so`,
//!   `libatb.so`) on `LD_LIBRARY_PATH`. The stand-in `vllm` refuses to start
//!   unless every one of them is found there ([`CANN_LIBS_ENV`]), as the real
//!   one fails to load `libascendcl.so`.
//! - **`vllm_ascend`**: a stand-in package shaped like the release's, on the
//!   stand-in python path (`site/`, `PYTHONPATH`): a package whose
//!   `__init__.py` defines no `__version__` (unless the table says it does),
//!   the version module the table names (`vllm_ascend/_version.py`:
//!   `__version__ = version = "X"`) and `vllm_ascend-X.dist-info/METADATA`,
//!   so preflight's `vllm_ascend_version` check runs for real.
//! - **`memcache_hybrid`**: a stand-in of the KV pool's MetaService (every
//!   release requires the package), binding the two URLs of its config file
//!   (`standin/memcache_hybrid.py`).

use crate::facts::{self, ImageFact, Release};
use pd_dsl::Layout;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// The environment variable naming the Ascend install prefix the scripts
/// source `set_env.sh` from (`/usr/local/Ascend` when unset); the rehearsal
/// alone sets it, to its fake root.
pub const ASCEND_ROOT_ENV: &str = "PD_ASCEND_ROOT";

/// The image's Ascend install prefix.
pub const ASCEND_ROOT: &str = pd_dsl::render::model::ASCEND_ROOT;

/// Comma-separated libraries the stand-in `vllm` must find on
/// `LD_LIBRARY_PATH` before it starts (unset: `libascendcl.so`).
pub const CANN_LIBS_ENV: &str = "PD_STANDIN_CANN_LIBS";

/// Tools the stand-ins provide (the host driver's, mounted into the
/// container): never taken from this machine.
const DRIVER_TOOLS: &[&str] = &["npu-smi", "hccn_tool"];

/// What a shell in the image has.
#[derive(Clone, Debug)]
pub struct ImageShell {
    /// The release table's version.
    pub release: String,
    /// `PATH` for every script.
    pub path: String,
    /// The shell: `image-bin/bash`.
    pub bash: PathBuf,
    /// The environment besides `PATH` (image `ENV`, `HOME`, `HOSTNAME`,
    /// the fake Ascend root, the stand-in python path, the libraries the
    /// stand-in `vllm` needs).
    pub env: Vec<(String, String)>,
    /// Tools the image lacks (said in the rehearsal's output).
    pub absent: Vec<String>,
    /// Tools the table leaves undecided (`null`): absent too, since a
    /// stand-in is never looser than the image.
    pub undecided: Vec<String>,
    /// The `set_env.sh` files (image paths) a script must source.
    pub set_env_scripts: Vec<String>,
}

/// The library a `set_env.sh` of `dir` (relative to the Ascend root) puts
/// on `LD_LIBRARY_PATH`: the toolkit's ACL runtime, ATB for `nnal/atb`.
fn library_of(dir: &str) -> String {
    match dir.trim_end_matches('/') {
        "ascend-toolkit" | "cann" => "libascendcl.so".into(),
        d => {
            let last = d.rsplit('/').next().unwrap_or(d);
            format!("lib{}.so", last.replace('-', "_"))
        }
    }
}

/// Programs of the packages marked `Essential: yes` in this machine's dpkg
/// database, by file name → path.
fn essential_programs() -> Result<BTreeMap<String, PathBuf>, String> {
    let run = |args: &[&str]| -> Result<String, String> {
        let out = std::process::Command::new("dpkg-query")
            .args(args)
            .output()
            .map_err(|e| {
                format!(
                    "cannot run `dpkg-query` ({e}): the rehearsal takes the image's base system (the Essential packages) from a Debian/Ubuntu machine's dpkg database"
                )
            })?;
        if !out.status.success() {
            return Err(format!(
                "`dpkg-query {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let list = run(&["-W", "-f=${Package} ${Essential}\\n"])?;
    let packages: Vec<&str> = list
        .lines()
        .filter_map(|l| l.strip_suffix(" yes"))
        .collect();
    if packages.is_empty() {
        return Err("dpkg-query lists no Essential package".into());
    }
    let mut args = vec!["-L"];
    args.extend(&packages);
    let files = run(&args)?;
    let mut out = BTreeMap::new();
    for f in files.lines() {
        let p = Path::new(f);
        let in_bin = p
            .parent()
            .and_then(Path::to_str)
            .is_some_and(|d| matches!(d, "/bin" | "/usr/bin" | "/sbin" | "/usr/sbin"));
        if !in_bin {
            continue;
        }
        // /bin is a symlink to /usr/bin on merged-/usr systems: take what
        // exists.
        let path = [
            p.to_path_buf(),
            Path::new("/usr").join(p.strip_prefix("/").unwrap_or(p)),
        ]
        .into_iter()
        .find(|c| c.is_file());
        if let (Some(name), Some(path)) = (p.file_name().and_then(|n| n.to_str()), path) {
            out.entry(name.to_owned()).or_insert(path);
        }
    }
    Ok(out)
}

/// `tool` on `path` (a `PATH` value), as a shell finds it.
fn which(tool: &str, path: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    path.split(':').filter(|d| !d.is_empty()).find_map(|d| {
        let c = Path::new(d).join(tool);
        c.metadata()
            .ok()
            .filter(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .map(|_| c)
    })
}

/// The interpreter `python3` on `path` runs (a venv's or pyenv's
/// `python3` is a link or shim that only works by its own path).
fn python_interpreter(path: &str) -> Result<PathBuf, String> {
    let py = which("python3", path)
        .ok_or("the image has `python3` but this machine has none on PATH: install python3")?;
    let out = std::process::Command::new(&py)
        .args(["-c", "import sys; print(sys.executable)"])
        .env("PATH", path)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", py.display()))?;
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || exe.is_empty() {
        return Err(format!(
            "{} does not say its interpreter: {}",
            py.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(exe))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent() {
        fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn link(target: &Path, at: &Path) -> Result<(), String> {
    symlink(target, at).map_err(|e| format!("cannot link {}: {e}", at.display()))
}

/// The release table and its image for `layout`'s hardware.
pub fn image_facts(layout: &Layout) -> Result<(&'static Release, &'static ImageFact), String> {
    let f = facts::ascend_required(layout.image.tag)?;
    let key = facts::image_key(layout.hardware);
    let img = f.images.get(key).and_then(Option::as_ref).ok_or_else(|| {
        format!(
            "upstream/facts/vllm-ascend/{}.json has no `{key}` image (the release ships no Dockerfile for {}), but {} runs on it",
            f.version,
            layout.hardware.id,
            layout.name()
        )
    })?;
    Ok((f, img))
}

/// `$NAME`/`${NAME}` in an `ENV` value, from `env` (unknown names stay as
/// written: a build `ARG` the table does not carry).
fn expand(value: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = if let Some(b) = after.strip_prefix('{') {
            match b.find('}') {
                Some(j) => (&b[..j], j + 2),
                None => ("", 0),
            }
        } else {
            let n = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..n], n)
        };
        match env.get(name).filter(|_| !name.is_empty()) {
            Some(v) => out.push_str(v),
            None => out.push_str(&rest[i..i + 1 + len]),
        }
        rest = &rest[i + 1 + len..];
    }
    out.push_str(rest);
    out
}

/// Builds the image's shell under `root`: `bin/` must already hold the
/// stand-ins (it comes first on `PATH`); `host_path` is where this
/// machine's tools are found.
pub fn build(
    layout: &Layout,
    root: &Path,
    bin: &Path,
    host_path: &str,
) -> Result<ImageShell, String> {
    let (f, img) = image_facts(layout)?;
    let image_bin = root.join("image-bin");
    fs::create_dir_all(&image_bin)
        .map_err(|e| format!("cannot create {}: {e}", image_bin.display()))?;
    let named: BTreeSet<&str> = img.tools.keys().map(String::as_str).collect();
    let mut absent = Vec::new();
    let mut undecided = Vec::new();
    // The base system, except what the table decides.
    for (name, path) in essential_programs()? {
        if !named.contains(name.as_str()) {
            link(&path, &image_bin.join(&name))?;
        }
    }
    for (tool, has) in &img.tools {
        if DRIVER_TOOLS.contains(&tool.as_str()) {
            continue;
        }
        match has {
            Some(true) => {}
            Some(false) => {
                absent.push(tool.clone());
                continue;
            }
            None => {
                undecided.push(tool.clone());
                continue;
            }
        }
        if tool == "python3" {
            let exe = python_interpreter(host_path)?;
            let wrapper = format!(
                "#!/bin/sh\n# python3 of the image: this machine's interpreter (by its own path, so a venv stays a venv).\nexec {} \"$@\"\n",
                pd_dsl::render::shell::quote(&exe.to_string_lossy())
            );
            let at = image_bin.join("python3");
            write(&at, &wrapper)?;
            set_executable(&at)?;
            continue;
        }
        let found = which(tool, host_path).ok_or_else(|| {
            format!(
                "the image ({}) has `{tool}` on its PATH but this machine does not: install it (the rehearsal runs the image's tools from this machine)",
                img.dockerfile
            )
        })?;
        let _ = fs::remove_file(image_bin.join(tool));
        link(&found, &image_bin.join(tool))?;
    }
    let bash = image_bin.join("bash");
    if !bash.exists() {
        return Err(format!(
            "the image ({}) has no `bash`: the scripts run as `bash run.sh`",
            img.dockerfile
        ));
    }

    // The fake Ascend root and its set_env.sh stand-ins.
    let ascend = root.join("ascend");
    let mut libs = Vec::new();
    for script in &img.set_env_scripts {
        let rel = script.strip_prefix(ASCEND_ROOT).and_then(|r| r.strip_prefix('/')).ok_or_else(|| {
            format!("upstream/facts/vllm-ascend/{}.json: set_env script {script} is not under {ASCEND_ROOT}", f.version)
        })?;
        let dir = rel
            .strip_suffix("set_env.sh")
            .unwrap_or(rel)
            .trim_end_matches('/');
        let lib = library_of(dir);
        let home = ascend.join(dir).join("latest");
        let lib_dir = home.join("lib64");
        write(&lib_dir.join(&lib), "")?;
        let home_q = pd_dsl::render::shell::quote(&home.to_string_lossy());
        // The toolkit's exports what CANN's does, among them the variable
        // run.sh reads as "already set up"; ATB's its own home.
        let homes = if lib == "libascendcl.so" {
            format!(
                "export {m}={home_q}\nexport ASCEND_TOOLKIT_HOME={home_q}\n",
                m = pd_dsl::render::model::CANN_ENV_MARKER
            )
        } else {
            let var = dir
                .rsplit('/')
                .next()
                .unwrap_or(dir)
                .to_ascii_uppercase()
                .replace('-', "_");
            format!("export {var}_HOME_PATH={home_q}\n")
        };
        let text = format!(
            "# Stand-in of the image's {script}: puts this component's library on\n# LD_LIBRARY_PATH, as the real one does (rehearsal only).\n{homes}export LD_LIBRARY_PATH={lib_dir}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\n",
            lib_dir = pd_dsl::render::shell::quote(&lib_dir.to_string_lossy()),
        );
        write(&ascend.join(rel), &text)?;
        libs.push(lib);
    }

    // The stand-in vllm_ascend package.
    let site = root.join("site");
    let vm = &f.version_module;
    let pkg = vm.module.split('.').next().unwrap_or("vllm_ascend");
    let module_file = vm.source.clone();
    let version = &f.version;
    let init = if vm.init_defines_version {
        format!("{} = {version:?}\n", vm.attribute)
    } else {
        "# Stand-in of the release's package: its __init__.py defines no version.\n".into()
    };
    write(&site.join(pkg).join("__init__.py"), &init)?;
    write(
        &site.join(&module_file),
        &format!("{attr} = version = {version:?}\n", attr = vm.attribute),
    )?;
    write(
        &site
            .join(format!("{pkg}-{version}.dist-info"))
            .join("METADATA"),
        &format!("Metadata-Version: 2.1\nName: {pkg}\nVersion: {version}\n"),
    )?;

    // The KV pool's MetaService (memcache_hybrid: every release's
    // requirements.txt), as a stand-in module of the same name.
    write(
        &site.join("memcache_hybrid").join("__init__.py"),
        include_str!("standin/memcache_hybrid.py"),
    )?;

    let mut env_map: BTreeMap<String, String> = BTreeMap::new();
    let ascend_text = ascend.to_string_lossy().into_owned();
    for (k, v) in &img.env {
        let v = expand(v, &env_map).replace(ASCEND_ROOT, &ascend_text);
        env_map.insert(k.clone(), v);
    }
    let mut env: Vec<(String, String)> = env_map.into_iter().filter(|(k, _)| k != "PATH").collect();
    let home = root.join("home");
    fs::create_dir_all(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
    env.push(("HOME".into(), home.to_string_lossy().into_owned()));
    env.push(("HOSTNAME".into(), "pd-rehearsal".into()));
    env.push((ASCEND_ROOT_ENV.into(), ascend_text));
    env.push(("PYTHONPATH".into(), site.to_string_lossy().into_owned()));
    env.push((CANN_LIBS_ENV.into(), libs.join(",")));
    Ok(ImageShell {
        release: f.version.clone(),
        path: format!("{}:{}", bin.display(), image_bin.display()),
        bash,
        env,
        absent,
        undecided,
        set_env_scripts: img.set_env_scripts.clone(),
    })
}

fn set_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn env_values_expand_known_names_only() {
        let env: BTreeMap<String, String> = [("A".to_string(), "x".to_string())].into();
        assert_eq!(expand("$A:${A}/b:$B:${C}", &env), "x:x/b:$B:${C}");
        assert_eq!(library_of("ascend-toolkit"), "libascendcl.so");
        assert_eq!(library_of("nnal/atb"), "libatb.so");
    }

    fn layout() -> Layout {
        crate::test_layouts::deepseek_v3_1_1p1d()
    }

    /// A shell with the image's PATH and environment finds exactly the tools
    /// the release table gives that image, gets CANN only from its
    /// set_env.sh, and reads the stand-in vllm_ascend's version as preflight
    /// does.
    #[test]
    fn the_shell_has_what_the_image_has_and_nothing_else() {
        let l = layout();
        let (f, img) = image_facts(&l).unwrap();
        let root = std::env::temp_dir().join(format!("pd-image-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let bin = root.join("bin");
        fs::create_dir_all(&bin).unwrap();
        let host = std::env::var("PATH").unwrap_or_default();
        let shell = build(&l, &root, &bin, &host).unwrap_or_else(|e| panic!("{e}"));
        let run = |script: &str| {
            let out = Command::new(&shell.bash)
                .args(["-c", script])
                .env_clear()
                .envs(shell.env.iter().map(|(k, v)| (k, v)))
                .env("PATH", &shell.path)
                .output()
                .unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stdout).trim().to_owned(),
            )
        };
        let mut absent = 0;
        for (tool, has) in &img.tools {
            // `kill` is also a bash builtin: `command -v` finds it anyway.
            if DRIVER_TOOLS.contains(&tool.as_str()) || tool == "kill" {
                continue;
            }
            let (found, at) = run(&format!("command -v {tool}"));
            assert_eq!(found, *has == Some(true), "{tool}: {at:?}");
            absent += usize::from(!found);
        }
        assert!(absent > 0, "the image of {} lacks no tool", f.version);
        // The base system is there.
        assert!(run("command -v cat && command -v mkdir && command -v sleep").0);
        // CANN only after sourcing.
        let (_, before) = run("echo \"${LD_LIBRARY_PATH:-}|${ASCEND_HOME_PATH:-}\"");
        assert_eq!(before, "|");
        let (ok, after) = run(
            "source \"$PD_ASCEND_ROOT/ascend-toolkit/set_env.sh\" && source \"$PD_ASCEND_ROOT/nnal/atb/set_env.sh\" && echo \"$LD_LIBRARY_PATH\"",
        );
        assert!(ok, "{after}");
        for lib in ["libascendcl.so", "libatb.so"] {
            assert!(
                after.split(':').any(|d| Path::new(d).join(lib).is_file()),
                "{lib} not on {after}"
            );
        }
        // vllm_ascend: no __version__ in __init__.py, metadata and _version.py
        // say the release.
        let (ok, v) = run(
            "python3 -c 'import importlib.metadata as m, vllm_ascend, vllm_ascend._version as v; print(m.version(\"vllm_ascend\"), v.__version__, hasattr(vllm_ascend, \"__version__\"))'",
        );
        assert!(ok, "{v}");
        assert_eq!(v, format!("{0} {0} False", f.version));
        let _ = fs::remove_dir_all(&root);
    }
}
