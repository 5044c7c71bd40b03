//! Storage errors as the API's [`Error`]: the store says what failed, this
//! says what kind of failure it is for the caller. The one mapping, for the
//! ledger's questions and writes, the command line and the deliverer; the
//! storage error stays the API error's source (for logs).

use gapless_api::Error;
use gapless_store::StoreError;

/// `e`, a failure of a ledger in use, as an API error caused by it.
///
/// | storage error | kind | message |
/// |---|---|---|
/// | `Conflict`, `Conflicting` | conflict | its own (a conflict's position is the batch's to add) |
/// | `Invalid` | bad input | its own |
/// | `Unavailable`, `Full` | unavailable | its own, which names no connection details |
/// | `Open` | unavailable | `the ledger is unavailable` |
/// | `Missing` | not found | its own |
/// | `Backend` | fault | its own |
///
/// A ledger in use that cannot be opened again (a reader connection of a
/// file that went away) names its path and why only in the source: the
/// message may reach a client. Opening a ledger someone named is
/// [`from_open`].
pub fn from_store(e: StoreError) -> Error {
    let error = match &e {
        StoreError::Conflict { .. } | StoreError::Conflicting(_) => Error::conflict(e.to_string()),
        StoreError::Invalid(m) => Error::bad_input(m.clone()),
        StoreError::Unavailable { .. } | StoreError::Full { .. } => {
            Error::unavailable(e.to_string())
        }
        StoreError::Open { .. } => Error::unavailable("the ledger is unavailable"),
        StoreError::Missing { .. } => Error::not_found(e.to_string()),
        StoreError::Backend { .. } => Error::fault(e.to_string()),
    };
    error.with_source(e)
}

/// `e`, a failure to open the ledger that the caller named (`--db`), as an
/// API error caused by it: as [`from_store`], except that a ledger that
/// cannot be opened says where and why (`cannot open ledger PATH: not a
/// gapless ledger …`), the caller's own path.
pub fn from_open(e: StoreError) -> Error {
    match e {
        StoreError::Open { .. } => Error::unavailable(e.to_string()).with_source(e),
        other => from_store(other),
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use gapless_api::ErrorKind;

    use super::*;

    fn open_error() -> StoreError {
        StoreError::Open {
            location: "/srv/ledger.db".into(),
            reason: "not a gapless ledger".into(),
            source: None,
        }
    }

    #[test]
    fn kinds_and_messages() {
        let cases = [
            (
                StoreError::Conflicting("rule \"r\" exists".into()),
                ErrorKind::Conflict,
                "rule \"r\" exists",
            ),
            (
                StoreError::Invalid("bad".into()),
                ErrorKind::BadInput,
                "bad",
            ),
            (
                StoreError::Missing {
                    location: "x.db".into(),
                },
                ErrorKind::NotFound,
                "no ledger at x.db",
            ),
            (
                StoreError::Backend {
                    message: "disk on fire".into(),
                    source: None,
                },
                ErrorKind::Fault,
                "storage failure: disk on fire",
            ),
            (
                open_error(),
                ErrorKind::Unavailable,
                "the ledger is unavailable",
            ),
        ];
        for (store, kind, message) in cases {
            let e = from_store(store.clone());
            assert_eq!((e.kind(), e.message()), (kind, message), "{store:?}");
            let source = e.source().expect("the storage error");
            assert_eq!(source.to_string(), store.to_string());
        }
    }

    /// Opening says which ledger and why; every other error is as in use.
    #[test]
    fn opening_names_the_ledger() {
        let e = from_open(open_error());
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert_eq!(
            e.message(),
            "cannot open ledger /srv/ledger.db: not a gapless ledger"
        );
        let e = from_open(StoreError::Missing {
            location: "x.db".into(),
        });
        assert_eq!(
            (e.kind(), e.message()),
            (ErrorKind::NotFound, "no ledger at x.db")
        );
    }
}
