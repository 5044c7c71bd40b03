//! The window states an append's connection knows already, so that the
//! next append need not read them: a stream's appends judge the same
//! rules window after window, and what one append read and wrote is what
//! the next would read.
//!
//! Only rules of one asset are kept. Whoever writes such a rule's states
//! holds its asset's lock (`rules.rs`, # Concurrency) and
//! - appends to the asset, which moves the asset's `last_n`;
//! - passes deadlines, which moves the ledger's `windows_version`;
//! - sets or deletes a rule, which moves `rules_version` (the connection
//!   then reads its rules again and forgets every state it knew).
//!
//! So what was known when the asset's last event had number `last_n` and
//! the ledger was at `rules_version` and `windows_version` still holds when
//! an append reads the same three under the asset's lock. An entry holds
//! every run of its rule from an instant on: what a read of a range found,
//! with a probe that found no run starting after the range, and what the
//! appends of the process wrote since. The entries are the store's, shared
//! by its connections; each says what it holds for, so an entry written
//! late by one append does not pass for newer.

use std::collections::HashSet;

use crate::rule::judge::{StateRead, States, Watch};
use crate::rule::records::{Run, RunChanges};
use crate::{IdMap, IdSet};

/// The most runs kept of one rule. A rule whose windows change record
/// often (gaps, retractions) adds runs as its stream goes on; beyond this
/// the oldest are forgotten, and read from the ledger if judged again.
const MAX_RUNS_KEPT: usize = 64;

/// What a store knows of the states of rules of one asset.
#[derive(Debug, Default)]
pub(crate) struct KnownStates {
    rules: IdMap<i64, Known>,
}

/// The ledger's `rules_version` and `windows_version`.
pub(crate) type Versions = (i64, i64);

/// Every run of one rule from `from` on, as the ledger had them when the
/// rule's asset's last event had number `last_n`, at `versions`.
#[derive(Debug)]
struct Known {
    versions: Versions,
    last_n: i32,
    from: i64,
    /// In start order.
    runs: Vec<Run>,
}

/// An append's planned state reads ([`crate::rule::judge::Plan`]), split
/// into those read from the ledger and those taken from what the
/// connection knows (if it still holds once the assets are locked).
#[derive(Debug, Default)]
pub(crate) struct StateReads {
    /// Read from the ledger.
    pub(crate) read: Vec<StateRead>,
    /// The `(rule, hi)` of each rule of one asset read over one range: a
    /// probe for a run starting after it, so that what is read can be
    /// kept.
    pub(crate) after: Vec<(i64, i64)>,
    /// Taken from what the connection knows.
    known: Vec<StateRead>,
    /// The rules of one asset judged, with their asset.
    rules: Vec<(i64, i64)>,
}

/// What a first read found that can be kept: the rule, where the read
/// began, the runs from there on.
pub(crate) type Fresh = Vec<(i64, i64, Vec<Run>)>;

impl Known {
    /// Whether it still holds at `versions`, its asset's last event being
    /// `last_n`.
    fn holds(&self, versions: Option<Versions>, last_n: Option<&i32>) -> bool {
        versions == Some(self.versions) && last_n == Some(&self.last_n)
    }

    /// At most [`MAX_RUNS_KEPT`] runs, the last: what it knows then begins
    /// just after the end of the last run forgotten (a range that touches
    /// that run is read from the ledger).
    fn keep_the_last(&mut self) {
        let Some(drop) = self.runs.len().checked_sub(MAX_RUNS_KEPT) else {
            return;
        };
        if let Some(last) = self.runs.drain(..drop).next_back() {
            self.from = self.from.max(last.1 + 1);
        }
    }
}

impl KnownStates {
    /// Forget everything (a write that failed).
    pub(crate) fn clear(&mut self) {
        self.rules.clear();
    }

