//! The one error type of every question: a kind, a one-line message, and
//! where in a batch it happened.

use std::fmt;
use std::sync::Arc;

/// What kind of failure an [`Error`] is: it decides the exit code's meaning
/// and the HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is wrong: an instant, a range, a policy, an event (400).
    BadInput,
    /// The thing asked about does not exist (404).
    NotFound,
    /// An event id is already recorded with different content (409).
    Conflict,
    /// The caller may not do this: no or an unknown token (401), a scope
    /// that does not allow it (403).
    Denied,
    /// The ledger cannot be reached or used now; trying again later may
    /// work (503).
    Unavailable,
    /// A fault of the ledger or the server (500).
    Fault,
}

impl ErrorKind {
    /// Whether the caller's input caused it (HTTP 4xx) rather than the
    /// ledger or the server (5xx).
    pub fn is_client_error(self) -> bool {
        matches!(
            self,
            ErrorKind::BadInput | ErrorKind::NotFound | ErrorKind::Conflict | ErrorKind::Denied
        )
    }
}

/// How the items of a batch are counted in an error's [`Position`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Unit {
    /// NDJSON lines, blank ones included.
    Line,
    /// The items of a JSON array.
    Event,
}

impl Unit {
    /// The word for it in messages and in the HTTP `detail` (`line`,
    /// `event`).
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Line => "line",
            Unit::Event => "event",
        }
    }
}

/// Where in a batch an error is: `line 3`, `event 2` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// What is counted.
    pub unit: Unit,
    /// The 1-based number of the item.
    pub number: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.unit.as_str(), self.number)
    }
}

/// An error of a question or a write: its [`ErrorKind`], a one-line message
/// naming the input and the reason, optionally the [`Position`] of the bad
/// item of a batch, and the underlying cause when there is one.
///
/// It prints as the command line shows it, the position first:
/// `line 3: invalid instant "2025-13-01": …`.
///
/// # Example
///
/// ```
/// use gapless_api::{Error, ErrorKind, Position, Unit};
///
/// let e = Error::bad_input("missing field \"asset\"").at(Position { unit: Unit::Line, number: 3 });
/// assert_eq!(e.kind(), ErrorKind::BadInput);
/// assert_eq!(e.to_string(), "line 3: missing field \"asset\"");
/// assert_eq!(e.message(), "missing field \"asset\"");
/// ```
#[derive(Clone)]
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    position: Option<Position>,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// An error of `kind` with the one-line `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                // One line, whatever the cause wrote.
                message: message.into().replace('\n', " "),
                position: None,
                source: None,
            }),
        }
    }

    /// [`ErrorKind::BadInput`].
    pub fn bad_input(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::BadInput, message)
    }

    /// [`ErrorKind::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotFound, message)
    }

    /// [`ErrorKind::Conflict`].
    pub fn conflict(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conflict, message)
    }

    /// [`ErrorKind::Denied`].
    pub fn denied(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Denied, message)
    }

    /// [`ErrorKind::Unavailable`].
    pub fn unavailable(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Unavailable, message)
    }

    /// [`ErrorKind::Fault`].
    pub fn fault(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Fault, message)
    }

    /// This error at `position` of its batch.
    #[must_use]
    pub fn at(mut self, position: Position) -> Error {
        self.inner.position = Some(position);
        self
    }

    /// This error with `prefix: ` put in front of its message (the field or
    /// flag it is about).
    #[must_use]
    pub fn context(mut self, prefix: impl fmt::Display) -> Error {
        self.inner.message = format!("{prefix}: {}", self.inner.message);
        self
    }

    /// This error caused by `source` (kept for logs, never sent to a
    /// client).
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Error {
        self.inner.source = Some(Arc::new(source));
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.inner.kind
    }

    /// The message without the position.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// Where in its batch, if it is about one item.
    pub fn position(&self) -> Option<Position> {
        self.inner.position
    }

    /// Whether the caller's input caused it (see [`ErrorKind::is_client_error`]).
    pub fn is_client_error(&self) -> bool {
        self.inner.kind.is_client_error()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.position {
            Some(p) => write!(f, "{p}: {}", self.inner.message),
            None => f.write_str(&self.inner.message),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.inner.kind)
            .field("message", &self.inner.message);
        if let Some(p) = &self.inner.position {
            d.field("position", p);
        }
        if let Some(s) = &self.inner.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|s| s as &(dyn std::error::Error + 'static))
    }
}

/// Bad input, caused by the core's error (kept as the source).
impl From<gapless_core::Error> for Error {
    fn from(e: gapless_core::Error) -> Error {
        Error::bad_input(e.message()).with_source(e)
    }
}

/// The result type of every question.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_comes_first_and_the_message_is_one_line() {
        let e = Error::conflict("conflict:\nid x").at(Position {
            unit: Unit::Event,
            number: 2,
        });
        assert_eq!(e.to_string(), "event 2: conflict: id x");
        assert_eq!(e.message(), "conflict: id x");
        assert!(e.is_client_error());
        assert!(!Error::unavailable("down").is_client_error());
    }

    #[test]
    fn a_core_error_is_bad_input_caused_by_it() {
        let core = gapless_core::parse_instant("2025-02-30", None).unwrap_err();
        let e = Error::from(core.clone());
        assert_eq!(e.kind(), ErrorKind::BadInput);
        assert_eq!(e.message(), core.message());
        let source = std::error::Error::source(&e).expect("the core's error");
        assert_eq!(source.downcast_ref::<gapless_core::Error>(), Some(&core));
    }

    #[test]
    fn the_cause_is_kept() {
        let io = std::io::Error::other("disk on fire");
        let e = Error::fault("storage failure").with_source(io);
        let source = std::error::Error::source(&e).expect("a source");
        assert_eq!(source.to_string(), "disk on fire");
        assert_eq!(e.to_string(), "storage failure");
    }
}
