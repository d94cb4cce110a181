//! Writing the catalog atomically and checking it is fresh.

use super::{Artifact, RenderError};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> RenderError + 'a {
    move |source| RenderError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// Files that mark a directory as written by pd-dsl: `index.json` at the
/// root of a catalog, `meta.yaml` at the root of one layout's directory.
/// [`write_catalog`] only ever replaces a directory that has one of them (or
/// is empty), so a mistyped `--out` never deletes a user's files.
pub const CATALOG_MARKERS: [&str; 2] = ["index.json", "meta.yaml"];

/// Writes `artifacts` to `out_dir` atomically: everything goes into a fresh
/// hidden sibling directory first, which is then swapped in. On Linux the swap
/// is one `renameat2(RENAME_EXCHANGE)`, so at every instant — even if the
/// process is killed — `out_dir` is either the whole previous catalog or the
/// whole new one; elsewhere it is two renames and a failed second rename puts
/// the previous catalog back.
///
/// Refused, with nothing changed: an `out_dir` that is a file, or a non-empty
/// directory without a [`CATALOG_MARKERS`] file (not a previous catalog). Any
/// failure while staging (unwritable parent, full disk, a bad artifact path)
/// deletes the staging directory and leaves `out_dir` as it was; the error
/// says so.
pub fn write_catalog(out_dir: &Path, artifacts: &[Artifact]) -> Result<(), RenderError> {
    let unchanged = |e: RenderError| unchanged(out_dir, e);
    if out_dir.as_os_str().is_empty() {
        return Err(RenderError::Refused {
            path: out_dir.to_path_buf(),
            reason: "the output directory is an empty path".into(),
        });
    }
    let had_old = ensure_replaceable(out_dir)?;
    let parent = match out_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)
        .map_err(io_err("create directory", &parent))
        .map_err(unchanged)?;
    let staging = tempfile::Builder::new()
        .prefix(".pd-dsl-new-")
        .tempdir_in(&parent)
        .map_err(io_err("create a temporary directory in", &parent))
        .map_err(unchanged)?;
    stage(staging.path(), artifacts).map_err(unchanged)?;
    // The staging directory is private (0700); a catalog is readable.
    set_dir_mode(staging.path()).map_err(unchanged)?;
    if had_old && exchange(staging.path(), out_dir) {
        // `staging` now holds the previous catalog; dropping it deletes it.
        drop(staging);
        return Ok(());
    }
    // No atomic exchange (not Linux, or the file system refuses it): move the
    // old catalog aside, move the new one in, put the old one back on failure.
    let aside = tempfile::Builder::new()
        .prefix(".pd-dsl-old-")
        .tempdir_in(&parent)
        .map_err(io_err("create a temporary directory in", &parent))
        .map_err(unchanged)?;
    let old = aside.path().join("old");
    if had_old {
        fs::rename(out_dir, &old)
            .map_err(io_err("move aside", out_dir))
            .map_err(unchanged)?;
    }
    let staged = staging.keep();
    if let Err(e) = fs::rename(&staged, out_dir) {
        let restored = !had_old || fs::rename(&old, out_dir).is_ok();
        let _ = fs::remove_dir_all(&staged);
        let e = RenderError::Io {
            action: "move the new catalog into",
            path: out_dir.to_path_buf(),
            source: e,
        };
        if restored {
            return Err(unchanged(e));
        }
        // Keep the previous catalog where the user can find it.
        let kept = aside.keep();
        return Err(RenderError::Refused {
            path: out_dir.to_path_buf(),
            reason: format!(
                "{e}; the previous catalog could not be moved back and is kept at `{}`",
                kept.join("old").display()
            ),
        });
    }
    // Dropping `aside` deletes the old catalog.
    drop(aside);
    Ok(())
}

fn unchanged(out_dir: &Path, cause: RenderError) -> RenderError {
    match cause {
        RenderError::Unchanged { .. } | RenderError::Refused { .. } => cause,
        cause => RenderError::Unchanged {
            path: out_dir.to_path_buf(),
            cause: Box::new(cause),
        },
    }
}

/// Whether `out_dir` exists and may be replaced; an error when it must not be.
fn ensure_replaceable(out_dir: &Path) -> Result<bool, RenderError> {
    let refused = |reason: String| RenderError::Refused {
        path: out_dir.to_path_buf(),
        reason,
    };
    let meta = match fs::symlink_metadata(out_dir) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(refused(
                "a parent of it is a file, expected a directory".into(),
            ));
        }
        Err(e) => {
            return Err(refused(format!("cannot inspect it: {e}")));
        }
    };
    if meta.file_type().is_symlink() {
        return Err(refused(
            "it is a symbolic link; pass the directory it points to".into(),
        ));
    }
    if !meta.is_dir() {
        return Err(refused(
            "it is a file, expected a directory (a previous catalog or a new path)".into(),
        ));
    }
    let mut entries = fs::read_dir(out_dir).map_err(|e| refused(format!("cannot list it: {e}")))?;
    let empty = entries.next().is_none();
    let marked = CATALOG_MARKERS
        .iter()
        .any(|m| fs::symlink_metadata(out_dir.join(m)).is_ok_and(|m| m.is_file()));
    if empty || marked {
        Ok(true)
    } else {
        Err(refused(format!(
            "it is a non-empty directory that is not a pd-dsl catalog (no `{}`); \
             refusing to replace it: choose another `--out` or remove it yourself",
            CATALOG_MARKERS.join("` or `")
        )))
    }
}

