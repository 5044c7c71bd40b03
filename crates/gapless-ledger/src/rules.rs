//! The rule operations (SPEC §7) over the store, typed: recording, reading
//! and deleting rules, pages of firings, and waiting for completeness.
//!
//! Waiting here watches the ledger: it asks again at a short interval,
//! because other processes may write the same ledger. A server wakes its
//! waiters on its own commits instead (`gapless-server`).

use std::time::Duration as StdDuration;

use gapless_api::params::{MAX_WINDOWS, MAX_WINDOWS_GAPS};
use gapless_api::{
    CheckAnswer, DeliveryAnswer, Error, FiringAnswer, FiringsAnswer, Result, RuleAnswer,
    RuleDeletedAnswer, RuleOutcome, RuleSetAnswer, RuleWindowsAnswer, RulesAnswer, WindowAnswer,
};
use gapless_core::{CoverageReport, Interval, IntervalSet, Policy, Rule};
use gapless_store::{Firing, FiringQuery, RulePut, RuleQuery, StoredRule};

use crate::error::from_store;
use crate::{now, Ledger};

/// How often a wait on an embedded ledger asks again.
pub const WATCH_INTERVAL: StdDuration = StdDuration::from_millis(200);

/// A stored rule as the API answers it.
pub fn rule_answer(stored: &StoredRule) -> RuleAnswer {
    let r = &stored.rule;
    RuleAnswer {
        rule: r.name.clone(),
        assets: r.def.assets().to_vec(),
        every: r.def.grid().to_string(),
        tz: r.def.tz_name().to_string(),
        policy: r.def.policy().to_string(),
        from: r.def.from(),
        until: r.def.until(),
        deadline: r.settings.deadline.map(|d| d.to_iso8601()),
        target: r.settings.target.clone(),
        key_format: r.settings.key_format.clone(),
    }
}

/// A stored firing as the API answers it.
pub fn firing_answer(f: Firing) -> FiringAnswer {
    FiringAnswer {
        seq: f.seq,
        rule: f.rule,
        kind: f.kind,
        window: f.window.into(),
        key: f.key,
        generation: f.generation,
        covered_ratio: f.covered_ratio,
        recorded_at: f.recorded_at,
        delivery: DeliveryAnswer {
            target: f.delivery.target,
            state: f.delivery.state.as_str().to_string(),
            attempts: f.delivery.attempts,
            last_error: f.delivery.last_error,
        },
    }
}

impl Ledger {
    /// Record `rule`, or new settings of it.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen (with the nearest
    /// name), `Conflict` for a new definition of an existing rule,
    /// `BadInput` for bad settings.
    pub fn put_rule(&self, rule: &Rule) -> Result<RuleSetAnswer> {
        for a in rule.def.assets() {
            self.known(a)?;
        }
        let put = self.store.put_rule(rule, now()).map_err(from_store)?;
        let (outcome, firings) = match put {
            RulePut::Created { firings } => (RuleOutcome::Created, firings),
            RulePut::Updated => (RuleOutcome::Updated, 0),
            RulePut::Unchanged => (RuleOutcome::Unchanged, 0),
        };
        Ok(RuleSetAnswer {
            rule: rule_answer(&self.stored_rule(&rule.name)?),
            outcome,
            firings,
        })
    }

    /// The rule named `name`.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule, with the nearest name.
    pub fn stored_rule(&self, name: &str) -> Result<StoredRule> {
        match self.store.rule(name).map_err(from_store)? {
            Some(r) => Ok(r),
            None => Err(self.unknown_rule(name)?),
        }
    }

