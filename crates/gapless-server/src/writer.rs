//! Group commit: one writer thread appends the batches of concurrent
//! requests together.
//!
//! Requests send `(batch, reply)` over a bounded channel. The writer takes
//! the first waiting batch, drains whatever else is queued (up to
//! `max_group_events` events), and appends the group with
//! [`Ledger::append_group`]: each batch atomic on its own with its own
//! answer (a conflict at its position in its request), in one durable
//! commit where the store supports it. Meanwhile new requests queue up
//! for the next group, so under load many small requests share each
//! commit. Each request is answered only after its events are durable. A
//! request whose client has gone (disconnect, timeout) before its group
//! starts is dropped, not stored.
//!
//! The writer is a thread of its own, not a task that hands each group to
//! a blocking thread: two thread wake-ups fewer in the loop every
//! single-event POST waits on.

use std::sync::Arc;

use gapless_api::{Error, ErrorKind, IngestAnswer};
use gapless_ledger::ingest::Batch;
use gapless_ledger::{now, Ledger};
use tokio::sync::{mpsc, oneshot};

use crate::{ApiError, Metrics};

type Reply = oneshot::Sender<Result<IngestAnswer, Error>>;

enum Msg {
    Append {
        batch: Batch,
        reply: Reply,
    },
    /// Answered once everything sent before it is committed.
    Flush(oneshot::Sender<()>),
}

/// The handle requests use to reach the writer thread.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    tx: mpsc::Sender<Msg>,
}

/// How many requests may wait for the writer before senders wait too.
const QUEUE: usize = 4096;

impl Writer {
    /// Start the writer thread; it ends once every handle is dropped.
    ///
    /// # Panics
    ///
    /// When the system cannot start a thread.
    pub(crate) fn spawn(ledger: Ledger, metrics: Arc<Metrics>, max_group_events: usize) -> Writer {
        let (tx, rx) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("gapless-writer".into())
            .spawn(move || run(ledger, rx, metrics, max_group_events.max(1)))
            .expect("cannot start the writer thread");
        Writer { tx }
    }

    /// Append `batch` atomically; returns once it is durable.
    pub(crate) async fn append(&self, batch: Batch) -> Result<IngestAnswer, ApiError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send(Msg::Append { batch, reply })
            .await
            .map_err(|_| ApiError::internal("the writer thread has stopped"))?;
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

fn run(ledger: Ledger, mut rx: mpsc::Receiver<Msg>, metrics: Arc<Metrics>, max_events: usize) {
    while let Some(first) = rx.blocking_recv() {
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
            // A panic answers the group's requests with a fault (their
            // replies are dropped); the writer goes on with the next group.
            let committed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                commit(&ledger, jobs, &metrics)
            }));
            if committed.is_err() {
                tracing::error!("group commit panicked");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
    tracing::debug!("writer stopped");
}

