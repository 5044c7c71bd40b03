//! What both backends share when an append changes an asset's coverage:
//! the stored runs that touch the batch, replayed with the batch's events,
//! and the rows that this changes.

use gapless_core::{Coverage, EventKind, Interval, IntervalSet};

use crate::codec::run_set;
use crate::error::corrupt;
use crate::Result;

/// The rows of an asset's coverage runs that an append changes, each run
/// keyed by its start: delete these, change the end of these, insert these
/// (distinct keys, so they may be applied in any order).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct RunChanges {
    /// Starts of the runs that are gone.
    pub(crate) deleted: Vec<i64>,
    /// `(start, new end)` of the runs whose end moved.
    pub(crate) updated: Vec<(i64, i64)>,
    /// `(start, end)` of the new runs.
    pub(crate) inserted: Vec<(i64, i64)>,
}

/// Apply `events` (in sequence order) to the stored `runs` (`(start, end)`
/// in start order) that touch their hull, with the core's latest-wins
/// rules: the rebuilt runs.
///
/// # Errors
///
/// A fault when the stored runs are not sorted, disjoint and non-adjacent
/// (a damaged ledger).
pub(crate) fn rebuild(
    runs: &[(i64, i64)],
    events: &[(EventKind, Interval)],
) -> Result<IntervalSet> {
    let runs = runs
        .iter()
        .map(|&(s, e)| {
            Interval::from_micros(s, e).map_err(|e| corrupt(format_args!("coverage run ({e})")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut coverage = Coverage::from_set(run_set(runs)?);
    for &(kind, iv) in events {
        coverage.apply(kind, iv);
    }
    Ok(coverage.into_set())
}

/// The rows to change so that the stored `runs` (as for [`rebuild`]) become
/// their replay with `events`.
///
/// # Errors
///
/// As [`rebuild`].
pub(crate) fn changes(runs: &[(i64, i64)], events: &[(EventKind, Interval)]) -> Result<RunChanges> {
    Ok(diff(runs, &rebuild(runs, events)?))
}

/// The rows to change so that the stored `runs` (`(start, end)` in start
/// order) become `set`, their [`rebuild`].
pub(crate) fn diff(runs: &[(i64, i64)], set: &IntervalSet) -> RunChanges {
    let mut out = RunChanges::default();
    // Both in start order: one merge.
    let mut old = runs.iter().copied().peekable();
    for run in set.runs() {
        let (s, e) = (run.start().as_micros(), run.end().as_micros());
        while let Some(&(os, _)) = old.peek().filter(|&&(os, _)| os < s) {
            out.deleted.push(os);
            old.next();
        }
        match old.peek() {
            Some(&(os, oe)) if os == s => {
                if oe != e {
                    out.updated.push((s, e));
                }
                old.next();
            }
            _ => out.inserted.push((s, e)),
        }
    }
    out.deleted.extend(old.map(|(s, _)| s));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(a: i64, b: i64) -> Interval {
        Interval::from_micros(a, b).unwrap()
    }

    #[test]
    fn an_append_at_the_end_moves_one_end() {
        let got = changes(&[(0, 10)], &[(EventKind::Landed, iv(10, 20))]).unwrap();
        assert_eq!(
            got,
            RunChanges {
                updated: vec![(0, 20)],
                ..RunChanges::default()
            }
        );
    }

    #[test]
    fn merges_splits_and_new_runs() {
        // A landing that bridges two runs: the second is gone.
        let got = changes(&[(0, 10), (20, 30)], &[(EventKind::Landed, iv(10, 20))]).unwrap();
        assert_eq!(got.deleted, vec![20]);
        assert_eq!(got.updated, vec![(0, 30)]);
        assert!(got.inserted.is_empty());
        // A retraction that splits one.
        let got = changes(&[(0, 30)], &[(EventKind::Retracted, iv(10, 20))]).unwrap();
        assert_eq!(got.updated, vec![(0, 10)]);
        assert_eq!(got.inserted, vec![(20, 30)]);
        assert!(got.deleted.is_empty());
        // A retraction of a run's start: a new key.
        let got = changes(&[(0, 30)], &[(EventKind::Retracted, iv(0, 10))]).unwrap();
        assert_eq!(got.deleted, vec![0]);
        assert_eq!(got.inserted, vec![(10, 30)]);
        // Nothing stored yet.
        let got = changes(&[], &[(EventKind::Landed, iv(5, 6))]).unwrap();
        assert_eq!(got.inserted, vec![(5, 6)]);
        // Everything retracted.
        let got = changes(&[(0, 5), (7, 9)], &[(EventKind::Retracted, iv(0, 9))]).unwrap();
        assert_eq!(got.deleted, vec![0, 7]);
        assert!(got.updated.is_empty() && got.inserted.is_empty());
    }

    #[test]
    fn damaged_runs_are_a_fault() {
        assert!(changes(&[(0, 10), (5, 20)], &[]).is_err());
        assert!(changes(&[(10, 0)], &[]).is_err());
    }
}
