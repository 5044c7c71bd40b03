//! What can go wrong in storage.

/// A storage error. Messages are one line, name the input and never leak
/// SQL.
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
    /// Bad input that only storage can see (e.g. a bad declaration).
    #[error("{0}")]
    Invalid(String),
    /// The ledger cannot be opened: missing, unreadable, not a gapless ledger.
    #[error("cannot open ledger {location}: {reason}")]
    Open {
        /// The path or URL (without password).
        location: String,
        /// Why.
        reason: String,
    },
    /// A fault of the backend (I/O, database).
    #[error("storage failure: {0}")]
    Backend(String),
}

/// The ledger's own data breaks an invariant (a damaged file or schema):
/// a fault, with what is wrong.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(format!("the ledger holds an invalid {what}"))
}
