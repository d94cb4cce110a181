//! Stand-ins for rehearsals: small, fast-starting programs that let a
//! layout's generated scripts (`run.sh`, the `run_dp_template_*.sh`
//! templates, `launch_online_dp.py`, `proxy.sh`, `preflight.sh`,
//! `verify.sh`, `bench.sh`) run **unmodified** on one machine, with every
//! node of the layout played by its own loopback address `127.0.0.N`.
//!
//! | binary      | stands in for |
//! |-------------|---------------|
//! | `vllm`      | `vllm serve MODEL …` and `vllm bench serve …` |
//! | `pd-proxy`  | `load_balance_proxy_server_example.py` (pull mode: P first, then D) |
//! | `npu-smi`   | `npu-smi info [-l]` |
//! | `hccn_tool` | `hccn_tool -i N -link/-net_health/-ip/-lldp/-gateway/-netdetect -g` |
//!
//! Each stand-in's `main` is a library function ([`standin`]), so one
//! executable can play all four by the name it is invoked under
//! ([`standin::dispatch`]): the `catalog` binary does, and `catalog rehearse
//! NAME` ([`rehearsal`]) puts symlinks named after the stand-ins to it first
//! on `PATH` — no separate build step. This crate's own four binaries are
//! thin wrappers over the same functions ([`locate`] finds them).
//!
//! # Environment contract (`PD_STANDIN_*`)
//!
//! | variable | read by | meaning (default) |
//! |---|---|---|
//! | `PD_STANDIN_NODE_IP` | `vllm` | this node's address (e.g. `127.0.0.3`). When set, the API server binds it instead of `--host` (generated scripts say `0.0.0.0`, which would clash between nodes on one machine); it is also the address the kv handshake span is bound on, the `remote_host` a prefill rank reports, and the host matched against the expectation file. Unset: `--host` unless it is a wildcard, else `127.0.0.1`. |
//! | `PD_STANDIN_NODE` | `vllm` | node name used in counter file names (unset: the node index from the expectation file, else the node IP). |
//! | `PD_STANDIN_NPUS` | `vllm`, `npu-smi` | NPUs per node (16). |
//! | `PD_STANDIN_EXPECT` | `vllm` | path of the expectation file (schema below); unset = no placement check. |
//! | `PD_STANDIN_MASTER_TIMEOUT` | `vllm` | seconds a non-master DP rank waits for `dp_master:rpc_port` (20; fractions allowed). |
//! | `PD_STANDIN_STATE_DIR` | `vllm` | directory for counter files; unset = none written. |
//! | `PD_STANDIN_FAIL_AFTER_MS` | `vllm` | fault injection: exit 9 this many ms after start. |
//! | `PD_STANDIN_BLOCKED` | `vllm` | fault injection: comma/space separated `host:port` pairs this process cannot connect to, as if a firewall dropped them (a non-master DP rank then exits 4, `DP master … unreachable`). |
//! | `PD_STANDIN_IMAGE` | `vllm` | the vllm-ascend image tag: `vllm serve` accepts exactly the flags of the vLLM version it ships ([`serve_flags`], from the embedded `upstream/facts/vllm/<version>.json`), and `kv_transfer_params` follow its connector field set ([`kv_params`]); unset = the newest image of the table; an unknown tag exits 2. |
//! | `PD_STANDIN_LATENCY_MS` | `vllm` | milliseconds each completion takes (0), so that concurrent requests overlap at a least-loaded proxy. |
//! | `PD_STANDIN_PROXY_POLICY` | `pd-proxy` | `round-robin` (default) or upstream's `least-loaded` (ties to list order), see [`standin::proxy`]. |
//! | `PD_STANDIN_CANN_LIBS` | `vllm` | comma separated libraries that must be files in a directory of `LD_LIBRARY_PATH` before `vllm serve` starts (`libascendcl.so`); the image's `set_env.sh` puts them there ([`image`]). |
//! | `PD_STANDIN_LINK_DOWN` | `hccn_tool` | comma/space separated device ids whose link reports `DOWN`. |
//!
//! # Counter files
//!
//! Once a `vllm` process serves, it writes `$PD_STANDIN_STATE_DIR/<node>-<rank>.served` containing the
//! decimal number of completion requests it answered with 200 (starting at `0`, rewritten atomically
//! after each one). `<rank>` is the process's `--data-parallel-rank` (external DP), else its
//! `--data-parallel-start-rank` (native DP, default 0). A file that exists means "this process came up".
//! Next to it, `<node>-<rank>.pid` holds the process id (the rehearsal's `--kill` uses it).
//! A headless process (native DP, non-first node of a mixed engine) writes `0` and never serves; under
//! native DP the API process answers for all its engine's ranks, so "every rank served ≥ 1" applies to
//! the processes that have an API port.
//!
//! # Exit codes of `vllm serve`
//!
//! | code | meaning |
//! |---|---|
//! | 2 | bad argv (a flag the image's vLLM does not define, missing or unparsable value), bad JSON argument, or a config rule violated (kv role, connector, extra-config shape, speculative tokens, balance/recompute scheduling) |
//! | 3 | the process does not match what the expectation file says its node must run |
//! | 4 | `DP master <addr>:<port> unreachable` within `PD_STANDIN_MASTER_TIMEOUT` |
//! | 5 | a bind failed (`cannot bind <ip>:<port> (<what>)`): API port, DP RPC port or kv handshake port |
//! | 6 | `ASCEND_RT_VISIBLE_DEVICES` wrong (count ≠ TP × local ranks, duplicate, or id ≥ `PD_STANDIN_NPUS`) |
//! | 7 | a CANN library of `PD_STANDIN_CANN_LIBS` is not on `LD_LIBRARY_PATH` (the image's `set_env.sh` was not sourced), as the real `vllm` fails to load `libascendcl.so` |
//! | 9 | `PD_STANDIN_FAIL_AFTER_MS` elapsed |
//!
//! SIGTERM/SIGINT keep their default action (immediate termination), so a stand-in stops at once.
//!
//! # Expectation file (`PD_STANDIN_EXPECT`)
//!
//! JSON, written by the rehearsal from the layout's placement ([`Expectation`]); a bare array of
//! ranks is accepted too:
//!
//! ```text
//! {
//!   "version": 1,
//!   "layout": "family/variant",             informational
//!   "ranks": [                              one entry per DP rank of every engine
//!     {
//!       "node": 0,                          node index in cluster order
//!       "node_ip": "127.0.0.1",             the PD_STANDIN_NODE_IP that node's processes get
//!       "role": "prefill",                  "prefill" | "decode" | "mixed"
//!       "engine": 0,                        engine index (informational)
//!       "engine_id": "0",                   kv_transfer_config.engine_id (string or number; null/absent = not checked)
//!       "dp_size": 2,                       --data-parallel-size (1 when the engine has no DP)
//!       "tp": 8,                            --tensor-parallel-size
//!       "dp_rank": 0,                       global DP rank
//!       "devices": [0,1,2,3,4,5,6,7],       this rank's ASCEND_RT_VISIBLE_DEVICES
//!       "api_port": 7100,                   API port; null for a headless/non-API mixed rank
//!       "dp_master_ip": "127.0.0.1",        --data-parallel-address (node_ip of the engine's first node)
//!       "rpc_port": 13389,                  --data-parallel-rpc-port; null = not checked
//!       "kv_port": 30000                    kv_transfer_config.kv_port (engine base); null for mixed
//!     }
//!   ]
//! }
//! ```
//!
//! A `vllm serve` process is matched by (host IP, DP rank): its ranks are `[--data-parallel-rank]`
//! under external DP, else `start .. start + local` (`--data-parallel-start-rank`, default 0;
//! `--data-parallel-size-local`, default `--data-parallel-size`). For each, an entry with that
//! `node_ip` and `dp_rank` must exist and agree on role (from `kv_role`), `dp_size`, `tp`,
//! `dp_master_ip` (checked when DP > 1, except that one native-DP process holding every rank may omit `--data-parallel-address`, as vLLM then uses the local host), `rpc_port`, `kv_port`, `engine_id`; the process's
//! devices must equal the concatenation of its ranks' `devices`, and its `--port` the first rank's
//! `api_port` (when not headless). Any difference exits 3 naming node and rank.
//!
//! # DP master, kv span, API
//!
//! In a DP group (DP > 1) the process holding rank 0 (external DP: `--data-parallel-rank 0`;
//! native DP: the non-headless process) binds `--data-parallel-address:--data-parallel-rpc-port`;
//! every other process connects to it, retrying, within the timeout. A kv producer (V1, Hybrid) or
//! a kv consumer (Layerwise) binds every port of its ranks' handshake spans
//! `[kv_port + r·tp, kv_port + (r+1)·tp − 1]` on the node IP. The API port is bound last.
//!
//! A prefill rank (V1, Hybrid) returns `kv_transfer_params` only when the request's own
//! `kv_transfer_params` ask for remote decode (`do_remote_decode: true`, as the proxy sends), in the
//! connector's field set for `PD_STANDIN_IMAGE` ([`kv_params`]: `remote_request_id`,
//! `remote_engine_id`, `remote_host`, `remote_port`, block ids per KV cache group,
//! `remote_ptp_size`, …). A decode rank answers a completion only when the request carries
//! parameters the connector would use: `do_remote_prefill: true`, every key it reads with `[]`,
//! block ids per KV group covering the prompt, `remote_ptp_size` equal to the extra-config's
//! prefill TP (else 400 `kv_transfer_params refused by <connector>: …`), and a
//! `remote_host:remote_port` that accepts a TCP connection (a live prefill rank's first handshake
//! port; else 400 `kv_transfer_params do not point at a live prefill rank`). Under
//! `MooncakeLayerwiseConnector` (push mode, P connects to D) any `kv_transfer_params` object is
//! enough.