    /// Split `reads` (planned for `watches`, each rule's reads together):
    /// a rule of one asset whose every read range begins where the store
    /// knows its runs is taken from there; the others are read,
    /// with a probe past the range when the rule is of one asset and read
    /// over one range.
    pub(crate) fn split(&self, watches: &[&Watch], reads: &[StateRead]) -> StateReads {
        let mut out = StateReads {
            rules: watches
                .iter()
                .filter_map(|w| Some((w.id, w.single_asset()?)))
                .collect(),
            ..StateReads::default()
        };
        for of_rule in reads.chunk_by(|a, b| a.rule == b.rule) {
            let rule = of_rule[0].rule;
            // A few dozen rules a group: a scan, not a map built each time.
            if !out.rules.iter().any(|(r, _)| *r == rule) {
                out.read.extend_from_slice(of_rule);
                continue;
            }
            let from = self.rules.get(&rule).map(|k| k.from);
            let lo = of_rule
                .iter()
                .map(|r| r.hull.start().as_micros())
                .min()
                .expect("a chunk is not empty");
            if from.is_some_and(|from| from <= lo) {
                out.known.extend_from_slice(of_rule);
            } else {
                if let [one] = of_rule {
                    out.after.push((rule, one.hull.end().as_micros()));
                }
                out.read.extend_from_slice(of_rule);
            }
        }
        out
    }

    /// Once the assets are locked: forget the rules of `reads` known at
    /// other `versions` or at another last event of their asset (`last_n`,
    /// by asset).
    pub(crate) fn check(
        &mut self,
        versions: Option<Versions>,
        reads: &StateReads,
        last_n: &IdMap<i64, i32>,
    ) {
        for (rule, asset) in &reads.rules {
            if self
                .rules
                .get(rule)
                .is_some_and(|k| !k.holds(versions, last_n.get(asset)))
            {
                self.rules.remove(rule);
            }
        }
    }

    /// Add the states of `reads`' known ranges to `states`; the ranges
    /// whose rule is no longer known are returned, to be read.
    pub(crate) fn fill(&self, reads: &StateReads, states: &mut States) -> Vec<StateRead> {
        let mut missing = Vec::new();
        for read in &reads.known {
            let Some(known) = self.rules.get(&read.rule) else {
                missing.push(*read);
                continue;
            };
            let (lo, hi) = (read.hull.start().as_micros(), read.hull.end().as_micros());
            // As the ledger's read: every run overlapping or touching it.
            for &(start, end, record) in known.runs.iter().filter(|r| r.1 >= lo && r.0 <= hi) {
                states.insert(read.rule, start, end, record);
            }
        }
        missing
    }

    /// What the reads of `reads` found that can be kept: the rules probed
    /// for which no run starts after the range (`after`: those for which
    /// one does).
    pub(crate) fn fresh(reads: &StateReads, states: &States, after: &IdSet<i64>) -> Fresh {
        reads
            .after
            .iter()
            .filter(|(rule, _)| !after.contains(rule))
            .filter_map(|&(rule, _)| {
                let read = reads.read.iter().find(|r| r.rule == rule)?;
                Some((
                    rule,
                    read.hull.start().as_micros(),
                    states.runs(rule).to_vec(),
                ))
            })
            .collect()
    }

