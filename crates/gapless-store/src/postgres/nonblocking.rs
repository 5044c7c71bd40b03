//! The short reads (coverage, the run at an instant) on the asynchronous
//! driver, awaited on the caller's task: [`crate::NonBlockingReads`].
//!
//! A call of the synchronous pool from async code goes to a blocking thread
//! and back, and on a small machine those two thread wake-ups cost more than
//! the read's own round trip to the database (the `load` bench's questions
//! show it). A server answers more of these questions than of any other.
//!
//! A few connections of their own, taken out of the store's `pool_size`,
//! are made on first use, driven by tasks of the runtime that asks, and made
//! again when one breaks (the server restarted, the runtime that drove it
//! ended); a read that failed on a broken connection that had served before
//! runs once more on a new one, as the pool does. One connection takes any
//! number of concurrent reads, pipelined: PostgreSQL runs them one after
//! another, so a second connection lets two run at once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use gapless_core::{Instant, Interval, IntervalSet};
use tokio_postgres::{Client, Statement};

use super::error::{connect_failed, is_broken, store_error, Fail};
use super::pool::session_settings;
use super::read::{run_at, runs_of, RUNS_OVERLAPPING, RUN_CONTAINING};
use super::tls::Tls;
use crate::{NonBlockingReads, ReadFuture, Result};

/// How many of a store's `pool_size` connections serve the short reads: a
/// quarter, one or two (each takes any number of concurrent reads; two let
/// the database run two at once), none for a pool of one.
pub(crate) fn connections_of(pool_size: usize) -> usize {
    if pool_size < 2 {
        0
    } else {
        (pool_size / 4).clamp(1, 2)
    }
}

/// The short-read connections of one store.
pub(crate) struct Reads {
    location: String,
    schema: String,
    config: tokio_postgres::Config,
    tls: Tls,
    slots: Vec<Mutex<Option<Arc<Conn>>>>,
    next: AtomicUsize,
}

/// One connection with its two statements prepared.
struct Conn {
    client: Client,
    coverage: Statement,
    run_containing: Statement,
}

impl Reads {
    /// `n` connections (none made yet) to the ledger in `schema`.
    pub(crate) fn new(
        location: String,
        schema: String,
        config: tokio_postgres::Config,
        tls: Tls,
        n: usize,
    ) -> Reads {
        Reads {
            location,
            schema,
            config,
            tls,
            slots: (0..n).map(|_| Mutex::new(None)).collect(),
            next: AtomicUsize::new(0),
        }
    }

    /// The connections for short reads, made or not.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    async fn connect(&self) -> Result<Conn, tokio_postgres::Error> {
        // The connection's task ends with the connection.
        let (client, _driving) = self.tls.connect_driven(&self.config).await?;
        client
            .batch_execute(&session_settings(&self.schema))
            .await?;
        let coverage = client.prepare(RUNS_OVERLAPPING).await?;
        let run_containing = client.prepare(RUN_CONTAINING).await?;
        Ok(Conn {
            client,
            coverage,
            run_containing,
        })
    }

    fn slot(&self, i: usize) -> std::sync::MutexGuard<'_, Option<Arc<Conn>>> {
        self.slots[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection of slot `i`, made when there is none or it is closed;
    /// `true` with a new one.
    async fn conn(&self, i: usize) -> Result<(Arc<Conn>, bool)> {
        if let Some(c) = self.slot(i).as_ref().filter(|c| !c.client.is_closed()) {
            return Ok((c.clone(), false));
        }
        let made = Arc::new(
            self.connect()
                .await
                .map_err(|e| connect_failed(e, &self.location))?,
        );
        // Two callers may both have connected: the later one's is kept, the
        // other closes once its read is done.
        *self.slot(i) = Some(made.clone());
        Ok((made, true))
    }

    /// Run `read` on a connection, once more on a new one when a connection
    /// that had served before turns out to be broken.
    async fn run<T, F, Fut>(&self, read: F) -> Result<T>
    where
        F: Fn(Arc<Conn>) -> Fut,
        Fut: std::future::Future<Output = Result<T, Fail>>,
    {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.slots.len();
        loop {
            let (conn, fresh) = self.conn(i).await?;
            match read(conn.clone()).await {
                Ok(v) => return Ok(v),
                Err(Fail::Pg(e)) if conn.client.is_closed() || is_broken(&e) => {
                    let mut slot = self.slot(i);
                    if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, &conn)) {
                        *slot = None;
                    }
                    drop(slot);
                    if fresh {
                        return Err(store_error(Fail::Pg(e), &self.location));
                    }
                    tracing::debug!("retrying a short read on a new connection");
                }
                Err(f) => return Err(store_error(f, &self.location)),
            }
        }
    }
}

impl NonBlockingReads for Reads {
    fn coverage<'a>(&'a self, asset: &'a str, range: Interval) -> ReadFuture<'a, IntervalSet> {
        let (start, end) = (range.start().as_micros(), range.end().as_micros());
        Box::pin(self.run(move |c| async move {
            let rows = c.client.query(&c.coverage, &[&asset, &start, &end]).await?;
            Ok(runs_of(&rows)?)
        }))
    }

    fn run_containing<'a>(
        &'a self,
        asset: &'a str,
        t: Instant,
    ) -> ReadFuture<'a, Option<Interval>> {
        let at = t.as_micros();
        Box::pin(self.run(move |c| async move {
            let row = c
                .client
                .query_opt(&c.run_containing, &[&asset, &at])
                .await?;
            Ok(run_at(row, t)?)
        }))
    }
}
