//! Retention (SPEC §3, `prune`): removing the detail of old events and
//! firings in bounded steps, and answering `segments` over a range whose
//! event detail was pruned.

use gapless_api::{PruneAnswer, Result, SegmentAnswer};
use gapless_core::{EventKind, Instant, Interval, IntervalSet};

use crate::error::from_store;
use crate::Ledger;

/// Rows one prune step removes at most, in its own transaction: an
/// asset's writers wait for one such delete at most, never for a whole
/// prune.
pub const PRUNE_STEP: usize = 5_000;

/// The least pause between two steps. A SQLite writer of another process
/// that finds the lock taken polls it again at most every 100 ms (SQLite's
/// busy handler): without a pause at least as long, the next step would
/// take the lock again before it looks, step after step.
const PRUNE_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// After a step that took `took`: a pause as long, and at least
/// [`PRUNE_PAUSE`], so that a prune takes at most half of the ledger's
/// write time and waiting writers get their turn.
fn pause_after(took: std::time::Duration) {
    std::thread::sleep(took.max(PRUNE_PAUSE));
}

impl Ledger {
    /// `prune`: remove the landed events that end at or before `before`
    /// (of `asset`, or of every asset) and, for every asset, the firings
    /// recorded before it whose delivery is not pending, in steps of at
    /// most [`PRUNE_STEP`] rows with a pause after each (`pause_after`).
    /// Idempotent: a prune cut short (a crash, a
    /// kill) is finished by running it again, and several processes may
    /// prune one ledger at once.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen; storage faults
    /// (what earlier steps removed stays removed).
    pub fn prune_before(&self, before: Instant, asset: Option<&str>) -> Result<PruneAnswer> {
        let names = match asset {
            Some(a) => {
                self.known(a)?;
                vec![a.to_string()]
            }
            None => self
                .store
                .assets()
                .map_err(from_store)?
                .into_iter()
                .map(|a| a.asset)
                .collect(),
        };
        let (mut events, mut touched) = (0, 0);
        for name in &names {
            let mut removed = 0;
            loop {
                let took = std::time::Instant::now();
                let n = self
                    .store
                    .prune_events(name, before, PRUNE_STEP)
                    .map_err(from_store)?;
                removed += n;
                if n < PRUNE_STEP as u64 {
                    break;
                }
                pause_after(took.elapsed());
            }
            if removed > 0 {
                touched += 1;
            }
            events += removed;
        }
        let mut firings = 0;
        if asset.is_none() {
            loop {
                let took = std::time::Instant::now();
                let n = self
                    .store
                    .prune_firings(before, PRUNE_STEP)
                    .map_err(from_store)?;
                firings += n;
                if n < PRUNE_STEP as u64 {
                    break;
                }
                pause_after(took.elapsed());
            }
        }
        Ok(PruneAnswer {
            before,
            asset: asset.map(str::to_string),
            events_removed: events,
            firings_removed: firings,
            assets_touched: touched,
        })
    }

    /// The asset's pruning watermark, if a prune ever removed some of its
    /// events.
    pub(crate) fn pruned_before(&self, asset: &str) -> Result<Option<Instant>> {
        Ok(self
            .store
            .asset(asset)
            .map_err(from_store)?
            .and_then(|a| a.pruned_before))
    }

    /// The segments of `part`, a range before the asset's watermark, read
    /// from what prunes keep: its covered runs (`landed`) and, where it is
    /// not covered, its retractions (`retracted`: the latest event there is
    /// a retraction), in time order, none naming an event. At most `limit`.
    pub(crate) fn pruned_segments(
        &self,
        asset: &str,
        part: Interval,
        limit: usize,
    ) -> Result<Vec<SegmentAnswer>> {
        let covered = self.store.coverage(asset, part).map_err(from_store)?;
        let retracted = self.store.retractions(asset, part).map_err(from_store)?;
        let within = IntervalSet::from_intervals([part]);
        let covered = IntervalSet::intersection([&covered, &within]);
        let withdrawn = IntervalSet::intersection([&retracted, &covered.complement(part)]);
        let mut pieces: Vec<(Interval, EventKind)> = covered
            .runs()
            .map(|r| (r, EventKind::Landed))
            .chain(withdrawn.runs().map(|r| (r, EventKind::Retracted)))
            .collect();
        pieces.sort_by_key(|(r, _)| r.start());
        pieces.truncate(limit);
        Ok(pieces
            .into_iter()
            .map(|(r, kind)| SegmentAnswer {
                start: r.start(),
                end: r.end(),
                kind,
                event: None,
            })
            .collect())
    }
}
