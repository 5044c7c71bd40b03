//! The one error type of the core.

use std::fmt;
use std::sync::Arc;

/// An error from the core: a parse failure, an invalid interval, an unknown
/// grid or policy.
///
/// The message is one line that names the offending input and the reason,
/// ready to be shown to a user as it is.
///
/// Like jiff's error it is opaque and keeps its cause: a [`context`] is put
/// in front of the message and wraps the error it was given, and an error
/// that another library's error caused (a `jiff::Error`, a
/// `serde_json::Error`) keeps that error. [`std::error::Error::source`]
/// walks them, for logs; the message already says everything a user needs.
/// Cloning is cheap (the inside is shared).
///
/// Two errors are equal when their messages are.
///
/// [`context`]: Error::context
///
/// # Example
///
/// ```
/// use std::error::Error as _;
///
/// let err = gapless_core::parse_instant("2025-02-30", None).unwrap_err();
/// let field = err.context("field \"start\"");
/// assert_eq!(
///     field.to_string(),
///     r#"field "start": invalid instant "2025-02-30": day 30 is out of range for February 2025"#,
/// );
/// // The context wraps the error it was put in front of.
/// assert_eq!(
///     field.source().unwrap().to_string(),
///     r#"invalid instant "2025-02-30": day 30 is out of range for February 2025"#,
/// );
/// ```
#[derive(Clone)]
pub struct Error {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    /// The whole one-line message, any context in front included: what
    /// [`Error::message`] lends out.
    message: String,
    /// The error this one wraps, if any.
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl Error {
    /// An error with the given one-line message.
    pub fn new(message: impl Into<String>) -> Self {
        Error {
            inner: Arc::new(Inner {
                message: message.into(),
                source: None,
            }),
        }
    }

    /// An error about the text `input`: `invalid {what} "{input}": {reason}`.
    pub fn invalid(what: &str, input: &str, reason: impl fmt::Display) -> Self {
        Error::new(format!("invalid {what} {input:?}: {reason}"))
    }

    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.inner.message
    }

    /// This error with `context: ` put in front of its message, e.g. the
    /// field or line it came from. The result wraps this error: its
    /// [`source`](std::error::Error::source) is this error.
    #[must_use]
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error {
            inner: Arc::new(Inner {
                message: format!("{context}: {}", self.message()),
                source: Some(Arc::new(self)),
            }),
        }
    }

    /// This error, caused by `source` (the error of another library that
    /// the message describes): kept as its
    /// [`source`](std::error::Error::source).
    #[must_use]
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Arc::make_mut(&mut self.inner).source = Some(Arc::new(source));
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("message", &self.inner.message);
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

impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.message() == other.message()
    }
}

impl Eq for Error {}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The reason part of an [`Error`] under construction: words, or an error
/// that is the reason (kept as the cause).
pub(crate) trait Reason {
    /// The reason as an error of its own.
    fn into_error(self) -> Error;
}

impl Reason for Error {
    fn into_error(self) -> Error {
        self
    }
}

impl Reason for String {
    fn into_error(self) -> Error {
        Error::new(self)
    }
}

impl Reason for &str {
    fn into_error(self) -> Error {
        Error::new(self)
    }
}

/// jiff's words, with its error kept as the cause.
impl Reason for jiff::Error {
    fn into_error(self) -> Error {
        Error::new(self.to_string()).with_source(self)
    }
}

/// An [`Error`] whose message is `format!`'s, e.g.
/// `err!("month {month} is out of range (01 to 12)")`.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::error::Error::new(format!($($arg)*))
    };
}

pub(crate) use err;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn context_wraps_and_the_cause_is_kept() {
        let json = serde_json::from_str::<u8>("x").unwrap_err();
        let words = json.to_string();
        let e = Error::new(format!("not valid JSON: {words}")).with_source(json);
        let e = e.context("line 3");
        assert_eq!(e.message(), format!("line 3: not valid JSON: {words}"));
        assert_eq!(e.to_string(), e.message());
        let wrapped = e.source().expect("the error under the context");
        assert_eq!(wrapped.to_string(), format!("not valid JSON: {words}"));
        let cause = wrapped.source().expect("the JSON error");
        assert!(cause.is::<serde_json::Error>(), "{cause:?}");
        assert!(cause.source().is_none());
        // A clone shares its cause; equality is the message's.
        assert_eq!(e.clone(), e);
        assert!(e.clone().source().is_some());
        assert_ne!(e, Error::new("line 3"));
    }

    #[test]
    fn a_new_error_has_no_cause() {
        let e = Error::invalid("grid", "0h", "the count must be at least 1");
        assert_eq!(
            e.to_string(),
            r#"invalid grid "0h": the count must be at least 1"#
        );
        assert!(e.source().is_none());
    }
}