/// Append a group and answer each request.
fn commit(ledger: &Ledger, jobs: Vec<(Batch, Reply)>, metrics: &Metrics) {
    let received_at = now();
    metrics.groups.inc();
    metrics.group_requests.observe(jobs.len() as f64);
    metrics.commits.inc();
    let batches: Vec<&Batch> = jobs.iter().map(|(b, _)| b).collect();
    let results = ledger.append_group(&batches, received_at);
    for ((batch, reply), result) in jobs.into_iter().zip(results) {
        match &result {
            Ok(a) => {
                metrics.accepted.inc_by(a.accepted);
                metrics.duplicates.inc_by(a.duplicates);
                metrics.stored(&batch, a, received_at);
            }
            Err(e) if e.kind() == ErrorKind::Conflict => {
                metrics.conflicts.inc();
            }
            Err(e) => tracing::warn!(error = %e, "batch failed"),
        }
        let _ = reply.send(result);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use gapless_api::Unit;
    use gapless_core::{AssetDecl, Instant, Interval, IntervalSet, NewEvent};
    use gapless_store::{
        AssetSummary, EventPage, EventQuery, SqliteStore, Store, StoreError, StoredEvent,
    };

    use super::*;

    /// SQLite with a slow first append (so requests queue up behind it), a
    /// record of each group, and optionally a failing shared commit.
    #[derive(Debug)]
    struct Gated {
        inner: SqliteStore,
        delay: Mutex<Option<Duration>>,
        groups: Mutex<Vec<usize>>,
        fail_groups: bool,
        /// Appends begun, single or grouped.
        begun: std::sync::atomic::AtomicUsize,
    }

    type R<T> = gapless_store::Result<T>;

    impl Store for Gated {
        fn append(&self, batch: &[NewEvent], at: Instant) -> R<gapless_store::Appended> {
            self.begun.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let delay = self.delay.lock().unwrap().take();
            if let Some(d) = delay {
                std::thread::sleep(d);
            }
            self.inner.append(batch, at)
        }
        fn append_many(
            &self,
            batches: &[&[NewEvent]],
            at: Instant,
        ) -> Vec<R<gapless_store::Appended>> {
            self.begun.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.groups.lock().unwrap().push(batches.len());
            if self.fail_groups {
                return batches
                    .iter()
                    .map(|_| {
                        Err(StoreError::Backend {
                            message: "injected".into(),
                            source: None,
                        })
                    })
                    .collect();
            }
            batches.iter().map(|b| self.inner.append(b, at)).collect()
        }
        fn coverage(&self, asset: &str, range: Interval) -> R<IntervalSet> {
            self.inner.coverage(asset, range)
        }
        fn retractions(&self, asset: &str, range: Interval) -> R<IntervalSet> {
            self.inner.retractions(asset, range)
        }
        fn run_containing(&self, asset: &str, t: Instant) -> R<Option<Interval>> {
            self.inner.run_containing(asset, t)
        }
        fn events(&self, asset: &str, query: &EventQuery) -> R<EventPage> {
            self.inner.events(asset, query)
        }
        fn events_overlapping(&self, asset: &str, range: Interval) -> R<Vec<StoredEvent>> {
            self.inner.events_overlapping(asset, range)
        }
        fn asset_decl(&self, asset: &str) -> R<Option<AssetDecl>> {
            self.inner.asset_decl(asset)
        }
        fn declare_asset(&self, asset: &str, decl: &AssetDecl) -> R<()> {
            self.inner.declare_asset(asset, decl)
        }
        fn assets(&self) -> R<Vec<AssetSummary>> {
            self.inner.assets()
        }
        fn assets_page(
            &self,
            q: &gapless_store::AssetQuery,
            now: Instant,
        ) -> R<gapless_store::AssetPage> {
            self.inner.assets_page(q, now)
        }
        fn rules_page(&self, q: &gapless_store::RuleQuery) -> R<gapless_store::RulePage> {
            self.inner.rules_page(q)
        }
        fn put_rule(&self, rule: &gapless_core::Rule, now: Instant) -> R<gapless_store::RulePut> {
            self.inner.put_rule(rule, now)
        }
        fn rule(&self, name: &str) -> R<Option<gapless_store::StoredRule>> {
            self.inner.rule(name)
        }
        fn rules(&self) -> R<Vec<gapless_store::StoredRule>> {
            self.inner.rules()
        }
        fn delete_rule(&self, name: &str) -> R<bool> {
            self.inner.delete_rule(name)
        }
        fn firings(&self, q: &gapless_store::FiringQuery) -> R<gapless_store::FiringPage> {
            self.inner.firings(q)
        }
        fn judge_deadlines(&self, now: Instant) -> R<u64> {
            self.inner.judge_deadlines(now)
        }
        fn claim_deliveries(
            &self,
            owner: &str,
            now: Instant,
            lease: Duration,
            limit: usize,
        ) -> R<Vec<gapless_store::Firing>> {
            self.inner.claim_deliveries(owner, now, lease, limit)
        }
        fn finish_delivery(
            &self,
            seq: i64,
            owner: &str,
            outcome: &gapless_store::DeliveryOutcome,
        ) -> R<bool> {
            self.inner.finish_delivery(seq, owner, outcome)
        }
        fn retry_failed(&self, rule: Option<&str>) -> R<u64> {
            self.inner.retry_failed(rule)
        }
        fn ledger_id(&self) -> R<String> {
            self.inner.ledger_id()
        }
        fn prune_events(&self, asset: &str, before: Instant, limit: usize) -> R<u64> {
            self.inner.prune_events(asset, before, limit)
        }
        fn prune_firings(&self, before: Instant, limit: usize) -> R<u64> {
            self.inner.prune_firings(before, limit)
        }
    }

    fn setup(fail_groups: bool) -> (tempfile::TempDir, Arc<Gated>, Ledger) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Gated {
            inner: SqliteStore::open(dir.path().join("l.db")).unwrap(),
            delay: Mutex::new(Some(Duration::from_millis(300))),
            groups: Mutex::new(Vec::new()),
            fail_groups,
            begun: std::sync::atomic::AtomicUsize::new(0),
        });
        let ledger = Ledger::new(store.clone());
        (dir, store, ledger)
    }

    fn ev(id: &str, minute: u32) -> String {
        format!(
            r#"{{"asset": "a", "id": "{id}", "start": "2025-06-01T10:{minute:02}:00Z", "end": "2025-06-01T10:{:02}:00Z"}}"#,
            minute + 1
        )
    }

    /// One batch in the gate, then `n` batches sent while it holds the
    /// writer: batch `i` has a fresh event, and batch 3 also a conflict.
    async fn queued_behind_a_slow_commit(
        ledger: &Ledger,
        writer: &Writer,
        n: usize,
    ) -> Vec<Result<IngestAnswer, ApiError>> {
        let first = ledger
            .parse(Some(Unit::Event), [ev("x", 0).as_str()])
            .unwrap();
        let w = writer.clone();
        let gate = tokio::spawn(async move { w.append(first).await });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut waiting = Vec::new();
        for i in 0..n {
            let mut items = vec![ev(&format!("e{i}"), i as u32 + 1)];
            if i == 3 {
                items.push(r#"{"asset": "a", "id": "x", "start": "2025-06-01T11:00:00Z", "end": "2025-06-01T12:00:00Z"}"#.into());
            }
            if i == 4 {
                items.push(ev("x", 0));
            }
            let batch = ledger
                .parse(Some(Unit::Event), items.iter().map(String::as_str))
                .unwrap();
            let w = writer.clone();
            waiting.push(tokio::spawn(async move { w.append(batch).await }));
            tokio::task::yield_now().await;
        }
        assert_eq!(
            gate.await.unwrap().unwrap(),
            IngestAnswer {
                accepted: 1,
                duplicates: 0
            }
        );
        let mut out = Vec::new();
        for w in waiting {
            out.push(w.await.unwrap());
        }
        out
    }

    fn check_answers(answers: &[Result<IngestAnswer, ApiError>]) {
        for (i, a) in answers.iter().enumerate() {
            match i {
                3 => {
                    let e = a.as_ref().unwrap_err();
                    assert_eq!(e.status(), axum::http::StatusCode::CONFLICT);
                    assert!(e.message().starts_with("event 2: conflict"), "{e}");
                }
                4 => assert_eq!(
                    *a.as_ref().unwrap(),
                    IngestAnswer {
                        accepted: 1,
                        duplicates: 1
                    }
                ),
                _ => assert_eq!(
                    *a.as_ref().unwrap(),
                    IngestAnswer {
                        accepted: 1,
                        duplicates: 0
                    },
                    "{i}"
                ),
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_batches_share_a_group_and_a_conflict_is_isolated() {
        let (_dir, store, ledger) = setup(false);
        let metrics = Arc::new(Metrics::new());
        let writer = Writer::spawn(ledger.clone(), metrics.clone(), 4096);
        let answers = queued_behind_a_slow_commit(&ledger, &writer, 10).await;
        check_answers(&answers);
        assert_eq!(
            *store.groups.lock().unwrap(),
            [10],
            "the ten waiting batches formed one group"
        );
        let events = ledger
            .events_page("a", None, None, None, None)
            .unwrap()
            .events;
        // x, e0..e9 except e3 (its batch conflicted, so nothing of it).
        assert_eq!(events.len(), 10);
        assert!(!events.iter().any(|e| e.id.as_deref() == Some("e3")));
        assert_eq!(metrics.conflicts.get(), 1);
        assert_eq!(metrics.accepted.get(), 10);
        assert_eq!(metrics.duplicates.get(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_shared_commit_is_retried_batch_by_batch() {
        let (_dir, store, ledger) = setup(true);
        let writer = Writer::spawn(ledger.clone(), Arc::new(Metrics::new()), 4096);
        let answers = queued_behind_a_slow_commit(&ledger, &writer, 6).await;
        check_answers(&answers);
        assert_eq!(*store.groups.lock().unwrap(), [6]);
        assert_eq!(
            ledger
                .events_page("a", None, None, None, None)
                .unwrap()
                .events
                .len(),
            6
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn groups_are_bounded_by_events() {
        let (_dir, store, ledger) = setup(false);
        let writer = Writer::spawn(ledger.clone(), Arc::new(Metrics::new()), 3);
        let answers = queued_behind_a_slow_commit(&ledger, &writer, 9).await;
        check_answers(&answers);
        let groups = store.groups.lock().unwrap().clone();
        assert!(
            !groups.is_empty() && groups.iter().all(|g| *g <= 3),
            "{groups:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn flush_waits_for_queued_batches() {
        let (_dir, store, ledger) = setup(false);
        let writer = Writer::spawn(ledger.clone(), Arc::new(Metrics::new()), 4096);
        let first = ledger
            .parse(Some(Unit::Event), [ev("x", 0).as_str()])
            .unwrap();
        let w = writer.clone();
        let pending = tokio::spawn(async move { w.append(first).await });
        // Wait until the writer is committing the batch (the store's first
        // append is slow), then flush: it must wait for that commit.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while store.begun.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "the batch never reached the store"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        writer.flush().await;
        assert_eq!(
            store
                .inner
                .events("a", &Default::default())
                .unwrap()
                .events
                .len(),
            1,
            "flush returned before the batch was committed"
        );
        pending.await.unwrap().unwrap();
        assert_eq!(
            ledger
                .events_page("a", None, None, None, None)
                .unwrap()
                .events
                .len(),
            1
        );
    }
}
