//! A blocking PostgreSQL client that pipelines: the asynchronous driver on
//! a current-thread runtime of the connection's own, as the `postgres`
//! crate does, plus the one thing that crate cannot do: send several
//! statements before waiting for the first answer.
//!
//! Under load every round trip waits for the server's backend and then for
//! the caller's thread to be scheduled again, a large part of a group
//! commit even for a trivial `BEGIN` (the `load` bench's producers show
//! it). So a [`Transaction`] sends its `BEGIN` with its
//! first statement, [`Transaction::run`] sends a whole sequence of
//! statements at once (the server still runs them one after the other,
//! each with its own snapshot), and [`Transaction::execute_and_commit`]
//! sends the last statement with the `COMMIT`. Fewer waits alone did not
//! make a group faster there (the database's own work was most of the
//! time); with [`Transaction::run_seeks`], which spares the planning of
//! each group's reads, they did.

use std::future::Future;

use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Error, Row, Statement, ToStatement};

use super::tls::Tls;

/// One connection. Its calls block the calling thread, which must not be
/// one that drives a tokio runtime.
pub(crate) struct Client {
    runtime: Runtime,
    /// `None` only while dropping.
    inner: Option<tokio_postgres::Client>,
    /// The task that drives the connection; it ends with the connection.
    driving: Option<JoinHandle<()>>,
}

impl Client {
    /// Connect with `config` over `tls`.
    ///
    /// # Errors
    ///
    /// When the server cannot be reached or refuses the session.
    ///
    /// # Panics
    ///
    /// When the system cannot start a runtime (no file descriptor left for
    /// its event loop), as the `postgres` crate does.
    pub(crate) fn connect(config: &tokio_postgres::Config, tls: &Tls) -> Result<Client, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cannot start the runtime of a PostgreSQL connection");
        let (inner, driving) = runtime.block_on(tls.connect_driven(config))?;
        Ok(Client {
            runtime,
            inner: Some(inner),
            driving: Some(driving),
        })
    }

    fn inner(&self) -> &tokio_postgres::Client {
        self.inner
            .as_ref()
            .expect("a client is only taken when dropped")
    }

    /// Whether the connection has ended (the server went away).
    pub(crate) fn is_closed(&self) -> bool {
        self.inner().is_closed()
    }

    /// Wait for `f` on this connection's runtime.
    fn block_on<T>(&self, f: impl Future<Output = T>) -> T {
        self.runtime.block_on(f)
    }

    /// Run `sql` (one or more statements, no parameters).
    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.block_on(self.inner().batch_execute(sql))
    }

    pub(crate) fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.block_on(self.inner().prepare(sql))
    }

    pub(crate) fn query<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.block_on(self.inner().query(statement, params))
    }

    pub(crate) fn query_one<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, Error> {
        self.block_on(self.inner().query_one(statement, params))
    }

    pub(crate) fn query_opt<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.block_on(self.inner().query_opt(statement, params))
    }

    pub(crate) fn execute<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        self.block_on(self.inner().execute(statement, params))
    }

    /// A transaction; its `BEGIN` goes with its first statement.
    pub(crate) fn transaction(&mut self) -> Transaction<'_> {
        Transaction {
            client: self,
            state: TxState::NotBegun,
            seeking: false,
        }
    }

    /// A transaction every statement of which is planned as
    /// [`Transaction::run_seeks`] plans its own: for one whose statements
    /// are all index seeks driven by their parameters, writes too. The
    /// settings go with its `BEGIN`, in the same message, and end with it.
    pub(crate) fn seeking_transaction(&mut self) -> Transaction<'_> {
        Transaction {
            client: self,
            state: TxState::NotBegun,
            seeking: true,
        }
    }
}

/// The client closes the session (the server sees a clean end, not a lost
/// connection) by driving the connection to its end.
impl Drop for Client {
    fn drop(&mut self) {
        drop(self.inner.take());
        if let Some(driving) = self.driving.take() {
            let _ = self.runtime.block_on(driving);
        }
    }
}

/// Statements prepared through a client or a transaction.
pub(crate) trait Prepare {
    fn prepare(&mut self, sql: &str) -> Result<Statement, Error>;
}

impl Prepare for Client {
    fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        Client::prepare(self, sql)
    }
}

