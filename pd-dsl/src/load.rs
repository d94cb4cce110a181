//! Layouts kept in files: YAML or JSON, validated by the same rules as
//! `layout!`.

use crate::{Diagnostics, Layout, LayoutSpec, check};
use std::fmt;

/// Why a layout file could not be used.
#[derive(Debug)]
pub enum LoadError {
    /// The text is not a well-formed layout document.
    Parse {
        /// File name (or `<input>`).
        file: String,
        /// What the parser said, with line and column.
        message: String,
    },
    /// The layout parsed but breaks rules.
    Rules {
        /// File name (or `<input>`).
        file: String,
        /// Every violation.
        diagnostics: Diagnostics,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Parse { file, message } => write!(f, "{file}: {message}"),
            LoadError::Rules { file, diagnostics } => {
                for (i, d) in diagnostics.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "{file}: {}: {d}", d.field)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// Parses a YAML layout document (JSON is YAML too) without checking rules.
pub fn parse_yaml(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    serde_saphyr::from_str(text).map_err(|e| LoadError::Parse {
        file: file.to_owned(),
        message: e.to_string(),
    })
}

/// Parses a JSON layout document without checking rules.
pub fn parse_json(file: &str, text: &str) -> Result<LayoutSpec, LoadError> {
    serde_json::from_str(text).map_err(|e| LoadError::Parse {
        file: file.to_owned(),
        message: e.to_string(),
    })
}

/// Parses and checks a YAML (or JSON) layout document.
pub fn from_yaml(file: &str, text: &str) -> Result<Layout, LoadError> {
    let spec = parse_yaml(file, text)?;
    check(&spec).map_err(|diagnostics| LoadError::Rules {
        file: file.to_owned(),
        diagnostics,
    })
}
