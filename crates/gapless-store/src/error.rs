//! What can go wrong in storage.

use std::sync::Arc;

/// A storage error. Messages are one line, name the input and never leak
/// SQL; [`StoreError::Unavailable`] and [`StoreError::Full`] name no
/// connection details either (the backend logs those).
///
/// Where the backend's own error caused it (SQLite's, PostgreSQL's, an I/O
/// error), that error is kept as the [`source`](std::error::Error::source):
/// for logs, which may name what a message must not.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// `(asset, id)` is stored with other content. `index` is the event's
    /// position in the batch (0-based).
    #[error(
        "conflict: event id {id:?} of asset {asset:?} is already recorded with different content"
    )]
    Conflict {
        /// Position in the batch, 0-based.
        index: usize,
        /// The asset.
        asset: String,
        /// The id.
        id: String,
    },
    /// A change the ledger refuses because of what it holds (a new
    /// definition for an existing rule).
    #[error("{0}")]
    Conflicting(String),
    /// Bad input that only storage can see (e.g. a bad declaration).
    #[error("{0}")]
    Invalid(String),
    /// The ledger cannot be opened: missing, unreadable, not a gapless ledger,
    /// a newer schema.
    #[error("cannot open ledger {location}: {reason}")]
    Open {
        /// The path or URL (without password).
        location: String,
        /// Why.
        reason: String,
        /// The backend's error, if one said so.
        #[source]
        source: Option<Cause>,
    },
    /// The ledger's database cannot be reached or the connection to it was
    /// lost (a server down or restarting, a network fault, no connection to
    /// be had): not the caller's fault, worth trying again later.
    #[error("{message}")]
    Unavailable {
        /// What is unavailable, without connection details.
        message: String,
        /// The backend's error, if one said so.
        #[source]
        source: Option<Cause>,
    },
    /// The ledger's storage is full (a full disk, a database out of space).
    #[error("{message}")]
    Full {
        /// What is full, without connection details.
        message: String,
        /// The backend's error, if one said so.
        #[source]
        source: Option<Cause>,
    },
    /// No ledger where one was to be opened without creating it.
    #[error("no ledger at {location}")]
    Missing {
        /// The path, or the URL (without password) and schema.
        location: String,
    },
    /// A fault of the backend (I/O, database) or of the ledger's own data.
    #[error("storage failure: {message}")]
    Backend {
        /// What failed, in one line without SQL.
        message: String,
        /// The backend's error, if one said so.
        #[source]
        source: Option<Cause>,
    },
}

/// The error of a backend that caused a [`StoreError`] (a `rusqlite::Error`,
/// a `tokio_postgres::Error`, a `std::io::Error`, …), shared so that the
/// storage error stays `Clone`: a group commit that fails gives every batch
/// the same error.
///
/// It dereferences to the error itself, so that
/// [`source`](std::error::Error::source) of a [`StoreError`] is the
/// backend's error (a downcast finds it), not a wrapper around it. It is one
/// thin pointer, so that a storage error, and every result of the store, is
/// no larger for carrying it.
#[derive(Clone)]
pub struct Cause(Arc<Box<dyn std::error::Error + Send + Sync>>);

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Cause {
    fn from(e: E) -> Cause {
        Cause(Arc::new(Box::new(e)))
    }
}

impl std::ops::Deref for Cause {
    type Target = dyn std::error::Error + Send + Sync + 'static;

    fn deref(&self) -> &Self::Target {
        &**self.0
    }
}

impl std::fmt::Debug for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self.0, f)
    }
}

/// The message of [`StoreError::Unavailable`].
pub(crate) const UNAVAILABLE: &str = "the ledger's database is unavailable";
/// The message of [`StoreError::Full`].
pub(crate) const FULL: &str = "the ledger's storage is full";

impl StoreError {
    /// [`StoreError::Unavailable`] saying `message`, caused by `source`.
    pub(crate) fn unavailable(message: impl Into<String>, source: impl Into<Cause>) -> StoreError {
        StoreError::Unavailable {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// [`StoreError::Full`] with its fixed message, caused by `source`.
    pub(crate) fn full(source: impl Into<Cause>) -> StoreError {
        StoreError::Full {
            message: FULL.into(),
            source: Some(source.into()),
        }
    }

    /// [`StoreError::Backend`] saying `message`, caused by `source`.
    pub(crate) fn backend(message: impl Into<String>, source: impl Into<Cause>) -> StoreError {
        StoreError::Backend {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// [`StoreError::Backend`] saying `message`, with no error of the backend
    /// behind it (the ledger's own data or state is wrong).
    pub(crate) fn fault(message: impl Into<String>) -> StoreError {
        StoreError::Backend {
            message: message.into(),
            source: None,
        }
    }
}

/// The ledger's own data breaks an invariant (a damaged file or schema):
/// a fault, with what is wrong.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::fault(format!("the ledger holds an invalid {what}"))
}