impl Prepare for Transaction<'_> {
    fn prepare(&mut self, sql: &str) -> Result<Statement, Error> {
        self.client.prepare(sql)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxState {
    /// No statement yet: the `BEGIN` goes with the first.
    NotBegun,
    /// `BEGIN` was sent.
    Open,
    /// Committed (or the commit failed): nothing to roll back.
    Done,
}

/// A transaction (read committed, the session's default). Rolled back when
/// dropped without [`Transaction::commit`].
pub(crate) struct Transaction<'c> {
    client: &'c mut Client,
    state: TxState,
    /// Begun with the settings of [`SEEKS`], kept to its end.
    seeking: bool,
}

/// The settings of [`Transaction::run_seeks`], for the rest of the
/// transaction.
macro_rules! seeks {
    () => {
        "SET LOCAL enable_seqscan = off; SET LOCAL plan_cache_mode = force_generic_plan"
    };
}
const SEEKS: &str = seeks!();
/// Back to the session's settings.
const SEEKS_DONE: &str = "SET LOCAL enable_seqscan TO DEFAULT; \
     SET LOCAL plan_cache_mode TO DEFAULT";
/// The `BEGIN` of a [`Client::seeking_transaction`], with its settings.
const BEGIN_SEEKING: &str = concat!("BEGIN; ", seeks!());

/// What [`Transaction::execute_and_commit`] can fail with.
#[derive(Debug)]
pub(crate) enum CommitError {
    /// The server refused the statement: nothing was committed.
    Statement(Error),
    /// The commit failed, or the connection broke before the statement's
    /// answer: whether it committed is unknown.
    Commit(Error),
}

