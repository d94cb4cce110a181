//! The importer (`catalog import` / `catalog lint`) on arbitrary text: as an
//! e2e YAML config and as a set of 1-3 shell scripts (split on NUL), through
//! import → check → findings; every finding must lie inside the input it
//! names.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > pd_dsl_fuzz::MAX_INPUT {
        return;
    }
    if let Ok(text) = std::str::from_utf8(data) {
        pd_dsl_fuzz::run_import(text);
    }
});
