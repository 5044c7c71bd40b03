//! What can go wrong in storage.

/// A storage error. Messages are one line, name the input and never leak
/// SQL; [`StoreError::Unavailable`] and [`StoreError::Full`] name no
/// connection details either (the backend logs those).
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
    },
    /// The ledger's database cannot be reached or the connection to it was
    /// lost (a server down or restarting, a network fault, no connection to
    /// be had): not the caller's fault, worth trying again later.
    #[error("{0}")]
    Unavailable(String),
    /// The ledger's storage is full (a full disk, a database out of space).
    #[error("{0}")]
    Full(String),
    /// No ledger where one was to be opened without creating it.
    #[error("no ledger at {location}")]
    Missing {
        /// The path, or the URL (without password) and schema.
        location: String,
    },
    /// A fault of the backend (I/O, database).
    #[error("storage failure: {0}")]
    Backend(String),
}

/// The message of [`StoreError::Unavailable`].
pub(crate) const UNAVAILABLE: &str = "the ledger's database is unavailable";
/// The message of [`StoreError::Full`].
pub(crate) const FULL: &str = "the ledger's storage is full";

/// The ledger's own data breaks an invariant (a damaged file or schema):
/// a fault, with what is wrong.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("the ledger holds an invalid {what}"))
}
