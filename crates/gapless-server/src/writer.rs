//! Group commit: one writer task appends the batches of concurrent requests
//! together.
//!
//! Requests send `(batch, reply)` over a bounded channel. The writer takes
//! the first waiting batch, drains whatever else is queued (up to
//! `max_group_events` events), and appends the group on a blocking thread
//! with [`gapless_store::Store::append_many`]: each batch atomic on its own
//! with its own counts, in one durable commit where the backend supports it.
//! Meanwhile new requests queue up for the next group, so under load many
//! small requests share each commit.
//!
//! A batch that fails inside a group (a conflict, a fault) stored nothing of
//! its own, so it is retried alone through [`Ledger::append`]: a conflict
//! then comes back with its position in the request, and the other requests
//! of the group are unaffected. Each request is answered only after its
//! events are durable. A request whose client has gone (disconnect,
//! timeout) before its group starts is dropped, not stored.

use std::sync::Arc;

use gapless_core::{Instant, NewEvent};
use gapless_ledger::ingest::Batch;
use gapless_ledger::{IngestAnswer, Ledger, LedgerError};
use tokio::sync::{mpsc, oneshot};

use crate::{ApiError, Metrics};

type Reply = oneshot::Sender<Result<IngestAnswer, LedgerError>>;

enum Msg {
    Append {
        batch: Batch,
        reply: Reply,
    },
    /// Answered once everything sent before it is committed.
    Flush(oneshot::Sender<()>),
}

/// The handle requests use to reach the writer task.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    tx: mpsc::Sender<Msg>,
}

/// How many requests may wait for the writer before senders wait too.
const QUEUE: usize = 4096;

/// The time the ledger stamps on what it receives.
pub(crate) fn now() -> Instant {
    Instant::from_micros(jiff::Timestamp::now().as_microsecond())
        .expect("the clock is within 0001-9999")
}

impl Writer {
    /// Start the writer task on the current runtime.
    pub(crate) fn spawn(ledger: Ledger, metrics: Arc<Metrics>, max_group_events: usize) -> Writer {
        let (tx, rx) = mpsc::channel(QUEUE);
        tokio::spawn(run(ledger, rx, metrics, max_group_events.max(1)));
        Writer { tx }
    }

    /// Append `batch` atomically; returns once it is durable.
    pub(crate) async fn append(&self, batch: Batch) -> Result<IngestAnswer, ApiError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Msg::Append { batch, reply })
            .await
            .map_err(|_| ApiError::internal("the writer task has stopped"))?;
        match answer.await {
            Ok(result) => Ok(result?),
            Err(_) => Err(ApiError::internal(
                "the writer dropped a batch without an answer",
            )),
        }
    }

    /// Wait until everything sent so far is committed (or failed).
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }
}

async fn run(
    ledger: Ledger,
    mut rx: mpsc::Receiver<Msg>,
    metrics: Arc<Metrics>,
    max_events: usize,
) {
    while let Some(first) = rx.recv().await {
        let mut jobs: Vec<(Batch, Reply)> = Vec::new();
        let mut flushes = Vec::new();
        let mut events = 0;
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Append { batch, reply } => {
                    events += batch.len();
                    jobs.push((batch, reply));
                }
                Msg::Flush(done) => flushes.push(done),
            }
            if events < max_events {
                next = rx.try_recv().ok();
            }
        }
        let before = jobs.len();
        jobs.retain(|(_, reply)| !reply.is_closed());
        metrics.abandoned.inc_by((before - jobs.len()) as u64);
        if !jobs.is_empty() {
            let ledger = ledger.clone();
            let metrics = metrics.clone();
            if let Err(e) =
                tokio::task::spawn_blocking(move || commit(&ledger, jobs, &metrics)).await
            {
                tracing::error!(error = %e, "group commit panicked");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
    tracing::debug!("writer stopped");
}

/// Append a group and answer each request (on a blocking thread).
fn commit(ledger: &Ledger, jobs: Vec<(Batch, Reply)>, metrics: &Metrics) {
    let received_at = now();
    metrics.group_requests.observe(jobs.len() as f64);
    let results: Vec<Result<IngestAnswer, LedgerError>> = if let [(batch, _)] = jobs.as_slice() {
        metrics.commits.inc();
        vec![ledger.append(batch, received_at)]
    } else {
        let slices: Vec<&[NewEvent]> = jobs.iter().map(|(b, _)| b.events()).collect();
        metrics.commits.inc();
        let shared = ledger.store().append_many(&slices, received_at);
        jobs.iter()
            .zip(shared)
            .map(|((batch, _), result)| match result {
                Ok(answer) => Ok(answer),
                // Nothing of this batch is stored: alone it gets its own
                // verdict, with the conflict's position in its request.
                Err(_) => {
                    metrics.commits.inc();
                    ledger.append(batch, now())
                }
            })
            .collect()
    };
    for ((_, reply), result) in jobs.into_iter().zip(results) {
        match &result {
            Ok(a) => {
                metrics.accepted.inc_by(a.accepted);
                metrics.duplicates.inc_by(a.duplicates);
            }
            Err(LedgerError::Conflict(_)) => {
                metrics.conflicts.inc();
            }
            Err(e) => tracing::warn!(error = %e, "batch failed"),
        }
        let _ = reply.send(result);
    }
}
