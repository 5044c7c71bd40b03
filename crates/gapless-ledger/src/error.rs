//! What can go wrong answering a question.

use gapless_store::StoreError;

/// An error of a ledger operation, classified for exit codes and HTTP
/// statuses. The message is one line naming the input and the reason.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// The input is wrong (bad instant, interval, policy, event line...).
    #[error("{0}")]
    BadInput(String),
    /// An event id is already recorded with different content.
    #[error("{0}")]
    Conflict(String),
    /// The ledger cannot be opened or used.
    #[error("{0}")]
    Unavailable(String),
    /// A fault of the storage backend.
    #[error("{0}")]
    Fault(String),
}

impl LedgerError {
    /// Whether the caller's input caused it (exit 2 / HTTP 4xx) rather than
    /// the server (HTTP 5xx).
    pub fn is_client_error(&self) -> bool {
        matches!(self, LedgerError::BadInput(_) | LedgerError::Conflict(_))
    }
}

impl From<gapless_core::Error> for LedgerError {
    fn from(e: gapless_core::Error) -> Self {
        LedgerError::BadInput(e.to_string())
    }
}

impl From<StoreError> for LedgerError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Conflict { .. } => LedgerError::Conflict(e.to_string()),
            StoreError::Invalid(m) => LedgerError::BadInput(m),
            StoreError::Open { .. } => LedgerError::Unavailable(e.to_string()),
            StoreError::Unavailable(_) | StoreError::Full(_) => {
                LedgerError::Unavailable(e.to_string())
            }
            StoreError::Backend(_) => LedgerError::Fault(e.to_string()),
        }
    }
}
