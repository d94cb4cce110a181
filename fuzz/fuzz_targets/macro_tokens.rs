//! `layout! { … }` on arbitrary text that lexes as Rust tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > pd_dsl_fuzz::MAX_INPUT {
        return;
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = pd_dsl_fuzz::run_macro(text);
    }
});
