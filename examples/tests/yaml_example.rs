//! The YAML example file stays valid and derives what the macro would.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

#[test]
fn the_yaml_example_loads_and_places_like_the_macro() {
    let text = include_str!("../layouts/a3-1p1d.yaml");
    let layout = pd_dsl::load::from_yaml("a3-1p1d.yaml", text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(layout.node_count(), 2);
    assert_eq!(layout.placement.proxy.prefill.len(), 4);
    assert_eq!(layout.placement.proxy.decode.len(), 16);
    let broken = text.replace("tp: 4 }", "tp: 3 }");
    let err = pd_dsl::load::from_yaml("broken.yaml", &broken).expect_err("tp3 does not divide 16");
    assert!(err.to_string().contains("tp_divides_node"), "{err}");
}