impl Transaction<'_> {
    /// Run `f`'s statements in this transaction, all sent before the first
    /// answer is awaited (each statement's future sends it when first
    /// polled; join them with `tokio::join!(biased; ...)` or
    /// `tokio::try_join!(biased; ...)` to keep their order). A transaction
    /// not yet begun sends its `BEGIN` first, in the same round trip.
    ///
    /// # Errors
    ///
    /// The first error of the `BEGIN` or of `f`.
    pub(crate) fn run<T>(
        &mut self,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let begin = self.state == TxState::NotBegun;
        if begin {
            // Rolled back when dropped from here on, even when the answer
            // to the `BEGIN` is lost.
            self.state = TxState::Open;
        }
        let begin_sql = if self.seeking { BEGIN_SEEKING } else { "BEGIN" };
        let client = self.client.inner();
        self.client.block_on(async {
            if begin {
                let (begun, out) = tokio::join!(biased; client.batch_execute(begin_sql), f(client));
                begun?;
                out
            } else {
                f(client).await
            }
        })
    }

    /// [`Transaction::run`] with `f`'s statements planned once per
    /// connection and as index seeks, whatever the tables' statistics say:
    /// for prepared statements whose every access is an index seek driven
    /// by a parameter, which `f` must send when first polled (a join of
    /// their futures).
    ///
    /// Generic plans, because planning such a statement for its parameters
    /// can cost the server more than running it (an append's read of stored
    /// ids and runs, `EXPLAIN ANALYZE` shows it). As index seeks, because a
    /// plan made while a table was tiny (a sequential scan) would be kept as
    /// it grows, until the next `ANALYZE`, and a group would then take many
    /// times longer than all its other statements together (the `load`
    /// bench's producers reach that size). Without sequential scans a
    /// plan's estimated cost can be huge; the session has no JIT (see
    /// `session_settings`), so that it is not compiled each time. The
    /// settings are the transaction's (`SET LOCAL`), back to the session's
    /// for the statements after, in the same round trip; a
    /// [`Client::seeking_transaction`] has them throughout.
    pub(crate) fn run_seeks<T>(
        &mut self,
        f: impl AsyncFnOnce(&tokio_postgres::Client) -> Result<T, Error>,
    ) -> Result<T, Error> {
        if self.seeking {
            return self.run(f);
        }
        self.run(async |c| {
            let ((), out, ()) = tokio::try_join!(
                biased;
                c.batch_execute(SEEKS),
                f(c),
                c.batch_execute(SEEKS_DONE),
            )?;
            Ok(out)
        })
    }

    pub(crate) fn batch_execute(&mut self, sql: &str) -> Result<(), Error> {
        self.run(async |c| c.batch_execute(sql).await)
    }

    pub(crate) fn query<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, Error> {
        self.run(async |c| c.query(statement, params).await)
    }

    pub(crate) fn query_one<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Row, Error> {
        self.run(async |c| c.query_one(statement, params).await)
    }

    pub(crate) fn query_opt<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, Error> {
        self.run(async |c| c.query_opt(statement, params).await)
    }

    pub(crate) fn execute<T: ?Sized + ToStatement>(
        &mut self,
        statement: &T,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, Error> {
        self.run(async |c| c.execute(statement, params).await)
    }

    /// `sql` unprepared, its parameters typed: planned for the tables as
    /// they are now, still one round trip.
    pub(crate) fn query_typed(
        &mut self,
        sql: &str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<Row>, Error> {
        self.run(async |c| c.query_typed(sql, params).await)
    }

    /// `COPY ... FROM STDIN (FORMAT binary)` of `rows`, each with the
    /// columns of `types`.
    pub(crate) fn copy_in_binary<'r, const N: usize>(
        &mut self,
        sql: &str,
        types: &[Type; N],
        rows: impl Iterator<Item = [&'r (dyn ToSql + Sync); N]>,
    ) -> Result<u64, Error> {
        self.run(async |c| {
            let sink = c.copy_in(sql).await?;
            let mut writer = std::pin::pin!(BinaryCopyInWriter::new(sink, types));
            for row in rows {
                writer.as_mut().write(&row).await?;
            }
            writer.finish().await
        })
    }

    /// Commit.
    ///
    /// # Errors
    ///
    /// When the commit fails: whether it took effect is then unknown.
    pub(crate) fn commit(mut self) -> Result<(), Error> {
        let begun = self.state == TxState::Open;
        self.state = TxState::Done;
        if begun {
            self.client.batch_execute("COMMIT")
        } else {
            Ok(())
        }
    }

    /// Run `statement` and commit, in one round trip (with the `BEGIN` when
    /// not yet begun).
    ///
    /// # Errors
    ///
    /// [`CommitError::Statement`] when the server refused the statement (it
    /// then rolls the transaction back), else [`CommitError::Commit`].
    pub(crate) fn execute_and_commit(
        mut self,
        statement: &Statement,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, CommitError> {
        let sent = self.run(async |c| {
            let (written, committed) = tokio::join!(
                biased;
                c.execute(statement, params),
                c.batch_execute("COMMIT")
            );
            Ok((written, Ok(0), committed))
        });
        self.committed(sent)
    }

    /// Run `statement`, then `then` (which sees what `statement` wrote), and
    /// commit, in one round trip: as [`Transaction::execute_and_commit`].
    ///
    /// # Errors
    ///
    /// As [`Transaction::execute_and_commit`], for either statement (the
    /// first refusal tells).
    pub(crate) fn execute_two_and_commit(
        mut self,
        (statement, params): (&Statement, &[&(dyn ToSql + Sync)]),
        (then, then_params): (&Statement, &[&(dyn ToSql + Sync)]),
    ) -> Result<u64, CommitError> {
        let sent = self.run(async |c| {
            Ok(tokio::join!(
                biased;
                c.execute(statement, params),
                c.execute(then, then_params),
                c.batch_execute("COMMIT")
            ))
        });
        self.committed(sent)
    }

    /// What the statements and the `COMMIT` sent by
    /// [`Transaction::execute_and_commit`] answered.
    #[allow(clippy::type_complexity)]
    fn committed(
        &mut self,
        sent: Result<(Result<u64, Error>, Result<u64, Error>, Result<(), Error>), Error>,
    ) -> Result<u64, CommitError> {
        // The `COMMIT` ends the transaction whatever came before it: after a
        // failed statement it rolls back, and the server answers it without
        // an error, so the statement's error tells.
        self.state = TxState::Done;
        let refused_or_unknown = |e: Error| {
            if e.as_db_error().is_some() {
                CommitError::Statement(e)
            } else {
                CommitError::Commit(e)
            }
        };
        let (written, then, committed) = sent.map_err(refused_or_unknown)?;
        let n = written.map_err(refused_or_unknown)?;
        then.map_err(refused_or_unknown)?;
        committed.map_err(CommitError::Commit)?;
        Ok(n)
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.state == TxState::Open {
            // A failed rollback leaves the connection broken, or the
            // transaction is ended by the server with the session.
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}
