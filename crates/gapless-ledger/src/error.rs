//! Storage errors as the API's [`Error`]: the store says what failed, this
//! says what kind of failure it is for the caller.

use gapless_api::Error;
use gapless_store::StoreError;

/// `e` as an API error. A conflict's position is the batch's to add.
pub(crate) fn from_store(e: StoreError) -> Error {
    match &e {
        StoreError::Conflict { .. } => Error::conflict(e.to_string()),
        StoreError::Invalid(m) => Error::bad_input(m.clone()),
        StoreError::Open { .. } | StoreError::Unavailable(_) | StoreError::Full(_) => {
            Error::unavailable(e.to_string())
        }
        StoreError::Backend(_) => Error::fault(e.to_string()).with_source(e),
    }
}
