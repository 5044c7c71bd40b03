//! An asset's overview as a page of assets reads it, the same in both
//! backends: the inputs kept with each asset by every append that changes
//! its coverage (its first run, the end of its last run, its recent runs),
//! and the overview made from them and a page row.
//!
//! The covered shares of the last day and week depend on `now`, so they
//! are not stored; what is stored is the asset's *recent runs*: its runs
//! that end within a week before the end of its last run, as bytes: each
//! run its start and end microseconds, two big-endian 8-byte signed
//! integers, one run after another in start order (empty for none; NULL
//! when there are more than [`RECENT_RUNS`]). The store alone writes them,
//! in each append's transaction, and a page of assets reads them with no
//! text to check or parse. For any `now` at or after the end of the last
//! run (the usual case: coverage ends in the past) every run that reaches into
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
    /// The recent runs as kept (bytes, see the module docs), NULL when
    /// too many.
    pub(crate) recent_runs: Option<Vec<u8>>,
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
        (Some(bytes), _) => {
            let runs = recent_runs(bytes).map_err(|len| {
                corrupt(format_args!(
                    "recent runs of asset {:?} ({len} bytes, not a whole number of 16-byte runs)",
                    row.summary.asset
                ))
            })?;
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
    recent_runs: Option<Vec<u8>>,
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
    kept: Option<&[u8]>,
) -> bool {
    let since = runs.last().map(|&(_, e)| e - crate::WEEK_US);
    let recent: Vec<(i64, i64)> = runs
        .iter()
        .copied()
        .filter(|&(_, e)| since.is_some_and(|s| e > s))
        .collect();
    let want = (recent.len() as i64 <= RECENT_RUNS).then_some(recent);
    let got = kept.map(|bytes| {
        recent_runs(bytes).map(|mut r| {
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

/// The kept recent runs, `(start, end)` pairs, from their bytes; `Err`
/// with the length when it is not a whole number of pairs.
fn recent_runs(bytes: &[u8]) -> std::result::Result<Vec<(i64, i64)>, usize> {
    let pairs = bytes.chunks_exact(16);
    if !pairs.remainder().is_empty() {
        return Err(bytes.len());
    }
    Ok(pairs
        .map(|p| {
            let (start, end) = p.split_at(8);
            (
                i64::from_be_bytes(start.try_into().expect("8 bytes")),
                i64::from_be_bytes(end.try_into().expect("8 bytes")),
            )
        })
        .collect())
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
    }

    /// The runs as the store keeps them: start and end of each, big-endian.
    fn encode(runs: &[(i64, i64)]) -> Vec<u8> {
        runs.iter()
            .flat_map(|&(s, e)| [s.to_be_bytes(), e.to_be_bytes()])
            .flatten()
            .collect()
    }

    #[test]
    fn kept_runs_are_decoded_from_their_bytes() {
        // Years before 1970 are negative microseconds.
        let runs = [
            (i64::MIN, -62_135_596_800_000_000),
            (-1, 0),
            (1, 2),
            (1_748_736_000_000_000, i64::MAX),
        ];
        assert_eq!(recent_runs(&encode(&runs)), Ok(runs.to_vec()));
        assert_eq!(
            &encode(&[(-1, 5)])[..],
            [[0xff; 8], [0, 0, 0, 0, 0, 0, 0, 5]].concat()
        );
        assert_eq!(recent_runs(&[]), Ok(vec![]));
        assert_eq!(recent_runs(&[0; 15]), Err(15));
        assert_eq!(recent_runs(&[0; 24]), Err(24));
    }

    #[test]
    fn bad_kept_runs_are_corrupt_naming_the_asset() {
        let row = |kept: Vec<u8>| OverviewRow {
            summary: codec::summary("a/b".into(), 1, Some(0), Some(10), None, (None, None), None)
                .unwrap(),
            first_end: Some(10),
            last_end: Some(10),
            recent_runs: Some(kept),
            summed: (None, None),
        };
        let now = (0, 5, 20);
        let got = overview(row(encode(&[(0, 10)])), now).unwrap();
        assert_eq!((got.covered_week_us, got.covered_day_us), (10, 5));
        let err = overview(row(vec![0; 17]), now).unwrap_err().to_string();
        assert!(err.contains("\"a/b\"") && err.contains("17 bytes"), "{err}");
    }

    #[test]
    fn kept_inputs_are_checked_against_the_runs() {
        let week = crate::WEEK_US;
        let runs = [(0, 10), (45, 60), (week + 25, week + 40)];
        let first = (Some(0), Some(10));
        let end = Some(week + 40);
        // Kept in any order.
        let kept = encode(&[(week + 25, week + 40), (45, 60)]);
        assert!(kept_matches(&runs, first, end, Some(&kept)));
        // The run ending a whole week before the last end is not recent.
        let with_old = encode(&[(0, 10), (45, 60), (week + 25, week + 40)]);
        assert!(!kept_matches(&runs, first, end, Some(&with_old)));
        assert!(!kept_matches(&runs, first, end, Some(&kept[1..])));
        assert!(!kept_matches(&runs, first, end, None));
        assert!(!kept_matches(&runs, (Some(0), Some(11)), end, Some(&kept)));
        assert!(!kept_matches(&runs, first, Some(week), Some(&kept)));
        assert!(kept_matches(&[], (None, None), None, Some(&[])));
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
