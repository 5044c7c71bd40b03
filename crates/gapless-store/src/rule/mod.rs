//! What both backends share for rules (SPEC §7): the records that go in and
//! come out, how they are stored, and judging a batch's windows.
//!
//! - this file: [`StoredRule`], [`RulePut`], [`Firing`], [`Delivery`],
//!   [`DeliveryState`], [`FiringQuery`], [`FiringPage`], [`DeliveryOutcome`]
//!   (how a deliverer finishes a claimed firing), [`TargetKinds`] (what a
//!   target takes, for skipping the rest in bulk), `Untaken` (the same,
//!   for recording such firings delivered at once), one deadline pass's
//!   windows of a rule.
//! - `deadlines.rs`: when each rule's next deadline passes, kept by a
//!   process so that a deadline pass looks only at the rules due.
//! - `codec.rs`: a rule's and a firing's columns, read back with checks.
//! - `judge.rs`: which windows a group of batches touches and their new
//!   states and firings, judged batch by batch in memory from the coverage
//!   before the group.
//! - `records.rs`: the windows' recorded states, kept as runs of windows
//!   with one record.

pub(crate) mod codec;
pub(crate) mod deadlines;
pub(crate) mod judge;
pub(crate) mod records;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

use gapless_core::{FiringKind, Instant, Interval, Rule};

/// A rule as the ledger holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRule {
    /// Name, definition and settings.
    pub rule: Rule,
    /// When it was first recorded.
    pub created_at: Instant,
}

/// What [`crate::Store::put_rule`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RulePut {
    /// A new rule, with a `complete` firing for each window already complete.
    Created {
        /// The firings recorded at once.
        firings: u64,
    },
    /// An existing rule with the same definition whose settings changed.
    Updated,
    /// The same rule again: nothing changed.
    Unchanged,
}

/// Where a firing stands with its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeliveryState {
    /// The rule had no target when it fired.
    None,
    /// Still to be delivered (or being tried again).
    Pending,
    /// The target took it.
    Delivered,
    /// Given up after the target's retry limit.
    Failed,
}

impl DeliveryState {
    /// The text form: `none`, `pending`, `delivered`, `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::None => "none",
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }
}

/// A firing's delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The target it goes to, if its rule had one.
    pub target: Option<String>,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: u32,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
    /// Set only by [`crate::Store::claim_deliveries`]: the firing was
    /// claimed from a lease that ended without a finish, so its last holder
    /// may have sent it (a deliverer killed mid-delivery).
    pub reclaimed: bool,
}

/// One recorded change of a window's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// Its place in the ledger's order of firings.
    pub seq: i64,
    /// The rule's name.
    pub rule: String,
    /// What happened to the window.
    pub kind: FiringKind,
    /// The window.
    pub window: Interval,
    /// The window's key (its start in the rule's zone and key format).
    pub key: String,
    /// 1 for the first `complete`, 2 for the next, …; an `incomplete`
    /// carries the generation it withdraws, a `late` the current one (0
    /// when the window was never complete).
    pub generation: u32,
    /// The joint covered share of the window when it fired.
    pub covered_ratio: f64,
    /// When it was recorded.
    pub recorded_at: Instant,
    /// Its delivery.
    pub delivery: Delivery,
}

/// Which firings to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FiringQuery {
    /// Only this rule's.
    pub rule: Option<String>,
    /// Only those after this sequence (the previous page's cursor).
    pub after: Option<i64>,
    /// At most this many (0 or more than 10,000: 10,000).
    pub limit: usize,
    /// The newest `limit` of them rather than the oldest (still in sequence
    /// order; no next page).
    pub newest: bool,
}

/// One page of firings.
#[derive(Debug, Clone, PartialEq)]
pub struct FiringPage {
    /// In sequence order.
    pub firings: Vec<Firing>,
    /// The cursor of the next page (the last sequence returned) when more
    /// may follow.
    pub next: Option<i64>,
}

impl FiringPage {
    /// The page `query` asked for, from the at most `limit` firings its
    /// read returned (newest first for [`FiringQuery::newest`], which the
    /// page turns back into sequence order and gives no next page).
    pub(crate) fn of(mut firings: Vec<Firing>, query: &FiringQuery, limit: usize) -> FiringPage {
        if query.newest {
            firings.reverse();
        }
        let next = (!query.newest && firings.len() == limit)
            .then(|| firings.last().map(|f| f.seq))
            .flatten();
        FiringPage { firings, next }
    }
}

