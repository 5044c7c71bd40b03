//! PostgreSQL errors as storage errors: which are worth another try, which
//! mean the server cannot be reached ([`StoreError::Unavailable`]) or is
//! out of space ([`StoreError::Full`]), and one-line descriptions without
//! SQL for the rest. Every storage error made of a client error keeps it as
//! its source.
//!
//! `Unavailable` and `Full` carry a fixed message that names no user, host,
//! port, database or schema; the details (the URL without password, the
//! client's and the server's own words) are logged with `tracing::error!`
//! here, where the error is mapped.

use tokio_postgres::error::SqlState;

use super::pool::{APPEND_TRIES, LOCK_TIMEOUT};
use super::tls::tls_failure;
use crate::error::{Cause, FULL, UNAVAILABLE};
use crate::StoreError;

/// A failure inside the backend: a database error (which may be retried) or
/// a finished storage error.
#[derive(Debug)]
pub(crate) enum Fail {
    Pg(tokio_postgres::Error),
    /// The commit itself failed: the outcome is unknown, never retried.
    Commit(tokio_postgres::Error),
    Store(StoreError),
}

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Fail {
        Fail::Pg(e)
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail::Store(e)
    }
}

/// Without the URL at hand (reading a row's columns).
impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> StoreError {
        classify(e, None)
    }
}

/// The storage error of a failure of a call on the ledger at `location`.
pub(crate) fn store_error(f: Fail, location: &str) -> StoreError {
    match f {
        Fail::Pg(e) => classify(e, Some(location)),
        Fail::Commit(e) if is_broken(&e) => {
            log_unavailable(
                &e,
                Some(location),
                "the connection was lost during a commit",
            );
            StoreError::unavailable(
                format!(
                    "{UNAVAILABLE} (the connection was lost during the commit: \
                     the batch may or may not be stored)"
                ),
                e,
            )
        }
        Fail::Commit(e) => classify(e, Some(location)),
        Fail::Store(e) => e,
    }
}

/// The storage error of a database error of a call: `Full` for a server
/// out of resources, `Unavailable` for a connection that is gone, else a
/// fault; caused by `e`.
pub(crate) fn classify(e: tokio_postgres::Error, location: Option<&str>) -> StoreError {
    if is_full(&e) {
        tracing::error!(
            location = location.unwrap_or("-"),
            error = %chain(&e),
            "PostgreSQL: {FULL}"
        );
        return StoreError::full(e);
    }
    if is_broken(&e) {
        log_unavailable(&e, location, "the connection to the server is gone");
        return StoreError::unavailable(UNAVAILABLE, e);
    }
    StoreError::backend(describe(&e), e)
}

/// The storage error of a failed connection to a ledger that was opened
/// before (a new connection of the pool): whatever the reason, the ledger
/// cannot be reached now.
pub(crate) fn connect_failed(e: tokio_postgres::Error, location: &str) -> StoreError {
    if is_full(&e) {
        return classify(e, Some(location));
    }
    log_unavailable(&e, Some(location), "cannot connect");
    StoreError::unavailable(UNAVAILABLE, e)
}

/// The storage error of a failure while opening the ledger at `location`:
/// `Unavailable` when the server cannot be reached (or is starting, shutting
/// down, or has no connection left), `Full` when it is out of space, else
/// [`StoreError::Open`] with the server's reason (a refused login, a missing
/// database, no permission, a failed TLS handshake: an untrusted
/// certificate, a server without TLS); caused by `e`.
pub(crate) fn open_failed(location: &str, e: tokio_postgres::Error) -> StoreError {
    if is_full(&e) {
        return classify(e, Some(location));
    }
    // Before the socket's errors: a failed handshake comes as an I/O error.
    if let Some(reason) = tls_failure(&e) {
        return Refusal::new(reason).caused_by(e).at(location);
    }
    if is_unreachable(&e) {
        log_unavailable(&e, Some(location), "cannot open the ledger");
        return StoreError::unavailable(format!("cannot open ledger: {UNAVAILABLE}"), e);
    }
    Refusal::new(describe_open(&e)).caused_by(e).at(location)
}

