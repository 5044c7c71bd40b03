//! Rules' window records as runs: consecutive windows of one rule with the
//! same record kept as one `(start, end, record)`.
//!
//! A rule completes window after window, each once, with the same record
//! (complete, generation 1, not late); a row per window would grow by a
//! row a window for every rule for as long as the ledger lives, and cost
//! an index entry each time. Kept as runs, a rule that keeps up has one
//! row, whose end moves. A window in no run has the default record (never
//! complete, never late), so such windows are not kept at all.
//!
//! [`States`] is what a backend read: runs (a ledger from before runs held
//! a row per window, which its migration joined). [`RunChanges::of`] says how to write
//! what judging changed as runs: the runs read for the judged windows'
//! hull (and those touching it, to join them), cut where windows changed,
//! joined where neighbours hold the same record. Runs are cut only at
//! window boundaries (every window of a rule shares its grid; a rule's
//! definition never changes), and whoever writes a rule's records holds
//! its locks, so what was read is what is stored.

use gapless_core::Interval;

use super::judge::WindowRecord;
use crate::IdMap;

/// One run: `(start, end, record)`, in microseconds.
pub(crate) type Run = (i64, i64, WindowRecord);

/// Recorded window states read: each rule's runs, in start order, none
/// overlapping another.
#[derive(Debug, Default, Clone)]
pub(crate) struct States(IdMap<i64, Vec<Run>>);

impl States {
    pub(crate) fn new() -> States {
        States::default()
    }

    /// Add a run of `rule` read from the store (in any order; a run read
    /// twice counts once).
    pub(crate) fn insert(&mut self, rule: i64, start: i64, end: i64, record: WindowRecord) {
        let runs = self.0.entry(rule).or_default();
        match runs.last() {
            Some(last) if last.0 < start => runs.push((start, end, record)),
            _ => match runs.binary_search_by_key(&start, |r| r.0) {
                Ok(_) => {}
                Err(at) => runs.insert(at, (start, end, record)),
            },
        }
    }

    /// The record of `rule`'s window starting at `start`: its run's, or the
    /// default when no run holds it.
    pub(crate) fn get(&self, rule: i64, start: i64) -> WindowRecord {
        let Some(runs) = self.0.get(&rule) else {
            return WindowRecord::default();
        };
        let after = runs.partition_point(|r| r.0 <= start);
        match after.checked_sub(1).map(|i| runs[i]) {
            Some((_, end, record)) if start < end => record,
            _ => WindowRecord::default(),
        }
    }

    /// `rule`'s runs, in start order.
    pub(crate) fn runs(&self, rule: i64) -> &[Run] {
        self.0.get(&rule).map_or(&[], Vec::as_slice)
    }

    /// The runs of `rule` alone.
    pub(crate) fn only(&self, rule: i64) -> States {
        let mut out = States::new();
        if let Some(runs) = self.0.get(&rule) {
            out.0.insert(rule, runs.clone());
        }
        out
    }

    /// Keep only the runs of the rules `keep` says.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(i64) -> bool) {
        self.0.retain(|rule, _| keep(*rule));
    }

    /// Add `other`'s rules (rules in both keep this one's runs).
    pub(crate) fn extend(&mut self, other: States) {
        for (rule, runs) in other.0 {
            self.0.entry(rule).or_insert(runs);
        }
    }
}

/// What to read of a rule's runs before judging some of its windows that
/// follow one another: the runs that overlap or touch `hull`, the windows'
/// hull. A rule's runs never overlap and start at window starts, so
/// reading back from the hull's end, they are among the first `rows` (a
/// run for each window of the hull, one starting at its end, the one
/// before), which bounds a read that walks the rule's runs from the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct StateRead {
    pub(crate) rule: i64,
    pub(crate) hull: Interval,
    pub(crate) rows: i64,
}

impl StateRead {
    /// The reads for judging `windows` (in order) of rule `rule`: one for
    /// each stretch of windows that follow one another (a run between two
    /// stretches is no part of either's judging).
    pub(crate) fn of(rule: i64, windows: &[Interval]) -> impl Iterator<Item = StateRead> + '_ {
        windows
            .chunk_by(|a, b| a.end() == b.start())
            .map(move |stretch| StateRead {
                rule,
                hull: Interval::new(stretch[0].start(), stretch[stretch.len() - 1].end())
                    .expect("windows are not empty"),
                rows: stretch.len() as i64 + 2,
            })
    }
}

/// How to bring the stored runs to what judging changed: runs deleted
/// `(rule, start)`, runs whose start stays and whose end or record changes,
/// runs inserted (`(rule, run)`).
#[derive(Debug, Default, PartialEq)]
pub(crate) struct RunChanges {
    pub(crate) deleted: Vec<(i64, i64)>,
    pub(crate) updated: Vec<(i64, Run)>,
    pub(crate) inserted: Vec<(i64, Run)>,
}

