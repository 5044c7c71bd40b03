//! Storage errors as the API's [`Error`]: the store says what failed, this
//! says what kind of failure it is for the caller.

use gapless_api::Error;
use gapless_store::StoreError;

/// `e` as an API error. A conflict's position is the batch's to add.
pub(crate) fn from_store(e: StoreError) -> Error {
    match &e {
        StoreError::Conflict { .. } | StoreError::Conflicting(_) => Error::conflict(e.to_string()),
        StoreError::Invalid(m) => Error::bad_input(m.clone()),
        // Its words name no connection details: they may reach a client.
        StoreError::Unavailable { .. } | StoreError::Full { .. } => {
            Error::unavailable(e.to_string())
        }
        // A ledger that cannot be opened while in use (a reader connection
        // of a file that went away): its path is for the log only.
        StoreError::Open { .. } => Error::unavailable("the ledger is unavailable").with_source(e),
        StoreError::Missing { .. } => Error::not_found(e.to_string()),
        StoreError::Backend { .. } => Error::fault(e.to_string()).with_source(e),
    }
}