/// How a deliverer finishes a firing it claimed
/// ([`crate::Store::finish_delivery`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// The target took it (one attempt more).
    Delivered,
    /// Delivered without sending: the target does not take the firing's
    /// kind (attempts unchanged, no error).
    Skipped,
    /// The attempt failed; try again at `next_try` (one attempt more).
    Retry {
        /// Why the attempt failed.
        error: String,
        /// When it is due again.
        next_try: Instant,
    },
    /// The attempt failed for good (one attempt more): the firing is
    /// `failed` until [`crate::Store::retry_failed`].
    Failed {
        /// Why.
        error: String,
    },
    /// Not attempted (e.g. its target is not configured here): still
    /// pending, due again at `next_try`, attempts unchanged.
    Postponed {
        /// Why it was not attempted.
        error: String,
        /// When it is due again.
        next_try: Instant,
    },
}

/// A target of a deliverer's targets file and the firing kinds it takes
/// ([`crate::Store::skip_deliveries`]).
#[derive(Debug, Clone, Copy)]
pub struct TargetKinds<'a> {
    /// Its name, as rules name it.
    pub target: &'a str,
    /// The kinds it takes; firings of the others are delivered unsent.
    pub kinds: &'a [FiringKind],
}

impl TargetKinds<'_> {
    /// The kinds it takes as a bit set, bit `firing_kind_code(kind)` for
    /// each, so that one statement can test a row's kind against it.
    pub(crate) fn mask(&self) -> i64 {
        self.kinds
            .iter()
            .fold(0, |m, k| m | 1 << codec::firing_kind_code(*k))
    }
}

/// What the targets of a process's own targets file take, once it was told
/// ([`crate::Store::settle_untaken`]): a firing this store records for one
/// of those targets, of a kind the target does not take, is recorded
/// `delivered` unsent, as a deliverer would mark it
/// ([`crate::Store::skip_deliveries`]), without a second write per firing.
#[derive(Debug, Default)]
pub(crate) struct Untaken {
    /// The kinds each target takes, as [`TargetKinds::mask`]; empty until
    /// told.
    masks: RwLock<HashMap<String, i64>>,
    /// The firings recorded so, counted once committed.
    settled: AtomicU64,
}

