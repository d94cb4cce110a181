//! The stand-ins' entry points, as library functions so that one executable
//! can play all of them (busybox style, see [`dispatch`]): the `catalog`
//! binary does, and so do this crate's thin `vllm`, `pd-proxy`, `npu-smi`
//! and `hccn_tool` binaries.

use std::ffi::OsStr;
use std::path::Path;

pub mod hccn_tool;
pub mod npu_smi;
pub mod proxy;
pub mod vllm;

/// A stand-in's `main`: takes the arguments after the program name; exits
/// the process itself on failure, returns on success.
pub type Main = fn(Vec<String>);

/// The stand-in called `name` (a [`crate::BINARIES`] entry), if any.
pub fn by_name(name: &str) -> Option<Main> {
    match name {
        "vllm" => Some(vllm::main),
        "pd-proxy" => Some(proxy::main),
        "npu-smi" => Some(npu_smi::main),
        "hccn_tool" => Some(hccn_tool::main),
        // Cluster DNS of `rehearse --k8s-env` (see `crate::k8s_env`).
        "getent" => Some(crate::k8s_env::getent_main),
        _ => None,
    }
}

/// Multi-call dispatch: when `argv0`'s file name (without the platform's
/// executable suffix) names a stand-in, runs it with the remaining arguments
/// and returns `true`; otherwise returns `false` and does nothing.
pub fn dispatch(argv0: &OsStr, rest: impl Iterator<Item = String>) -> bool {
    let Some(name) = Path::new(argv0).file_name().and_then(OsStr::to_str) else {
        return false;
    };
    let name = name
        .strip_suffix(std::env::consts::EXE_SUFFIX)
        .filter(|_| !std::env::consts::EXE_SUFFIX.is_empty())
        .unwrap_or(name);
    match by_name(name) {
        Some(main) => {
            main(rest.collect());
            true
        }
        None => false,
    }
}
