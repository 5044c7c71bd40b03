//! An asset's overview as a page of assets reads it, the same in both
//! backends: the inputs kept with each asset by every append that changes
//! its coverage (its first run, the end of its last run, its recent runs),
//! and the overview made from them and a page row.
//!
//! The covered shares of the last day and week depend on `now`, so they
//! are not stored; what is stored is the asset's *recent runs*: its runs
//! that end within a week before the end of its last run, as a JSON array
//! of `[start, end]` microsecond pairs (NULL when there are more than
//! [`RECENT_RUNS`]). For any `now` at or after the end of the last run
//! (the usual case: coverage ends in the past) every run that reaches into
//! `[now - 7d, now)` is among them, so the day's and week's covered
//! microseconds are a sum over them. When `now` is before the end of the
//! last run, or the recent runs were too many to keep, the page statement
//! sums the coverage runs instead, as it did before the inputs were kept;
//! either way the answer is exact.

use crate::codec::{self, instant};
use crate::error::corrupt;
use crate::listing::AssetOverview;
use crate::{AssetSummary, Result};

/// The most recent runs kept with an asset: one an hour for a week (an
/// hourly asset whose every hour is a run of its own), which keeps a page
/// of 100 assets' rows well under a megabyte; the page statement sums an
/// asset with more from its coverage runs.
pub(crate) const RECENT_RUNS: i64 = 7 * 24;

/// One row of a page of assets: its summary's columns, its overview's
/// inputs, and the page statement's own sums of the day and week (only
/// when the kept runs cannot answer).
pub(crate) struct OverviewRow {
    pub(crate) summary: AssetSummary,
    /// The end of the first run (the frontier from the first covered
    /// instant).
    pub(crate) first_end: Option<i64>,
    /// The end of the last run.
    pub(crate) last_end: Option<i64>,
    /// The recent runs as kept (JSON), NULL when too many.
    pub(crate) recent_runs: Option<String>,
    /// Covered microseconds of the week and the day as the statement summed
    /// them from the coverage runs, when it did.
    pub(crate) summed: (Option<i64>, Option<i64>),
}

/// The overview of `row` for the week and day before `now`
/// ([`crate::listing::recent`]'s microseconds).
pub(crate) fn overview(
    row: OverviewRow,
    (week, day, now): (i64, i64, i64),
) -> Result<AssetOverview> {
    let kept = row
        .recent_runs
        .as_deref()
        .filter(|_| row.last_end.is_none_or(|end| end <= now));
    let (covered_week_us, covered_day_us) = match (kept, row.summed) {
        (Some(json), _) => {
            let runs = recent_runs(json)?;
            (covered(&runs, week, now), covered(&runs, day, now))
        }
        (None, (Some(w), Some(d))) => (w, d),
        (None, _) => {
            return Err(corrupt(format_args!(
                "overview of asset {:?} (neither recent runs nor sums)",
                row.summary.asset
            )))
        }
    };
    Ok(AssetOverview {
        summary: row.summary,
        frontier: row
            .first_end
            .map(|t| instant(t, "coverage run"))
            .transpose()?,
        covered_week_us,
        covered_day_us,
    })
}

/// The page row's summary (as [`codec::summary`]) with the overview's
/// columns: the summary's first and last covered instants are the kept
/// first run's start and last run's end.
#[allow(clippy::too_many_arguments)]
pub(crate) fn row(
    asset: String,
    events: i64,
    first_run: (Option<i64>, Option<i64>),
    last_end: Option<i64>,
    last_received: Option<i64>,
    declared: (Option<String>, Option<String>),
    pruned_before: Option<i64>,
    recent_runs: Option<String>,
    summed: (Option<i64>, Option<i64>),
) -> Result<OverviewRow> {
    Ok(OverviewRow {
        summary: codec::summary(
            asset,
            events,
            first_run.0,
            last_end,
            last_received,
            declared,
            pruned_before,
        )?,
        first_end: first_run.1,
        last_end,
        recent_runs,
        summed,
    })
}

/// Whether an asset's kept overview inputs (its first run, the end of its
/// last, its recent runs as kept) are what its coverage `runs` (in start
/// order) say.
pub(crate) fn kept_matches(
    runs: &[(i64, i64)],
    first_run: (Option<i64>, Option<i64>),
    last_end: Option<i64>,
    kept: Option<&str>,
) -> bool {
    let since = runs.last().map(|&(_, e)| e - crate::WEEK_US);
    let recent: Vec<(i64, i64)> = runs
        .iter()
        .copied()
        .filter(|&(_, e)| since.is_some_and(|s| e > s))
        .collect();
    let want = (recent.len() as i64 <= RECENT_RUNS).then_some(recent);
    let got = kept.map(|json| {
        recent_runs(json).map(|mut r| {
            r.sort_unstable();
            r
        })
    });
    let got = match got.transpose() {
        Ok(got) => got,
        Err(_) => return false,
    };
    first_run == (runs.first().map(|r| r.0), runs.first().map(|r| r.1))
        && last_end == runs.last().map(|r| r.1)
        && got == want
}

/// The kept recent runs, `[start, end]` pairs.
fn recent_runs(json: &str) -> Result<Vec<(i64, i64)>> {
    serde_json::from_str(json).map_err(|e| corrupt(format_args!("recent runs ({e})")))
}

/// Covered microseconds of `[since, now)` by disjoint `runs`.
fn covered(runs: &[(i64, i64)], since: i64, now: i64) -> i64 {
    runs.iter()
        .map(|&(s, e)| (e.min(now) - s.max(since)).max(0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_clipped_to_the_range() {
        let runs = [(0, 10), (20, 30), (40, 50)];
        assert_eq!(covered(&runs, 0, 100), 30);
        assert_eq!(covered(&runs, 25, 45), 10);
        assert_eq!(covered(&runs, 30, 40), 0);
        assert_eq!(covered(&[], 0, 100), 0);
        assert_eq!(
            recent_runs("[[1, 2], [3,4]]").unwrap(),
            vec![(1, 2), (3, 4)]
        );
        assert!(recent_runs("[1,2]").is_err());
    }

    #[test]
    fn kept_inputs_are_checked_against_the_runs() {
        let week = crate::WEEK_US;
        let runs = [(0, 10), (45, 60), (week + 25, week + 40)];
        let first = (Some(0), Some(10));
        let end = Some(week + 40);
        let kept = format!("[[{}, {}], [45, 60]]", week + 25, week + 40);
        assert!(kept_matches(&runs, first, end, Some(&kept)));
        // The run ending a whole week before the last end is not recent.
        let with_old = format!("[[0, 10], [45, 60], [{}, {}]]", week + 25, week + 40);
        assert!(!kept_matches(&runs, first, end, Some(&with_old)));
        assert!(!kept_matches(&runs, first, end, None));
        assert!(!kept_matches(&runs, (Some(0), Some(11)), end, Some(&kept)));
        assert!(!kept_matches(&runs, first, Some(week), Some(&kept)));
        assert!(kept_matches(&[], (None, None), None, Some("[]")));
        // More recent runs than are kept: NULL.
        let many: Vec<(i64, i64)> = (0..=RECENT_RUNS).map(|i| (10 * i, 10 * i + 5)).collect();
        assert!(kept_matches(
            &many,
            (Some(0), Some(5)),
            Some(10 * RECENT_RUNS + 5),
            None
        ));
    }
}
