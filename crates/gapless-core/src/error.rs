//! The one error type of the core.

/// An error from the core: a parse failure, an invalid interval, an unknown
/// grid or policy.
///
/// The message is one line that names the offending input and the reason,
/// ready to be shown to a user as it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with the given one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
        }
    }

    /// An error about the text `input`: `invalid {what} "{input}": {reason}`.
    pub fn invalid(what: &str, input: &str, reason: impl std::fmt::Display) -> Self {
        Error::new(format!("invalid {what} {input:?}: {reason}"))
    }

    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// This error with `context: ` put in front of its message, e.g. the
    /// field or line it came from.
    #[must_use]
    pub fn context(self, context: impl std::fmt::Display) -> Self {
        Error::new(format!("{context}: {}", self.message))
    }
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
