//! `launch_online_dp.py`: our launcher with upstream's CLI contract (facts
//! §1.1-1.3) that fails fast. The file is static: every layout-specific value
//! reaches it as a command-line argument from `run.sh`.

/// The launcher source.
pub fn launch_online_dp_py() -> String {
    include_str!("launch_online_dp.py").to_owned()
}