    /// `rule windows`: the windows of rule `name` that overlap `range`,
    /// each judged now as the rule judges it (on the joint coverage of its
    /// assets; nothing covered is never complete), keyed in its format.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule; `BadInput` for more than
    /// [`MAX_WINDOWS`] windows; storage faults.
    pub fn rule_windows_in(&self, name: &str, range: Interval) -> Result<RuleWindowsAnswer> {
        let stored = self.stored_rule(name)?;
        let (def, settings) = (&stored.rule.def, &stored.rule.settings);
        let windows = def.windows_at_most(range, MAX_WINDOWS).map_err(|n| {
            Error::bad_input(format!(
                "the range holds about {n} windows of rule {name:?} ({}), more than the limit \
                 of {MAX_WINDOWS}: ask for a shorter range",
                def.grid()
            ))
        })?;
        let joint = match (windows.first(), windows.last()) {
            (Some(f), Some(l)) => {
                self.joint_coverage(def.assets(), Interval::new(f.start(), l.end())?)?
            }
            _ => IntervalSet::new(),
        };
        let mut gaps = MAX_WINDOWS_GAPS;
        let windows = windows
            .into_iter()
            .map(|w| {
                let report = CoverageReport::of(&joint, w);
                WindowAnswer {
                    key: def.key(w.start(), &settings.key_format),
                    start: w.start(),
                    end: w.end(),
                    covered_ratio: report.covered_ratio,
                    complete: def.judge_report(w, &report).complete,
                    missing_count: report.missing.len(),
                    missing: crate::ledger::cut_within(report.missing, &mut gaps),
                }
            })
            .collect();
        let rule = rule_answer(&stored);
        Ok(RuleWindowsAnswer {
            rule: rule.rule,
            assets: rule.assets,
            every: rule.every,
            tz: rule.tz,
            policy: rule.policy,
            windows,
        })
    }

    /// `unknown rule "x"`, naming the nearest rule.
    fn unknown_rule(&self, name: &str) -> Result<Error> {
        let names: Vec<String> = self
            .store
            .rules()
            .map_err(from_store)?
            .into_iter()
            .map(|r| r.rule.name)
            .collect();
        let mut message = format!("unknown rule {name:?}");
        if let Some(near) = crate::ledger::nearest(name, &names) {
            message.push_str(&format!(" (did you mean {near:?}?)"));
        }
        Ok(Error::not_found(message))
    }

    /// One page of the rules in name order per `query`, its `next` the
    /// cursor of the next page.
    ///
    /// # Errors
    ///
    /// Storage faults.
    pub fn rules_page(&self, query: &RuleQuery) -> Result<RulesAnswer> {
        let page = self.store.rules_page(query).map_err(from_store)?;
        Ok(RulesAnswer {
            rules: page.rules.iter().map(rule_answer).collect(),
            next: page.next.as_deref().map(gapless_api::params::name_cursor),
        })
    }

    /// Remove rule `name` and its firings.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule.
    pub fn remove_rule(&self, name: &str) -> Result<RuleDeletedAnswer> {
        if !self.store.delete_rule(name).map_err(from_store)? {
            return Err(self.unknown_rule(name)?);
        }
        Ok(RuleDeletedAnswer {
            rule: name.to_string(),
            deleted: true,
        })
    }

    /// One page of firings per `query` (after its cursor, of one rule or
    /// all, the oldest or the newest); with `wait`,
    /// waiting up to that long for the first when there is none yet.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown rule; storage faults.
    pub fn firings_page(&self, query: &FiringQuery, wait: StdDuration) -> Result<FiringsAnswer> {
        if let Some(name) = &query.rule {
            self.stored_rule(name)?;
        }
        let give_up = std::time::Instant::now() + wait;
        loop {
            let page = self.store.firings(query).map_err(from_store)?;
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            if !page.firings.is_empty() || left.is_zero() {
                return Ok(FiringsAnswer {
                    firings: page.firings.into_iter().map(firing_answer).collect(),
                    next: page.next,
                });
            }
            std::thread::sleep(left.min(WATCH_INTERVAL));
        }
    }

    /// Wait until `range` of `asset` is complete under `policy`, or
    /// `timeout` passes: the last check.
    ///
    /// # Errors
    ///
    /// As [`Ledger::check`].
    pub fn wait_complete(
        &self,
        asset: &str,
        range: Interval,
        policy: &Policy,
        timeout: StdDuration,
    ) -> Result<CheckAnswer> {
        let give_up = std::time::Instant::now() + timeout;
        loop {
            let answer = self.check(asset, range, policy)?;
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            if answer.complete || left.is_zero() {
                return Ok(answer);
            }
            std::thread::sleep(left.min(WATCH_INTERVAL));
        }
    }
}

impl Ledger {
    /// Record a `late` firing for each window whose deadline passed by
    /// `now` (see [`gapless_store::Store::judge_deadlines`]): how many.
    ///
    /// # Errors
    ///
    /// Storage faults.
    pub fn judge_deadlines(&self, now: gapless_core::Instant) -> Result<u64> {
        self.store.judge_deadlines(now).map_err(from_store)
    }
}
