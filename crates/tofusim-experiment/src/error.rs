//! Configuration errors. Every error names the file, the key path and what
//! was expected, so the command line can print one line and exit 2.

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.line())]
pub struct ConfigError {
    /// The file (or `<command line>` for a system name given as an argument).
    pub file: String,
    /// Dotted key path, e.g. `network.shape[2]`.
    pub key: String,
    /// What was expected (and, where useful, what was found).
    pub expected: String,
}

impl ConfigError {
    /// The error, each part clipped so the message stays one readable line
    /// however long the value that caused it (a 200 KB string, a key
    /// thousands of characters long).
    pub fn new(file: &str, key: &str, expected: impl Into<String>) -> Self {
        Self {
            file: clip(file, 200),
            key: clip(key, 200),
            expected: clip(&expected.into(), 600),
        }
    }
}

impl ConfigError {
    /// A refused value given as an argument (a command's option, or a
    /// Python call's argument: the API relabels `<command line>` with its
    /// origin).
    pub fn argument(key: &str, message: impl std::fmt::Display) -> Self {
        Self::new("<command line>", key, message.to_string())
    }

    /// A lower crate's typed refusal of the value given for `key`: its
    /// message as the expectation.
    pub fn of(file: &str, key: &str, e: impl std::error::Error) -> Self {
        Self::new(file, key, e.to_string())
    }

    /// A refusal whose message already names the input and what was
    /// expected (the trace reader's): shown as it is.
    pub fn named(message: impl std::fmt::Display) -> Self {
        Self::new("", "", message.to_string())
    }
}

/// A trace's refusal names the trace, its rank and call itself.
impl From<tofusim_trace::TraceError> for ConfigError {
    fn from(e: tofusim_trace::TraceError) -> Self {
        Self::named(e)
    }
}

/// `s` cut to at most `max` characters, saying how long it was.
fn clip(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        s.to_string()
    } else {
        format!("{}… ({n} characters)", s.chars().take(max - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_clipped_to_one_line() {
        let long = "x".repeat(200_000);
        let e = ConfigError::new("f.toml", &long, format!("expected a number, found {long:?}"));
        assert!(e.to_string().chars().count() < 1_000);
        let n = "expected a number, found \"\"".len() + long.len();
        assert!(e.expected.ends_with(&format!("({n} characters)")));
        assert_eq!(ConfigError::new("f", "k", "short").to_string(), "f: k: short");
    }
}

impl ConfigError {
    /// The one line the command line prints: `file: key: expected`.
    fn line(&self) -> String {
        if self.file.is_empty() && self.key.is_empty() {
            // A refusal that names its input itself (a trace's reader).
            self.expected.clone()
        } else if self.key.is_empty() {
            format!("{}: {}", self.file, self.expected)
        } else {
            format!("{}: {}: {}", self.file, self.key, self.expected)
        }
    }
}



pub type Result<T> = std::result::Result<T, ConfigError>;
