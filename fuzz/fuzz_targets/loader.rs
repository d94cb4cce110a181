//! The runtime loader (YAML and JSON) on arbitrary bytes; accepted layouts
//! are rendered.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > pd_dsl_fuzz::MAX_INPUT {
        return;
    }
    if let Ok(text) = std::str::from_utf8(data) {
        pd_dsl_fuzz::run_loader(text);
    }
});