impl RunChanges {
    /// The changes that give each window of `changed` (`(rule, window,
    /// record)`, each rule's windows once) its record over `stored`, what
    /// was read of those rules: every run overlapping the hull of their
    /// changed windows, and those touching it.
    pub(crate) fn of(stored: &States, changed: &[(i64, Interval, WindowRecord)]) -> RunChanges {
        let mut changed: Vec<(i64, Run)> = changed
            .iter()
            .map(|c| (c.0, (c.1.start().as_micros(), c.1.end().as_micros(), c.2)))
            .collect();
        // Mostly in order already (a judge's outcome, or rules' outcomes
        // one after the other).
        changed.sort_by_key(|c| (c.0, c.1 .0));
        let mut out = RunChanges::default();
        let mut rest = &changed[..];
        let mut windows: Vec<Run> = Vec::new();
        while let Some(&(rule, _)) = rest.first() {
            let n = rest.iter().take_while(|c| c.0 == rule).count();
            let (of_rule, next) = rest.split_at(n);
            rest = next;
            windows.clear();
            windows.extend(of_rule.iter().map(|c| c.1));
            out.rule(rule, stored.runs(rule), &windows);
        }
        out
    }

    /// One rule's changes: `before`, its runs read; `windows`, its changed
    /// windows with their records, in start order.
    fn rule(&mut self, rule: i64, before: &[Run], windows: &[Run]) {
        // What was stored, less the changed windows, and the changed
        // windows: then joined where neighbours hold the same record.
        let mut pieces: Vec<Run> = Vec::with_capacity(before.len() + windows.len() + 2);
        for &(start, end, record) in before {
            let mut from = start;
            let first = windows.partition_point(|w| w.1 <= start);
            for w in windows[first..].iter().take_while(|w| w.0 < end) {
                if from < w.0 {
                    pieces.push((from, w.0, record));
                }
                from = from.max(w.1);
            }
            if from < end {
                pieces.push((from, end, record));
            }
        }
        pieces.extend_from_slice(windows);
        pieces.sort_unstable_by_key(|p| p.0);
        let mut after: Vec<Run> = Vec::with_capacity(pieces.len());
        for p in pieces {
            if p.2 == WindowRecord::default() {
                continue;
            }
            match after.last_mut() {
                Some(last) if last.1 == p.0 && last.2 == p.2 => last.1 = p.1,
                _ => after.push(p),
            }
        }
        // Same start: updated (or left); a start no longer there: deleted.
        let mut old = before.iter().peekable();
        for run in after {
            while let Some(o) = old.next_if(|o| o.0 < run.0) {
                self.deleted.push((rule, o.0));
            }
            match old.next_if(|o| o.0 == run.0) {
                Some(o) if *o == run => {}
                Some(_) => self.updated.push((rule, run)),
                None => self.inserted.push((rule, run)),
            }
        }
        self.deleted.extend(old.map(|o| (rule, o.0)));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use gapless_core::WindowState;
    use proptest::prelude::*;

    use super::*;

    /// Windows of ten units on a grid: window `i` is `[10 i, 10 i + 10)`.
    fn window(i: i64) -> Interval {
        Interval::from_micros(i * 10, i * 10 + 10).unwrap()
    }

    fn record(code: u8) -> WindowRecord {
        WindowRecord {
            state: WindowState {
                complete: code & 1 == 1,
                generation: u32::from(code >> 2),
            },
            late: code & 2 == 2,
        }
    }

    /// The stored runs of one rule, as a table would hold them after
    /// `changes`, and what each window's record is.
    #[derive(Default)]
    struct Table {
        rows: BTreeMap<i64, (i64, WindowRecord)>,
    }

    impl Table {
        /// Read as a backend does: runs overlapping or touching `[lo, hi]`.
        fn read(&self, rule: i64, lo: i64, hi: i64) -> States {
            let mut s = States::new();
            for (&start, &(end, record)) in &self.rows {
                if start <= hi && end >= lo {
                    s.insert(rule, start, end, record);
                }
            }
            s
        }

        fn apply(&mut self, rule: i64, c: &RunChanges) {
            for &(r, start) in &c.deleted {
                assert_eq!(r, rule);
                assert!(
                    self.rows.remove(&start).is_some(),
                    "deleted {start}: absent"
                );
            }
            for &(r, (start, end, record)) in &c.updated {
                assert_eq!(r, rule);
                let row = self.rows.get_mut(&start).expect("updated: present");
                *row = (end, record);
            }
            for &(r, (start, end, record)) in &c.inserted {
                assert_eq!(r, rule);
                assert!(
                    self.rows.insert(start, (end, record)).is_none(),
                    "inserted {start}: present"
                );
            }
        }

        fn record(&self, i: i64) -> WindowRecord {
            let at = i * 10;
            match self.rows.range(..=at).next_back() {
                Some((_, &(end, record))) if at < end => record,
                _ => WindowRecord::default(),
            }
        }
    }

    proptest! {
        /// Batches of window changes written as runs, each over what a
        /// backend reads for its hull: every window's record is the one
        /// last written (a map of windows, the reference), runs never
        /// overlap, never hold the default record, and neighbours with the
        /// same record are one run.
        #[test]
        fn runs_hold_every_window_s_last_record(
            batches in prop::collection::vec(
                prop::collection::btree_map(0_i64..40, 0_u8..8, 1..12),
                1..12,
            ),
        ) {
            let rule = 7;
            let mut table = Table::default();
            let mut reference: IdMap<i64, WindowRecord> = IdMap::default();
            for batch in &batches {
                let changed: Vec<(i64, Interval, WindowRecord)> = batch
                    .iter()
                    .map(|(&i, &code)| (rule, window(i), record(code)))
                    .collect();
                let lo = changed[0].1.start().as_micros();
                let hi = changed[changed.len() - 1].1.end().as_micros();
                let stored = table.read(rule, lo, hi);
                // What was read answers for every window of the hull as
                // the table does.
                for i in lo / 10..hi / 10 {
                    prop_assert_eq!(stored.get(rule, i * 10), table.record(i), "read {}", i);
                }
                for (i, code) in batch {
                    reference.insert(*i, record(*code));
                }
                // In any order.
                let mut shuffled = changed.clone();
                shuffled.reverse();
                let c = RunChanges::of(&stored, &shuffled);
                table.apply(rule, &c);
                for i in -1..41 {
                    let want = reference.get(&i).copied().unwrap_or_default();
                    prop_assert_eq!(table.record(i), want, "window {}", i);
                }
                let rows: Vec<(i64, i64, WindowRecord)> =
                    table.rows.iter().map(|(&s, &(e, r))| (s, e, r)).collect();
                for pair in rows.windows(2) {
                    prop_assert!(pair[0].1 <= pair[1].0, "overlap: {:?}", pair);
                    prop_assert!(
                        !(pair[0].1 == pair[1].0 && pair[0].2 == pair[1].2),
                        "not joined: {:?}", pair
                    );
                }
                prop_assert!(rows.iter().all(|r| r.2 != WindowRecord::default()));
            }
        }
    }

    /// A rule that keeps up: each batch completes the next windows, and
    /// the one run's end moves (no row more).
    #[test]
    fn a_rule_that_keeps_up_has_one_run() {
        let rule = 1;
        let done = record(1 | 4);
        let mut table = Table::default();
        for b in 0..5 {
            let changed: Vec<_> = (b * 8..b * 8 + 8)
                .map(|i| (rule, window(i), done))
                .collect();
            let stored = table.read(rule, b * 80, b * 80 + 80);
            let c = RunChanges::of(&stored, &changed);
            if b == 0 {
                assert_eq!(c.inserted, [(rule, (0, 80, done))]);
            } else {
                assert_eq!(c.updated, [(rule, (0, b * 80 + 80, done))]);
                assert!(c.inserted.is_empty() && c.deleted.is_empty());
            }
            table.apply(rule, &c);
        }
        assert_eq!(table.rows.len(), 1);
    }

    /// A window changed inside a run cuts it in three; changed back, the
    /// three are one again.
    #[test]
    fn a_change_inside_a_run_cuts_it_and_joins_it_again() {
        let rule = 3;
        let (done, redone) = (record(1 | 4), record(8));
        let mut table = Table::default();
        let all: Vec<_> = (0..10).map(|i| (rule, window(i), done)).collect();
        table.apply(rule, &RunChanges::of(&table.read(rule, 0, 100), &all));
        let one = [(rule, window(4), redone)];
        let c = RunChanges::of(&table.read(rule, 40, 50), &one);
        assert_eq!(c.updated, [(rule, (0, 40, done))]);
        assert_eq!(
            c.inserted,
            [(rule, (40, 50, redone)), (rule, (50, 100, done))]
        );
        table.apply(rule, &c);
        let back = [(rule, window(4), done)];
        let c = RunChanges::of(&table.read(rule, 40, 50), &back);
        assert_eq!(c.updated, [(rule, (0, 100, done))]);
        assert_eq!(c.deleted, [(rule, 40), (rule, 50)]);
        table.apply(rule, &c);
        assert_eq!(table.rows.len(), 1);
    }
}
