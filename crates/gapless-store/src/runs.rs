//! What both backends share when an append changes an asset's coverage:
//! the stored runs that touch the batch, replayed with the batch's events.

use gapless_core::{Coverage, EventKind, Interval, IntervalSet};

use crate::error::corrupt;
use crate::Result;

/// The runs to write back, and the starts of the first and last stored run
/// they replace (`None`: none was stored there).
#[derive(Debug)]
pub(crate) struct Rebuilt {
    pub(crate) replaced: Option<(i64, i64)>,
    pub(crate) set: IntervalSet,
}

/// Apply `events` (in sequence order) to the stored `runs` that touch their
/// hull, with the core's latest-wins rules.
///
/// # Errors
///
/// A fault when the stored runs are not sorted, disjoint and non-adjacent
/// (a damaged ledger).
pub(crate) fn rebuild(runs: Vec<(i64, i64)>, events: &[(EventKind, Interval)]) -> Result<Rebuilt> {
    let replaced = runs.first().zip(runs.last()).map(|(f, l)| (f.0, l.0));
    let runs = runs
        .into_iter()
        .map(|(s, e)| {
            Interval::from_micros(s, e).map_err(|e| corrupt(format_args!("coverage run ({e})")))
        })
        .collect::<Result<Vec<_>>>()?;
    let set = IntervalSet::from_sorted_runs(runs)
        .map_err(|e| corrupt(format_args!("set of coverage runs ({e})")))?;
    let mut coverage = Coverage::from_set(set);
    for &(kind, iv) in events {
        coverage.apply(kind, iv);
    }
    Ok(Rebuilt {
        replaced,
        set: coverage.into_set(),
    })
}
