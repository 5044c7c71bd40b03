//! The deliverer: claim a due firing, hand it to its target, record how it
//! went; again until nothing is due, then wait for the next poll.
//!
//! - A firing is claimed for the targets file's `lease`; its attempt must
//!   end by half the lease (each request's time limit is cut to fit), so
//!   that it is finished before any other deliverer may take it.
//! - A firing whose kind its target does not take is marked delivered
//!   without sending: all those due at once, in one write of the store's,
//!   before the pass's claims and again after any claim that met one
//!   (which arrived since), so that they cost no claim and finish each. A
//!   firing naming a target the file does not have
//!   stays pending, its `last_error` saying so, asked again a minute later
//!   (another deliverer may have the target; the file may be fixed).
//! - A failed attempt is tried again after the target's backoff (base,
//!   doubled each time, at most max); a refusal, or the last of
//!   `max_attempts`, makes the firing `failed`.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant as Clock};

use gapless_core::Instant;
use gapless_store::{DeliveryOutcome, Firing, Store, StoreError, TargetKinds};

use crate::airflow;
use crate::send::{self, Job, Sent};
use crate::targets::{TargetKind, Targets};
use crate::webhook;

/// How long a firing whose target is not in the file waits before it is
/// looked at again.
const UNKNOWN_TARGET_WAIT: Duration = Duration::from_secs(60);

/// What a deliverer has done since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Firings the targets took.
    pub delivered: u64,
    /// Firings marked delivered without sending (a kind the target does
    /// not take), including those its store recorded so at once.
    pub skipped: u64,
    /// Failed attempts to be tried again.
    pub retried: u64,
    /// Firings given up on (`failed`).
    pub failed: u64,
    /// Firings left pending: their target is not in the targets file.
    pub postponed: u64,
    /// Attempts whose lease was lost before they finished.
    pub lost: u64,
}

/// Delivers a ledger's pending firings to the targets of a targets file.
#[derive(Debug)]
pub struct Deliverer {
    store: Arc<dyn Store>,
    targets: Targets,
    owner: String,
    ledger_id: String,
    agent: ureq::Agent,
    airflow: HashMap<String, airflow::Client>,
    deadlines: bool,
    stats: Stats,
    observer: Observer,
    /// The store's count of firings it recorded delivered unsent, as last
    /// counted in `stats`.
    settled_seen: u64,
}

/// Told each firing's outcome.
#[derive(Default)]
struct Observer(Option<Box<dyn Fn(&'static str) + Send>>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Observer" } else { "None" })
    }
}

/// What each target of `targets` takes, as the store is told it.
fn target_kinds(targets: &Targets) -> Vec<TargetKinds<'_>> {
    targets
        .targets
        .iter()
        .map(|t| TargetKinds {
            target: &t.name,
            kinds: &t.kinds,
        })
        .collect()
}

/// This process's name as a claimant: `host:pid:random`.
pub fn owner_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string());
    format!(
        "{host}:{}:{:08x}",
        std::process::id(),
        rand::random::<u32>()
    )
}

impl Deliverer {
    /// A deliverer of `store`'s firings to `targets`, claiming as
    /// [`owner_id`]. From now on `store` records the firings it records
    /// whose target does not take their kind delivered unsent
    /// ([`Store::settle_untaken`]); this deliverer counts them as skipped.
    ///
    /// # Errors
    ///
    /// When the ledger's id cannot be read.
    pub fn new(store: Arc<dyn Store>, targets: Targets) -> Result<Deliverer, StoreError> {
        let ledger_id = store.ledger_id()?;
        let airflow = targets
            .targets
            .iter()
            .filter_map(|t| match &t.kind {
                TargetKind::Airflow(a) => {
                    Some((t.name.clone(), airflow::Client::new(a.clone(), t.timeout)))
                }
                TargetKind::Webhook(_) => None,
            })
            .collect();
        store.settle_untaken(&target_kinds(&targets));
        let settled_seen = store.settled_untaken();
        Ok(Deliverer {
            store,
            targets,
            owner: owner_id(),
            ledger_id,
            agent: send::agent(),
            airflow,
            deadlines: false,
            stats: Stats::default(),
            observer: Observer::default(),
            settled_seen,
        })
    }

