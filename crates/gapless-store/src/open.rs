//! Picking a backend from a `--db` value.

use crate::{PostgresStore, Result, SqliteStore, Store};

/// Open the ledger named by `db`: a `postgres://` or `postgresql://` URL for
/// PostgreSQL, anything else is the path of a SQLite file (created if
/// missing).
///
/// # Errors
///
/// [`crate::StoreError::Open`] when the ledger cannot be opened or is not a
/// gapless ledger; [`crate::StoreError::Unavailable`] when its PostgreSQL
/// server cannot be reached; [`crate::StoreError::Full`] when there is no
/// room to create it.
pub fn open(db: &str) -> Result<Box<dyn Store>> {
    if is_postgres_url(db) {
        return Ok(Box::new(PostgresStore::open(db)?));
    }
    Ok(Box::new(SqliteStore::open(db)?))
}

/// Open the ledger named by `db` as [`open`] does, but only one that
/// exists: a SQLite file that is not there, or a PostgreSQL schema that
/// does not exist, is [`crate::StoreError::Missing`], and nothing is
/// created. For the questions, which must never leave an empty ledger
/// behind a typo.
///
/// # Errors
///
/// [`crate::StoreError::Missing`]; else as [`open`].
pub fn open_existing(db: &str) -> Result<Box<dyn Store>> {
    if is_postgres_url(db) {
        return Ok(Box::new(PostgresStore::open_existing(db)?));
    }
    if !std::path::Path::new(db).exists() {
        return Err(crate::StoreError::Missing {
            location: db.to_string(),
        });
    }
    Ok(Box::new(SqliteStore::open(db)?))
}

/// Whether `db` names a PostgreSQL database rather than a file.
fn is_postgres_url(db: &str) -> bool {
    let scheme = db.split_once("://").map_or("", |(s, _)| s);
    scheme.eq_ignore_ascii_case("postgres") || scheme.eq_ignore_ascii_case("postgresql")
}
