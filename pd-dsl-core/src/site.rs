//! Where a value came from, so every rule can point at it.
//!
//! The macro gives every token it lowers a [`Site`] and keeps the matching
//! `proc_macro2::Span` on its side; the runtime loader gives sites to the
//! fields of a YAML/JSON document and keeps their line and column. The rule
//! code only ever sees sites, which is what lets the macro and the runtime run
//! the very same checks.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An opaque handle to the place a value was written. `Site::NONE` means
/// "not written anywhere" (a default, or a value built in code).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Site(pub u32);

impl Site {
    /// No source position: errors about it point at the whole layout.
    pub const NONE: Site = Site(0);

    /// True when the value was written somewhere the caller can point at.
    pub fn is_known(self) -> bool {
        self != Site::NONE
    }
}

/// A value with the site it was written at. Serializes as the bare value.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Spanned<T> {
    /// The value itself.
    pub value: T,
    /// Where it was written.
    pub site: Site,
}

impl<T> Spanned<T> {
    /// A value written at `site`.
    pub fn new(value: T, site: Site) -> Self {
        Spanned { value, site }
    }

    /// A value with no source position (built in code).
    pub fn bare(value: T) -> Self {
        Spanned {
            value,
            site: Site::NONE,
        }
    }
}

impl<T> From<T> for Spanned<T> {
    fn from(value: T) -> Self {
        Spanned::bare(value)
    }
}

impl From<&str> for Spanned<String> {
    fn from(value: &str) -> Self {
        Spanned::bare(value.to_owned())
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<T: Serialize> Serialize for Spanned<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Spanned::bare)
    }
}