/// The ledger at `location` cannot be opened, `reason` says why.
pub(crate) fn open_error(location: &str, reason: impl Into<String>) -> StoreError {
    Refusal::new(reason).at(location)
}

/// Why a ledger cannot be opened, found before its location is at hand (a
/// bad URL parameter, unreadable root certificates): the reason of
/// [`StoreError::Open`], and the error behind it when there is one.
#[derive(Debug, thiserror::Error)]
#[error("{reason}")]
pub(crate) struct Refusal {
    reason: String,
    source: Option<Cause>,
}

impl Refusal {
    /// Refused for `reason`.
    pub(crate) fn new(reason: impl Into<String>) -> Refusal {
        Refusal {
            reason: reason.into(),
            source: None,
        }
    }

    /// This refusal, caused by `source`.
    pub(crate) fn caused_by(mut self, source: impl Into<Cause>) -> Refusal {
        self.source = Some(source.into());
        self
    }

    /// The storage error of the ledger at `location` refused for this.
    pub(crate) fn at(self, location: &str) -> StoreError {
        StoreError::Open {
            location: location.to_string(),
            reason: self.reason,
            source: self.source,
        }
    }
}

fn log_unavailable(e: &tokio_postgres::Error, location: Option<&str>, what: &str) {
    tracing::error!(
        location = location.unwrap_or("-"),
        error = %chain(e),
        "PostgreSQL: {UNAVAILABLE}: {what}"
    );
}

/// Whether `e` says the server is out of space or other resources (SQLSTATE
/// class 53, e.g. 53100 `disk_full`), except for a server out of connections
/// (53300), which cannot be reached rather than being full.
fn is_full(e: &tokio_postgres::Error) -> bool {
    e.code()
        .is_some_and(|c| c.code().starts_with("53") && *c != SqlState::TOO_MANY_CONNECTIONS)
}

/// Whether `e` means the server cannot be reached: no connection (refused,
/// timed out, unknown host, lost), or a server that is starting, shutting
/// down or out of connections.
fn is_unreachable(e: &tokio_postgres::Error) -> bool {
    if e.is_closed() || io_cause(e) {
        return true;
    }
    e.code().is_some_and(|c| {
        *c == SqlState::ADMIN_SHUTDOWN
            || *c == SqlState::CRASH_SHUTDOWN
            || *c == SqlState::CANNOT_CONNECT_NOW
            || *c == SqlState::TOO_MANY_CONNECTIONS
    })
}

/// Whether an I/O error (of the socket) is among the causes of `e`.
fn io_cause(e: &tokio_postgres::Error) -> bool {
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        if s.is::<std::io::Error>() {
            return true;
        }
        src = s.source();
    }
    false
}

/// Whether `e` means the connection is gone.
pub(crate) fn is_broken(e: &tokio_postgres::Error) -> bool {
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
    io_cause(e)
}

/// Whether `e` is a transient conflict between writers, worth another try.
pub(crate) fn retryable(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
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

/// A one-line description of a PostgreSQL error, without SQL (the errors
/// that [`classify`] does not turn into `Full` or `Unavailable`).
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::T_R_DEADLOCK_DETECTED {
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
    } else {
        chain(e)
    }
}

/// Why opening failed, in words.
pub(crate) fn describe_open(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        // pg_hba.conf has only `hostssl` lines for this client.
        Some(db)
            if *db.code() == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                && db.message().ends_with("no encryption") =>
        {
            format!(
                "{} (the server takes only TLS connections: add sslmode=require, or \
                 sslmode=verify-full&sslrootcert=FILE)",
                db.message().replace('\n', " ")
            )
        }
        Some(db) => db.message().replace('\n', " "),
        None => chain(e),
    }
}