/// Writes every artifact under `root` (a fresh staging directory).
fn stage(root: &Path, artifacts: &[Artifact]) -> Result<(), RenderError> {
    for a in artifacts {
        if a.path.as_os_str().is_empty()
            || a.path.is_absolute()
            || a.path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(RenderError::Layout {
                layout: a.path.display().to_string(),
                message: "artifact paths must be relative and plain".into(),
            });
        }
        let target = root.join(&a.path);
        if let Some(dir) = target.parent() {
            fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;
        }
        write_file(&target, a.contents.as_bytes())?;
        set_mode(&target, a.executable)?;
    }
    flush_to_disk(root, artifacts)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    use std::io::Write as _;
    let mut f = fs::File::create(path).map_err(io_err("create", path))?;
    f.write_all(bytes).map_err(io_err("write", path))
}

/// Flushes the staged files, so a full disk or an I/O error surfaces here,
/// before the swap, rather than as a truncated file after it. On Linux one
/// `syncfs` of the staging file system replaces an `fsync` per file (which
/// made writing a 1,000-layout catalog 3x slower); it reports write-back
/// errors since Linux 5.8.
#[cfg(target_os = "linux")]
fn flush_to_disk(root: &Path, _artifacts: &[Artifact]) -> Result<(), RenderError> {
    let dir = fs::File::open(root).map_err(io_err("open", root))?;
    rustix::fs::syncfs(&dir).map_err(|e| io_err("flush to disk", root)(e.into()))
}

#[cfg(not(target_os = "linux"))]
fn flush_to_disk(root: &Path, artifacts: &[Artifact]) -> Result<(), RenderError> {
    for a in artifacts {
        let path = root.join(&a.path);
        fs::File::open(&path)
            .and_then(|f| f.sync_all())
            .map_err(io_err("flush to disk", &path))?;
    }
    Ok(())
}

/// Atomically exchanges two directories; false when the platform or file
/// system cannot (the caller falls back to two renames).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> bool {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> bool {
    false
}

#[cfg(unix)]
fn set_dir_mode(path: &Path) -> Result<(), RenderError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).map_err(io_err("chmod", path))
}

#[cfg(not(unix))]
fn set_dir_mode(_path: &Path) -> Result<(), RenderError> {
    Ok(())
}

#[cfg(unix)]
fn set_mode(path: &Path, executable: bool) -> Result<(), RenderError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = if executable { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(io_err("chmod", path))
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _executable: bool) -> Result<(), RenderError> {
    Ok(())
}

/// How a catalog file is stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StaleKind {
    /// Should exist and does not.
    Missing,
    /// Exists with other contents (or another executable bit).
    Differs,
    /// Exists but is not generated.
    Extra,
}

impl fmt::Display for StaleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StaleKind::Missing => "missing",
            StaleKind::Differs => "differs",
            StaleKind::Extra => "extra",
        })
    }
}

/// One stale file of a catalog.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stale {
    /// Path relative to the catalog root.
    pub path: PathBuf,
    /// How it is stale.
    pub kind: StaleKind,
}

/// Compares `dir` with `artifacts`; empty means fresh. Sorted by path.
pub fn check_catalog(dir: &Path, artifacts: &[Artifact]) -> Vec<Stale> {
    let mut on_disk: Vec<PathBuf> = Vec::new();
    list_files(dir, Path::new(""), &mut on_disk);
    let expected: BTreeMap<&Path, &Artifact> =
        artifacts.iter().map(|a| (a.path.as_path(), a)).collect();
    let mut out = Vec::new();
    for a in artifacts {
        let full = dir.join(&a.path);
        match fs::read(&full) {
            Err(_) if !full.exists() => out.push(Stale {
                path: a.path.clone(),
                kind: StaleKind::Missing,
            }),
            Ok(bytes) if bytes == a.contents.as_bytes() && mode_matches(&full, a.executable) => {}
            _ => out.push(Stale {
                path: a.path.clone(),
                kind: StaleKind::Differs,
            }),
        }
    }
    for p in on_disk {
        if !expected.contains_key(p.as_path()) {
            out.push(Stale {
                path: p,
                kind: StaleKind::Extra,
            });
        }
    }
    out.sort();
    out
}

#[cfg(unix)]
fn mode_matches(path: &Path, executable: bool) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path)
        .map(|m| (m.permissions().mode() & 0o111 != 0) == executable)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn mode_matches(_path: &Path, _executable: bool) -> bool {
    true
}

fn list_files(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = rel.join(e.file_name());
        match e.file_type() {
            Ok(t) if t.is_dir() => list_files(root, &p, out),
            Ok(_) => out.push(p),
            Err(_) => {}
        }
    }
}
