//! Every rule's fixed case (`tests/ui/fixed/<rule>.rs`, the minimal fix of
//! its compile-fail case) compiles: `layout!` accepts each. `build.rs` lists
//! them and each is a module of this one test binary (by `#[path]`), so the
//! macro runs on the file itself; trybuild's pass cases would link one
//! binary per rule. `ui.rs` holds that every compile-fail case has its fix.

include!(concat!(env!("OUT_DIR"), "/fixed_cases.rs"));

/// Compiling this binary is the check (a fixed case the macro refuses fails
/// the build with the rule's error in that file); this test holds that every
/// file of `ui/fixed/` was among the modules compiled.
#[test]
fn every_fixed_case_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/fixed");
    let on_disk = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .count();
    assert_eq!(
        FIXED.len(),
        on_disk,
        "every file of tests/ui/fixed/ is compiled here (a file whose stem is not a snake_case name is skipped by build.rs)"
    );
    for rule in FIXED {
        assert!(
            dir.join(format!("{rule}.rs")).is_file(),
            "{rule}: compiled but not in tests/ui/fixed/"
        );
    }
}
