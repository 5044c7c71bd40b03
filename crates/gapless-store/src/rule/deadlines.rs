//! When each rule's next deadline passes, as one process last read the
//! rules: a deadline pass (every second in `serve`) reads, locks and writes
//! only the rules whose next deadline is due, instead of every rule with a
//! deadline each time.
//!
//! A rule's next deadline is worked out from its `deadlines_us` (judged up
//! to) as read. Other processes sharing the ledger only move that forward,
//! so the instant kept here is never later than the one the ledger's row
//! gives: a rule found due is judged from its row, read again under its
//! lock, and a rule not due here is not due in the ledger either. Skipping
//! a rule whose next deadline has not passed changes nothing: the pass
//! would judge no window of it, only move its `deadlines_us` to now, and
//! the next pass that finds it due judges the same windows from the older
//! value. Any change of the rules moves the ledger's `rules_version`, and
//! the rules are read again.

use crate::IdMap;
use gapless_core::{Instant, Rule};

/// The rules with a deadline, by id, each with when its next deadline
/// passes (µs; `i64::MAX`: never).
#[derive(Debug, Default)]
pub(crate) struct DeadlineCache {
    version: Option<String>,
    next: IdMap<i64, i64>,
}

impl DeadlineCache {
    /// Whether the rules were read at `version`.
    pub(crate) fn is_current(&self, version: &str) -> bool {
        self.version.as_deref() == Some(version)
    }

    /// The rules with a deadline as read at `version`: `(id, rule, judged
    /// up to)`.
    pub(crate) fn load(
        &mut self,
        version: String,
        rules: impl IntoIterator<Item = (i64, Rule, i64)>,
    ) {
        self.next = rules
            .into_iter()
            .map(|(id, rule, judged)| (id, next_deadline(&rule, judged)))
            .collect();
        self.version = Some(version);
    }

    /// The rules whose next deadline passed by `now`, by id.
    pub(crate) fn due(&self, now: Instant) -> Vec<i64> {
        let now = now.as_micros();
        let mut due: Vec<i64> = self
            .next
            .iter()
            .filter(|&(_, &next)| next <= now)
            .map(|(&id, _)| id)
            .collect();
        due.sort_unstable();
        due
    }

    /// Rule `id` was judged up to `judged` (committed).
    pub(crate) fn judged(&mut self, id: i64, rule: &Rule, judged: i64) {
        self.next.insert(id, next_deadline(rule, judged));
    }

    /// Rule `id` is gone or has no deadline any more (committed).
    pub(crate) fn forget(&mut self, id: i64) {
        self.next.remove(&id);
    }
}

/// When the next deadline of `rule` passes after it was judged up to
/// `judged` (µs): the end plus the deadline of its first window ending
/// after `judged` less the deadline. A deadline of no fixed length is due
/// at once, so that the pass reports it.
fn next_deadline(rule: &Rule, judged: i64) -> i64 {
    let Some(deadline) = rule.settings.deadline else {
        return i64::MAX;
    };
    let Some(d) = deadline.fixed_micros() else {
        return i64::MIN;
    };
    // As the pass clamps: windows ending after `judged - d`.
    let after = judged
        .saturating_sub(d)
        .clamp(Instant::MIN.as_micros(), Instant::MAX.as_micros());
    let after = Instant::from_micros(after).expect("clamped to the time line");
    rule.def
        .first_end_after(after)
        .map_or(i64::MAX, |end| end.as_micros().saturating_add(d))
}