impl Untaken {
    /// Record the firings of `takes`' targets by what they take from now on.
    pub(crate) fn set(&self, takes: &[TargetKinds<'_>]) {
        let masks = takes
            .iter()
            .map(|t| (t.target.to_string(), t.mask()))
            .collect();
        *self.masks.write().unwrap_or_else(|e| e.into_inner()) = masks;
    }

    /// The state each of `firings` is recorded in (as [`state_code`]), and
    /// how many of them are recorded delivered unsent.
    ///
    /// [`state_code`]: codec::state_code
    pub(crate) fn states(&self, firings: &[judge::NewFiring]) -> (Vec<i16>, u64) {
        let masks = self.masks.read().unwrap_or_else(|e| e.into_inner());
        let mut settled = 0;
        let states = firings
            .iter()
            .map(|f| {
                let state = match f.target.as_deref() {
                    None => DeliveryState::None,
                    Some(t) => match masks.get(t) {
                        Some(mask) if mask & 1 << codec::firing_kind_code(f.kind) == 0 => {
                            settled += 1;
                            DeliveryState::Delivered
                        }
                        _ => DeliveryState::Pending,
                    },
                };
                codec::state_code(state)
            })
            .collect();
        (states, settled)
    }

    /// Count `n` firings recorded delivered unsent, once their transaction
    /// committed.
    pub(crate) fn committed(&self, n: u64) {
        if n > 0 {
            self.settled.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// How many firings were recorded delivered unsent so far.
    pub(crate) fn settled(&self) -> u64 {
        self.settled.load(Ordering::Relaxed)
    }
}

/// A delivery outcome's new columns: state, attempts added, last error,
/// next try.
pub(crate) struct Finish<'a> {
    pub(crate) state: i16,
    pub(crate) add_attempts: i64,
    pub(crate) last_error: Option<&'a str>,
    pub(crate) next_try: Option<i64>,
}

impl DeliveryOutcome {
    pub(crate) fn columns(&self) -> Finish<'_> {
        use codec::state_code;
        match self {
            DeliveryOutcome::Delivered => Finish {
                state: state_code(DeliveryState::Delivered),
                add_attempts: 1,
                last_error: None,
                next_try: None,
            },
            DeliveryOutcome::Skipped => Finish {
                state: state_code(DeliveryState::Delivered),
                add_attempts: 0,
                last_error: None,
                next_try: None,
            },
            DeliveryOutcome::Retry { error, next_try } => Finish {
                state: state_code(DeliveryState::Pending),
                add_attempts: 1,
                last_error: Some(error),
                next_try: Some(next_try.as_micros()),
            },
            DeliveryOutcome::Failed { error } => Finish {
                state: state_code(DeliveryState::Failed),
                add_attempts: 1,
                last_error: Some(error),
                next_try: None,
            },
            DeliveryOutcome::Postponed { error, next_try } => Finish {
                state: state_code(DeliveryState::Pending),
                add_attempts: 0,
                last_error: Some(error),
                next_try: Some(next_try.as_micros()),
            },
        }
    }
}

/// The end of a lease taken at `now` for `lease`.
pub(crate) fn lease_end(now: Instant, lease: std::time::Duration) -> i64 {
    let us = i64::try_from(lease.as_micros()).unwrap_or(i64::MAX);
    now.as_micros().saturating_add(us)
}

/// The largest claim.
pub(crate) const MAX_CLAIM: usize = 1_000;

/// The refusal of a new definition for an existing rule, naming what
/// differs.
pub(crate) fn changed_definition(
    stored: &gapless_core::Rule,
    new: &gapless_core::Rule,
) -> crate::StoreError {
    let (a, b) = (&stored.def, &new.def);
    let show = |t: Option<Instant>| t.map_or_else(|| "none".to_string(), |t| t.to_string());
    let diff = if a.assets() != b.assets() {
        format!(
            "assets {} (given {})",
            a.assets().join(","),
            b.assets().join(",")
        )
    } else if a.grid() != b.grid() {
        format!("every {} (given {})", a.grid(), b.grid())
    } else if a.tz_name() != b.tz_name() {
        format!("tz {} (given {})", a.tz_name(), b.tz_name())
    } else if a.policy() != b.policy() {
        format!("policy {} (given {})", a.policy(), b.policy())
    } else if a.from() != b.from() {
        format!("from {} (given {})", a.from(), b.from())
    } else {
        format!("until {} (given {})", show(a.until()), show(b.until()))
    };
    crate::StoreError::Conflicting(format!(
        "rule {:?} exists with {diff}; a rule's definition cannot change: delete it first \
         (gapless rule delete {})",
        stored.name, stored.name
    ))
}

/// An asset a new rule names that the ledger does not hold.
pub(crate) fn unknown_asset(asset: &str) -> crate::StoreError {
    crate::StoreError::Invalid(format!(
        "unknown asset {asset:?}: a rule watches assets the ledger knows (declare it first with gapless asset set)"
    ))
}

/// The span of a rule's windows: from `from` to `until` or the end of time.
pub(crate) fn span(def: &gapless_core::RuleDef) -> Interval {
    Interval::new(def.from(), def.until().unwrap_or(Instant::MAX)).expect("until is after from")
}

/// One pass over a rule's deadlines.
#[derive(Debug)]
pub(crate) struct DeadlinePass {
    /// The windows whose deadline passed in this pass, in order.
    pub(crate) windows: Vec<Interval>,
    /// The deadline instant judged up to after this pass.
    pub(crate) judged_up_to: Instant,
}

impl DeadlinePass {
    /// The hull of the windows, if any.
    pub(crate) fn hull(&self) -> Option<Interval> {
        let (first, last) = (self.windows.first()?, self.windows.last()?);
        Interval::new(first.start(), last.end()).ok()
    }
}

/// The windows of `rule` whose deadline (end plus the rule's deadline) lies
/// in `(judged_up_to, now]`, at most `max` (the earliest), and how far that
/// judges; `None` when the rule has no deadline or nothing passed.
///
/// # Errors
///
/// A fault when the stored deadline has no fixed length.
pub(crate) fn deadline_pass(
    rule: &gapless_core::Rule,
    judged_up_to: i64,
    now: Instant,
    max: usize,
) -> crate::Result<Option<DeadlinePass>> {
    let Some(deadline) = rule.settings.deadline else {
        return Ok(None);
    };
    let d = deadline
        .fixed_micros()
        .ok_or_else(|| crate::error::corrupt(format_args!("deadline of rule {:?}", rule.name)))?;
    if now.as_micros() <= judged_up_to {
        return Ok(None);
    }
    let at = |us: i64| {
        Instant::from_micros(us.clamp(Instant::MIN.as_micros(), Instant::MAX.as_micros()))
    };
    let (Ok(lo), Ok(hi)) = (
        at(judged_up_to.saturating_sub(d)),
        at(now.as_micros().saturating_sub(d)),
    ) else {
        return Ok(None);
    };
    let mut windows = rule.def.windows_ending_in(lo, hi);
    let judged_up_to = if windows.len() > max {
        windows.truncate(max);
        let last = windows.last().expect("max is positive").end();
        at(last.as_micros().saturating_add(d)).unwrap_or(now)
    } else {
        now
    };
    Ok(Some(DeadlinePass {
        windows,
        judged_up_to,
    }))
}
