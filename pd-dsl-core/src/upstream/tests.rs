//! Tests of the facts loader.

use super::*;

#[test]
fn every_image_embeds_its_own_release() {
    assert_eq!(errors(), Vec::<&str>::new());
    for img in &IMAGES {
        let r = release(img);
        assert!(r.is_some(), "{} has no facts", img.tag);
        assert_eq!(
            r.map(|r| format!("v{}", r.version)).as_deref(),
            Some(img.tag)
        );
    }
}

#[test]
fn cann_is_the_base_image_version() {
    let v = |tag: &str| {
        crate::tables::image(tag)
            .and_then(release)
            .and_then(Release::cann)
    };
    assert_eq!(v("v0.18.0"), Some("8.5.1"));
    assert_eq!(v("v0.23.0"), Some("9.1.0"));
    assert_eq!(v("v0.24.0rc1"), Some("9.0.1"));
    assert_eq!(v("v0.30.0rc2"), Some("9.2.0"));
}

#[test]
fn describe_names_runs_of_rows() {
    let imgs = |tags: &[&str]| -> Vec<&'static Image> {
        tags.iter()
            .filter_map(|t| crate::tables::image(t))
            .collect()
    };
    assert_eq!(describe(&imgs(&["v0.23.0"])), "v0.23.0");
    assert_eq!(
        describe(&imgs(&["v0.20.2rc1", "v0.21.0rc1", "v0.22.1rc1"])),
        "v0.20.2rc1 to v0.22.1rc1"
    );
    assert_eq!(
        describe(&imgs(&["v0.18.0", "v0.23.0rc1", "v0.23.0", "v0.30.0rc2"])),
        "v0.18.0, v0.23.0rc1, v0.23.0 and v0.30.0rc2"
    );
    assert_eq!(describe(&[]), "no image of the table");
}
