//! PostgreSQL errors as storage errors: which are worth another try, which
//! mean the connection is gone, and one-line descriptions without SQL.

use postgres::error::SqlState;

use super::pool::{APPEND_TRIES, LOCK_TIMEOUT};
use crate::StoreError;

/// A failure inside the backend: a database error (which may be retried) or
/// a finished storage error.
#[derive(Debug)]
pub(crate) enum Fail {
    Pg(postgres::Error),
    /// The commit itself failed: the outcome is unknown, never retried.
    Commit(postgres::Error),
    Store(StoreError),
}

impl From<postgres::Error> for Fail {
    fn from(e: postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail::Store(e)
    }
}

impl From<Fail> for StoreError {
    fn from(f: Fail) -> StoreError {
        match f {
            Fail::Pg(e) | Fail::Commit(e) => StoreError::Backend(describe(&e)),
            Fail::Store(e) => e,
        }
    }
}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> StoreError {
        StoreError::Backend(describe(&e))
    }
}

/// The error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out.replace('\n', " ")
}

/// A one-line description of a PostgreSQL error, without SQL.
pub(crate) fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::DISK_FULL {
            "the database server's disk is full".into()
        } else if *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
        {
            "the database server is shutting down or restarting".into()
        } else if *code == SqlState::T_R_DEADLOCK_DETECTED {
            format!("deadlock with other writers (tried {APPEND_TRIES} times)")
        } else if *code == SqlState::LOCK_NOT_AVAILABLE {
            format!(
                "another writer held the asset for more than {} s",
                LOCK_TIMEOUT.as_secs()
            )
        } else if *code == SqlState::QUERY_CANCELED {
            "the statement was cancelled (statement_timeout or an administrator)".into()
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            "the database is read-only (a standby server?)".into()
        } else if *code == SqlState::UNDEFINED_TABLE {
            format!(
                "the ledger schema is damaged or was dropped ({})",
                db.message()
            )
        } else {
            format!("PostgreSQL error {}: {}", code.code(), db.message())
        }
    } else if e.is_closed() {
        "the connection to the database server was lost".into()
    } else {
        chain(e)
    }
}

/// Why opening failed, in words.
pub(crate) fn describe_open(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().replace('\n', " "),
        None => chain(e),
    }
}

/// Whether `e` means the connection is gone.
pub(crate) fn is_broken(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
            || db.severity() == "FATAL"
            || db.severity() == "PANIC";
    }
    // An I/O error on the socket.
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<std::io::Error>() {
            return true;
        }
        src = s.source();
    }
    false
}

/// Whether `e` is a transient conflict between writers, worth another try.
pub(crate) fn retryable(e: &postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// The ledger at `location` cannot be opened, `reason` says why.
pub(crate) fn open_error(location: &str, reason: impl Into<String>) -> StoreError {
    StoreError::Open {
        location: location.to_string(),
        reason: reason.into(),
    }
}