    /// Once an append's transaction committed at `versions`: its rules of
    /// one asset (`reads`) hold what it read (`fresh`) or knew when it
    /// locked their asset (at `before`, by asset), with what judging
    /// changed (`changes`), at their asset's last event now (`after`).
    pub(crate) fn committed(
        &mut self,
        versions: Option<Versions>,
        reads: &StateReads,
        fresh: Fresh,
        changes: Option<&RunChanges>,
        [before, after]: [&IdMap<i64, i32>; 2],
    ) {
        let Some(versions) = versions else {
            return;
        };
        let read: IdSet<i64> = reads.read.iter().map(|r| r.rule).collect();
        for (rule, asset) in &reads.rules {
            // Read again, or changed by another append since the check (on
            // another thread): replaced by what was read, or forgotten.
            if read.contains(rule)
                || self
                    .rules
                    .get(rule)
                    .is_some_and(|k| !k.holds(Some(versions), before.get(asset)))
            {
                self.rules.remove(rule);
            }
        }
        for (rule, from, runs) in fresh {
            // Its `last_n` is set below, with the others'.
            self.rules.insert(
                rule,
                Known {
                    versions,
                    last_n: 0,
                    from,
                    runs,
                },
            );
        }
        if let Some(c) = changes {
            let mut touched = HashSet::new();
            for (rule, start) in &c.deleted {
                if let Some(k) = self.rules.get_mut(rule) {
                    k.runs.retain(|r| r.0 != *start);
                }
            }
            for (rule, run) in c.updated.iter().chain(&c.inserted) {
                if let Some(k) = self.rules.get_mut(rule) {
                    k.runs.retain(|r| r.0 != run.0);
                    k.runs.push(*run);
                    touched.insert(*rule);
                }
            }
            for rule in touched {
                if let Some(k) = self.rules.get_mut(&rule) {
                    k.runs.sort_unstable_by_key(|r| r.0);
                    k.keep_the_last();
                }
            }
        }
        for (rule, asset) in &reads.rules {
            match (self.rules.get_mut(rule), after.get(asset)) {
                (Some(k), Some(&n)) => k.last_n = n,
                (Some(_), None) => {
                    self.rules.remove(rule);
                }
                (None, _) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use gapless_core::{Grid, Instant, Interval, Policy, Rule, RuleDef, RuleSettings, WindowState};

    use super::*;
    use crate::rule::judge::WindowRecord;

    const H: i64 = 3_600_000_000;
    const AT: Option<Versions> = Some((3, 1));

    /// Rule `id`, hourly, on the assets `assets` (by id).
    fn watch(id: i64, assets: &[i64]) -> Watch {
        let names = assets.iter().map(|a| format!("a{a}")).collect();
        let from = Instant::from_micros(0).unwrap();
        let def = RuleDef::new(
            names,
            Grid::parse("1h").unwrap(),
            "UTC",
            Policy::Full,
            from,
            None,
        )
        .unwrap();
        Watch {
            id,
            rule: Rule {
                name: format!("r{id}"),
                def,
                settings: RuleSettings::default(),
            },
            assets: assets.to_vec(),
        }
    }

    /// The read of `rule`'s hours `[a, b)`.
    fn read(rule: i64, a: i64, b: i64) -> StateRead {
        StateRead {
            rule,
            hull: Interval::from_micros(a * H, b * H).unwrap(),
            rows: b - a + 2,
        }
    }

    fn complete() -> WindowRecord {
        WindowRecord {
            state: WindowState {
                complete: true,
                generation: 1,
            },
            late: false,
        }
    }

    fn last_n(n: i32) -> IdMap<i64, i32> {
        IdMap::from_iter([(10, n)])
    }

    /// Rule 1 on asset 10, its hour 1 read (nothing after it) and
    /// completed by an append that took the asset's events from 0 to 4.
    fn kept() -> (KnownStates, Watch) {
        let mut k = KnownStates::default();
        let w = watch(1, &[10]);
        let s = k.split(&[&w], &[read(1, 1, 2)]);
        assert_eq!(s.read, [read(1, 1, 2)]);
        assert_eq!(s.after, [(1, 2 * H)]);
        k.check(AT, &s, &last_n(0));
        let fresh = KnownStates::fresh(&s, &States::new(), &IdSet::default());
        let changes = RunChanges {
            inserted: vec![(1, (H, 2 * H, complete()))],
            ..RunChanges::default()
        };
        k.committed(AT, &s, fresh, Some(&changes), [&last_n(0), &last_n(4)]);
        (k, w)
    }

    #[test]
    fn what_an_append_read_and_wrote_is_not_read_again() {
        let (mut k, w) = kept();
        let s = k.split(&[&w], &[read(1, 2, 3)]);
        assert!(s.read.is_empty() && s.after.is_empty());
        k.check(AT, &s, &last_n(4));
        let mut states = States::new();
        assert!(k.fill(&s, &mut states).is_empty());
        // The run that ends where the read begins, as the ledger's read.
        assert_eq!(states.runs(1), [(H, 2 * H, complete())]);
    }

    #[test]
    fn another_append_a_deadline_pass_or_a_rule_change_since_is_read() {
        for (versions, n) in [(AT, 5), (Some((3, 2)), 4), (Some((4, 1)), 4), (None, 4)] {
            let (mut k, w) = kept();
            let s = k.split(&[&w], &[read(1, 2, 3)]);
            k.check(versions, &s, &last_n(n));
            let mut states = States::new();
            assert_eq!(k.fill(&s, &mut states), [read(1, 2, 3)]);
            assert!(states.runs(1).is_empty());
        }
    }

    #[test]
    fn a_range_before_what_is_known_is_read_and_replaces_it() {
        let (mut k, w) = kept();
        let s = k.split(&[&w], &[read(1, 0, 1)]);
        assert_eq!(s.read, [read(1, 0, 1)]);
        k.check(AT, &s, &last_n(4));
        // A run after the range: what was read cannot be kept.
        let after = IdSet::from_iter([1]);
        let fresh = KnownStates::fresh(&s, &States::new(), &after);
        assert!(fresh.is_empty());
        k.committed(AT, &s, fresh, None, [&last_n(4), &last_n(5)]);
        assert!(!k.rules.contains_key(&1));
    }

    #[test]
    fn rules_of_several_assets_and_reads_of_several_ranges_are_read() {
        let k = KnownStates::default();
        let two = watch(2, &[10, 11]);
        let s = k.split(&[&two], &[read(2, 0, 1)]);
        assert_eq!((s.read.len(), s.after.len()), (1, 0));
        let one = watch(1, &[10]);
        let s = k.split(&[&one], &[read(1, 0, 1), read(1, 3, 4)]);
        assert_eq!((s.read.len(), s.after.len()), (2, 0));
    }

    #[test]
    fn a_rule_keeps_its_last_runs_and_reads_what_it_forgot() {
        let (mut k, w) = kept();
        // Every other hour complete from hour 3 on: a run each.
        let runs = (0..MAX_RUNS_KEPT as i64 + 5)
            .map(|i| (1, ((3 + 2 * i) * H, (4 + 2 * i) * H, complete())))
            .collect();
        let s = k.split(&[&w], &[read(1, 2, 3)]);
        k.check(AT, &s, &last_n(4));
        let changes = RunChanges {
            inserted: runs,
            ..RunChanges::default()
        };
        k.committed(AT, &s, Vec::new(), Some(&changes), [&last_n(4), &last_n(9)]);
        let kept = &k.rules[&1];
        assert_eq!(kept.runs.len(), MAX_RUNS_KEPT);
        // The runs of hours 1, 3, ..., 11 forgotten: from just after 12.
        assert_eq!(kept.from, 12 * H + 1);
        assert_eq!(kept.runs[0].0, 13 * H);
        let s = k.split(&[&w], &[read(1, 12, 13)]);
        assert_eq!(s.read, [read(1, 12, 13)]);
        let s = k.split(&[&w], &[read(1, 13, 14)]);
        assert_eq!(s.known, [read(1, 13, 14)]);
    }

    #[test]
    fn an_entry_changed_by_another_append_since_the_check_is_forgotten() {
        let (mut k, w) = kept();
        let s = k.split(&[&w], &[read(1, 2, 3)]);
        k.check(AT, &s, &last_n(4));
        // Another thread's late commit left it at another last event.
        k.rules.get_mut(&1).unwrap().last_n = 2;
        k.committed(AT, &s, Vec::new(), None, [&last_n(4), &last_n(6)]);
        assert!(!k.rules.contains_key(&1));
    }
}
