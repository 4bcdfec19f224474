//! Configuration errors. Every error names the file, the key path and what
//! was expected, so the command line can print one line and exit 2.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<command line>` for a system name given as an argument).
    pub file: String,
    /// Dotted key path, e.g. `network.shape[2]`.
    pub key: String,
    /// What was expected (and, where useful, what was found).
    pub expected: String,
}

impl ConfigError {
    pub fn new(file: &str, key: &str, expected: impl Into<String>) -> Self {
        Self {
            file: file.to_string(),
            key: key.to_string(),
            expected: expected.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}: {}", self.file, self.expected)
        } else {
            write!(f, "{}: {}: {}", self.file, self.key, self.expected)
        }
    }
}

impl std::error::Error for ConfigError {}

pub type Result<T> = std::result::Result<T, ConfigError>;