    /// Also judge rules' deadlines before each pass (for `gapless deliver`;
    /// `serve` judges them itself).
    pub fn judging_deadlines(mut self, on: bool) -> Deliverer {
        self.deadlines = on;
        self
    }

    /// Call `f` with each firing's outcome (`delivered`, `skipped`,
    /// `retried`, `failed`, `postponed`, `lost`), e.g. to count it in a
    /// server's metrics.
    pub fn observed(mut self, f: impl Fn(&'static str) + Send + 'static) -> Deliverer {
        self.observer = Observer(Some(Box::new(f)));
        self
    }

    fn tell(&self, outcome: &'static str) {
        if let Some(f) = &self.observer.0 {
            f(outcome);
        }
    }

    /// Its name as a claimant.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// What it has done so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The settings it runs with.
    pub fn targets(&self) -> &Targets {
        &self.targets
    }

    /// Judge deadlines (when asked to), then deliver every firing due now,
    /// one claim at a time; how many firings it handled.
    ///
    /// # Errors
    ///
    /// A store fault (the pass stops there; claimed firings come back when
    /// their lease ends).
    pub fn pass(&mut self) -> Result<u64, StoreError> {
        self.pass_until(None)
    }

    /// [`Deliverer::pass`], stopping before the next claim once `stop`
    /// receives or is dropped.
    fn pass_until(&mut self, stop: Option<&Receiver<()>>) -> Result<u64, StoreError> {
        if self.deadlines {
            let late = self.store.judge_deadlines(gapless_ledger::now())?;
            if late > 0 {
                tracing::info!(late, "deadlines passed");
            }
        }
        let mut handled = 0;
        let mut skip_due = true;
        loop {
            if stop.is_some_and(|s| !matches!(s.try_recv(), Err(TryRecvError::Empty))) {
                return Ok(handled);
            }
            if skip_due {
                handled += self.skip_untaken()?;
            }
            let claimed_at = Clock::now();
            let now = gapless_ledger::now();
            let claimed = self
                .store
                .claim_deliveries(&self.owner, now, self.targets.lease, 1)?;
            let Some(firing) = claimed.into_iter().next() else {
                return Ok(handled);
            };
            handled += 1;
            let deadline = claimed_at + self.targets.lease / 2;
            let outcome = self.attempt(&firing, deadline);
            skip_due = outcome == DeliveryOutcome::Skipped;
            if self
                .store
                .finish_delivery(firing.seq, &self.owner, &outcome)?
            {
                self.tell(match outcome {
                    DeliveryOutcome::Delivered => "delivered",
                    DeliveryOutcome::Skipped => "skipped",
                    DeliveryOutcome::Retry { .. } => "retried",
                    DeliveryOutcome::Failed { .. } => "failed",
                    DeliveryOutcome::Postponed { .. } => "postponed",
                });
            } else {
                self.stats.lost += 1;
                self.tell("lost");
                tracing::warn!(
                    seq = firing.seq,
                    rule = %firing.rule,
                    "lost the lease of a firing before finishing it: another deliverer has it"
                );
            }
        }
    }

    /// Mark delivered unsent every due firing whose target does not take
    /// its kind, in one write, and count those the store recorded so since
    /// the last pass; how many.
    fn skip_untaken(&mut self) -> Result<u64, StoreError> {
        let marked = self
            .store
            .skip_deliveries(gapless_ledger::now(), &target_kinds(&self.targets))?;
        let settled = self.store.settled_untaken();
        let skipped = marked + settled.saturating_sub(self.settled_seen);
        self.settled_seen = settled;
        self.stats.skipped += skipped;
        for _ in 0..skipped {
            self.tell("skipped");
        }
        Ok(skipped)
    }

    /// Deliver until `stop` receives or is dropped: a pass, then a wait of
    /// the poll interval. Store faults are logged and the next pass tries
    /// again.
    pub fn run(&mut self, stop: &Receiver<()>) {
        tracing::info!(owner = %self.owner, targets = self.targets.targets.len(), "delivering");
        loop {
            if let Err(e) = self.pass_until(Some(stop)) {
                tracing::warn!(error = %e, "cannot deliver firings");
            }
            match stop.recv_timeout(self.targets.poll) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// One attempt at `firing`, and how to record it.
    fn attempt(&mut self, firing: &Firing, deadline: Clock) -> DeliveryOutcome {
        let name = firing.delivery.target.clone().unwrap_or_default();
        let Some(target) = self.targets.get(&name).cloned() else {
            self.stats.postponed += 1;
            let error =
                format!("target {name:?} is not in this deliverer's targets file; kept pending");
            tracing::warn!(seq = firing.seq, rule = %firing.rule, target = %name, "{error}");
            return DeliveryOutcome::Postponed {
                error,
                next_try: after(gapless_ledger::now(), UNKNOWN_TARGET_WAIT),
            };
        };
        if !target.kinds.contains(&firing.kind) {
            self.stats.skipped += 1;
            return DeliveryOutcome::Skipped;
        }
        let identity = format!("{}:{}:{}", self.ledger_id, firing.rule, firing.seq);
        let answer = serde_json::to_value(gapless_ledger::firing_answer(firing.clone()))
            .expect("a firing serializes");
        let job = Job {
            answer: &answer,
            identity: &identity,
            rule: &firing.rule,
            key: &firing.key,
            generation: firing.generation,
            recorded_at: firing.recorded_at,
            unsure: firing.delivery.attempts > 0 || firing.delivery.reclaimed,
            deadline,
        };
        let (sent, url) = match &target.kind {
            TargetKind::Webhook(w) => (webhook::send(&self.agent, w, target.timeout, &job), &w.url),
            TargetKind::Airflow(a) => match self.airflow.get_mut(&target.name) {
                Some(client) => (client.send(&self.agent, &job), &a.url),
                None => (Sent::Refused("no Airflow client".into()), &a.url),
            },
        };
        // Recorded in the ledger, where every reader sees it: the target by
        // its name and host, never its URL's credentials, path or query.
        let site = send::site(url).unwrap_or_default();
        let sent = sent.naming(&format!("target {:?} ({site})", target.name));
        let attempts = firing.delivery.attempts + 1;
        let log = |what: &str, error: &str| {
            tracing::warn!(
                seq = firing.seq,
                rule = %firing.rule,
                key = %firing.key,
                target = %target.name,
                attempts,
                error,
                "{what}"
            );
        };
        match sent {
            Sent::Delivered => {
                self.stats.delivered += 1;
                tracing::info!(
                    seq = firing.seq,
                    rule = %firing.rule,
                    key = %firing.key,
                    kind = firing.kind.as_str(),
                    target = %target.name,
                    attempts,
                    "delivered"
                );
                DeliveryOutcome::Delivered
            }
            Sent::Refused(error) => {
                self.stats.failed += 1;
                log("delivery refused: failed", &error);
                DeliveryOutcome::Failed { error }
            }
            Sent::Again(error) | Sent::Unknown(error) if attempts >= target.retry.max_attempts => {
                self.stats.failed += 1;
                let error = format!("{error} (gave up after {attempts} attempts)");
                log("delivery failed", &error);
                DeliveryOutcome::Failed { error }
            }
            Sent::Again(error) | Sent::Unknown(error) => {
                self.stats.retried += 1;
                let wait = target.retry.backoff(attempts);
                log("delivery attempt failed: trying again later", &error);
                DeliveryOutcome::Retry {
                    error,
                    next_try: after(gapless_ledger::now(), wait),
                }
            }
        }
    }
}

/// `d` after `t`.
fn after(t: Instant, d: Duration) -> Instant {
    let us = i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
    Instant::from_micros(t.as_micros().saturating_add(us)).unwrap_or(Instant::MAX)
}