pub mod expect;
pub mod facts;
pub mod http;
pub mod image;
pub mod k8s_env;
pub mod kv_params;
pub mod rehearsal;
pub mod serve_flags;
pub mod standin;

pub use expect::{Expectation, ExpectedRank};

use std::path::{Path, PathBuf};

/// The stand-in binaries, as named on `PATH`.
pub const BINARIES: &[&str] = &["vllm", "pd-proxy", "npu-smi", "hccn_tool"];

/// The directory holding the built stand-ins, searched next to the current
/// executable and in its parent (a test or bench binary lives in
/// `target/<profile>/deps/`, the stand-ins in `target/<profile>/`). `None`
/// when some stand-in is missing from both (build with
/// `cargo build -p pd-rehearse`).
pub fn locate() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    locate_from(dir)
}

/// [`locate`] starting from a given directory.
pub fn locate_from(dir: &Path) -> Option<PathBuf> {
    let mut candidates = vec![dir.to_path_buf()];
    if let Some(parent) = dir.parent() {
        candidates.push(parent.to_path_buf());
    }
    candidates
        .into_iter()
        .find(|d| BINARIES.iter().all(|b| d.join(exe_name(b)).is_file()))
}

/// Every stand-in's path in `dir`.
pub fn binary_paths(dir: &Path) -> Vec<PathBuf> {
    BINARIES.iter().map(|b| dir.join(exe_name(b))).collect()
}

fn exe_name(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// Layouts the unit tests of several modules share.
#[cfg(test)]
#[allow(clippy::panic)]
mod test_layouts {
    /// DeepSeek-V3.1-Terminus w4a8 1P1D on A3 at image v0.21.0rc1 (a build
    /// without a copy of its config).
    pub(crate) fn deepseek_v3_1_1p1d() -> pd_dsl::Layout {
        let spec = pd_dsl::layout! {
            name: "rehearsal/a3-1p1d-image",
            model: deepseek_v3_1_terminus_w4a8_mtp_quarot,
            hardware: a3,
            image: "v0.21.0rc1",
            topology: <prefill 1 x dp2tp8; decode 1 x dp16tp1;>,
            serve: { expert_parallel: true },
            connector: mooncake_v1 { kv_port: { prefill: 36100, decode: 36300 } },
            ports: { api: 7100, dp_rpc: 12321 },
            proxy: { port: 1999 },
            provenance: { recorded: "2026-12-01" },
        };
        pd_dsl::check(&spec).unwrap_or_else(|e| panic!("{e}"))
    }
}
