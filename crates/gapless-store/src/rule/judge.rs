//! Judging rules' windows, the same in both backends and free of I/O.
//!
//! An append judges after each of its batches (a group commit holds
//! several): a backend reads what [`Plan`] asks for (the rules' assets'
//! coverage before the group over the windows the group touches, and those
//! windows' recorded states), then [`Judge`] replays the batches in order,
//! judging after each the windows that batch touched. Rule creation and
//! deadlines judge from what is stored ([`initial`], [`late`]).

use std::borrow::Cow;

use gapless_core::{
    Coverage, EventKind, FiringKind, Instant, Interval, IntervalSet, Judgement, Policy, Rule,
    WindowState,
};

use crate::Result;
use crate::{IdMap, IdSet};

/// A rule as judging needs it: its row id, the rule, its assets' ids (in
/// the rule's asset order).
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    pub(crate) id: i64,
    pub(crate) rule: Rule,
    pub(crate) assets: Vec<i64>,
}

impl Watch {
    /// Its asset, when it watches one only (named once or more).
    pub(crate) fn single_asset(&self) -> Option<i64> {
        let first = *self.assets.first()?;
        self.assets.iter().all(|a| *a == first).then_some(first)
    }
}

/// A window's recorded state: complete or not (with its generation), and
/// whether it fired `late`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WindowRecord {
    pub(crate) state: WindowState,
    pub(crate) late: bool,
}

pub(crate) use super::records::{StateRead, States};

/// A firing to record; the backend numbers it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NewFiring {
    pub(crate) rule_id: i64,
    pub(crate) kind: FiringKind,
    pub(crate) window: Interval,
    pub(crate) key: String,
    pub(crate) generation: u32,
    pub(crate) covered_ratio: f64,
    pub(crate) target: Option<String>,
}

/// What judging changed: firings in the order they happened, and the final
/// record of every window whose record changed (each rule's together, in
/// start order), with the records read of those windows' rules (to write them as runs:
/// [`super::records::RunChanges`]).
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) firings: Vec<NewFiring>,
    pub(crate) records: Vec<(i64, Interval, WindowRecord)>,
    pub(crate) stored: States,
}

impl Outcome {
    /// Add `other`'s firings after this one's, and its records (of other
    /// rules than this one's).
    pub(crate) fn extend(&mut self, other: Outcome) {
        self.firings.extend(other.firings);
        self.records.extend(other.records);
        self.stored.extend(other.stored);
    }

    /// The changes that write [`Outcome::records`] as runs.
    pub(crate) fn run_changes(&self) -> super::records::RunChanges {
        super::records::RunChanges::of(&self.stored, &self.records)
    }

    /// Whether there is nothing to write.
    pub(crate) fn is_empty(&self) -> bool {
        self.firings.is_empty() && self.records.is_empty()
    }
}

/// The new events of one batch, per asset: `(asset id, its new events in
/// batch order)`. Borrowed: a batch of millions is not copied to be judged.
pub(crate) type BatchEvents<'e> = [AssetEvents<'e>];

/// One asset's new events of a batch, in batch order.
pub(crate) type AssetEvents<'e> = (i64, &'e [(EventKind, Interval)]);

/// What a backend must read before judging a group of batches.
#[derive(Debug)]
pub(crate) struct Plan {
    /// Per watch (same order): every window some batch touches.
    windows: Vec<Vec<Interval>>,
    /// The recorded states to read, for every watch that touches a window.
    state_reads: Vec<StateRead>,
    /// Per asset: the hull of the windows of every watch on it; read the
    /// coverage runs that overlap it.
    pub(crate) reads: Vec<(i64, Interval)>,
}

impl Plan {
    /// Plan the judging of `batches` for `watches`.
    pub(crate) fn new<'e>(
        watches: &[&Watch],
        batches: impl IntoIterator<Item = &'e BatchEvents<'e>>,
    ) -> Plan {
        let mut touched: IdMap<i64, IntervalSet> = IdMap::default();
        for batch in batches {
            for &(asset, events) in batch {
                touched
                    .entry(asset)
                    .or_default()
                    .extend(events.iter().map(|e| e.1));
            }
        }
        let mut hull: IdMap<i64, (Instant, Instant)> = IdMap::default();
        let windows: Vec<Vec<Interval>> = watches
            .iter()
            .map(|w| {
                let windows = w.rule.def.windows_touched(&touched_by(w, &touched));
                if let (Some(first), Some(last)) = (windows.first(), windows.last()) {
                    for a in &w.assets {
                        let h = hull.entry(*a).or_insert((first.start(), last.end()));
                        h.0 = h.0.min(first.start());
                        h.1 = h.1.max(last.end());
                    }
                }
                windows
            })
            .collect();
        let mut reads: Vec<(i64, Interval)> = hull
            .into_iter()
            .map(|(a, (s, e))| (a, Interval::new(s, e).expect("windows are not empty")))
            .collect();
        reads.sort_unstable_by_key(|r| r.0);
        let state_reads = watches
            .iter()
            .zip(&windows)
            .flat_map(|(w, ws)| StateRead::of(w.id, ws))
            .collect();
        Plan {
            windows,
            state_reads,
            reads,
        }
    }

    /// The windows watch `i` touches, in order.
    pub(crate) fn windows(&self, i: usize) -> &[Interval] {
        &self.windows[i]
    }

    /// Whether no window is touched: nothing to read or judge.
    pub(crate) fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }

    /// The recorded window states to read, for every watch that touches
    /// a window.
    pub(crate) fn state_reads(&self) -> &[StateRead] {
        &self.state_reads
    }
}

/// Where judging reads an asset's coverage from: memory (a group's replay,
/// a new rule, deadlines) or the store itself (SQLite, after each batch).
pub(crate) trait Covered {
    /// Whether `asset` covers every instant of `w`.
    fn covers(&mut self, asset: i64, w: Interval) -> Result<bool>;
    /// The covered runs of `asset` that overlap `w`.
    fn runs(&mut self, asset: i64, w: Interval) -> Result<IntervalSet>;
    /// The judgement of `w` for a rule on `asset` alone.
    fn judge_one(&mut self, watch: &Watch, asset: i64, w: Interval) -> Result<Judgement> {
        Ok(watch.rule.def.judge(w, &self.runs(asset, w)?))
    }
    /// The windows about to be judged on `asset` by their runs (not by
    /// [`Covered::covers`]) lie within `span`: a source that reads them
    /// from the store may read that span once instead of each window.
    fn ahead(&mut self, _asset: i64, _span: Interval) -> Result<()> {
        Ok(())
    }
}

/// Coverage in memory, by asset (an asset absent covers nothing).
pub(crate) struct InMemory<'a, C>(pub(crate) &'a IdMap<i64, C>);

impl<C: std::borrow::Borrow<IntervalSet>> Covered for InMemory<'_, C> {
    fn covers(&mut self, asset: i64, w: Interval) -> Result<bool> {
        Ok(self.0.get(&asset).is_some_and(|c| c.borrow().covers(w)))
    }
    fn runs(&mut self, asset: i64, w: Interval) -> Result<IntervalSet> {
        Ok(self
            .0
            .get(&asset)
            .map(|c| c.borrow().runs_overlapping(w).collect())
            .unwrap_or_default())
    }
    fn judge_one(&mut self, watch: &Watch, asset: i64, w: Interval) -> Result<Judgement> {
        // The asset's own set: nothing is copied.
        let empty = IntervalSet::new();
        let set = self.0.get(&asset).map_or(&empty, |c| c.borrow());
        Ok(watch.rule.def.judge(w, set))
    }
}

/// Whether `policy` is "no gap" (`full`, or a ratio of 1).
fn is_full(policy: Policy) -> bool {
    match policy {
        Policy::Full => true,
        Policy::RatioAtLeast(r) => r >= 1.0,
        Policy::GapBelow(_) => false,
    }
}

/// The exact judgement of `w` from the joint coverage of `watch`'s assets.
fn exact(watch: &Watch, w: Interval, src: &mut dyn Covered) -> Result<Judgement> {
    if let [asset] = watch.assets[..] {
        return src.judge_one(watch, asset, w);
    }
    let sets = watch
        .assets
        .iter()
        .map(|&a| src.runs(a, w))
        .collect::<Result<Vec<_>>>()?;
    Ok(watch
        .rule
        .def
        .judge(w, &IntervalSet::intersection(sets.iter())))
}

/// Whether `w` is complete for `watch`: under a "no gap" policy one probe
/// per asset (a full window is never empty), else the exact judgement.
fn complete(watch: &Watch, w: Interval, src: &mut dyn Covered) -> Result<bool> {
    if is_full(watch.rule.def.policy()) {
        for &a in &watch.assets {
            if !src.covers(a, w)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    Ok(exact(watch, w, src)?.complete)
}

/// What judging accumulates: the window records read, those changed (with
/// their windows), and the firings in order.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    records: States,
    changed: IdMap<(i64, i64), (Interval, WindowRecord)>,
    firings: Vec<NewFiring>,
}

impl Judged {
    /// Start from the recorded states read for the windows to judge.
    pub(crate) fn new(records: States) -> Judged {
        Judged {
            records,
            ..Judged::default()
        }
    }

    /// Judge `w` of `watch`; on a change of state, record it and its
    /// firing (the covered share is worked out only then).
    pub(crate) fn window(
        &mut self,
        watch: &Watch,
        w: Interval,
        src: &mut dyn Covered,
    ) -> Result<()> {
        let now = complete(watch, w, src)?;
        let key = (watch.id, w.start().as_micros());
        let record = match self.changed.get(&key) {
            Some(c) => c.1,
            None => self.records.get(key.0, key.1),
        };
        let (state, fired) = record.state.judged(now);
        if let Some((kind, generation)) = fired {
            let ratio = if now && is_full(watch.rule.def.policy()) {
                1.0
            } else {
                exact(watch, w, src)?.covered_ratio
            };
            self.changed
                .insert(key, (w, WindowRecord { state, ..record }));
            self.firings
                .push(new_firing(watch, kind, w, generation, ratio));
        }
        Ok(())
    }

    /// What to write: the firings, and the final record of every window
    /// whose record changed.
    pub(crate) fn finish(self) -> Outcome {
        outcome(self.firings, self.records, self.changed)
    }
}

fn new_firing(
    watch: &Watch,
    kind: FiringKind,
    w: Interval,
    generation: u32,
    covered_ratio: f64,
) -> NewFiring {
    let r = &watch.rule;
    NewFiring {
        rule_id: watch.id,
        kind,
        window: w,
        key: r.def.key(w.start(), &r.settings.key_format),
        generation,
        covered_ratio,
        target: r.settings.target.clone(),
    }
}

/// The outcome of `firings` and the `changed` records, over `stored`, the
/// records read (kept for the rules with a change).
fn outcome(
    firings: Vec<NewFiring>,
    mut stored: States,
    changed: IdMap<(i64, i64), (Interval, WindowRecord)>,
) -> Outcome {
    let mut records: Vec<(i64, Interval, WindowRecord)> =
        changed.into_iter().map(|(k, (w, r))| (k.0, w, r)).collect();
    records.sort_unstable_by_key(|r| (r.0, r.1.start()));
    let rules: IdSet<i64> = records.iter().map(|r| r.0).collect();
    stored.retain(|rule| rules.contains(&rule));
    Outcome {
        firings,
        records,
        stored,
    }
}

/// Judging a group of batches, one after the other, on the coverage
/// before the group replayed in memory ([`Judge::batch`]), or on the
/// coverage each batch left, kept by the caller ([`Judge::batch_on`]).
#[derive(Debug)]
pub(crate) struct Judge<'a> {
    watches: Vec<&'a Watch>,
    /// Per watch (same order): the windows the group touches, in order
    /// (from the [`Plan`]), so that a batch's windows are found by search
    /// instead of being worked out on the grid again.
    windows: Vec<Vec<Interval>>,
    /// Per asset, the indexes of the watches on it, ascending: a batch
    /// (of a group of thousands) looks up its own assets' watches, not
    /// every watch of the group.
    by_asset: IdMap<i64, Vec<usize>>,
    coverage: IdMap<i64, IntervalSet>,
    judged: Judged,
}

impl<'a> Judge<'a> {
    /// Start from `plan` (made for `watches` and a superset of the group's
    /// events), `before`, each planned asset's coverage before the group (at
    /// least over its planned read), and the recorded states of the planned
    /// windows.
    pub(crate) fn new(
        watches: Vec<&'a Watch>,
        plan: Plan,
        before: IdMap<i64, IntervalSet>,
        records: States,
    ) -> Judge<'a> {
        let mut coverage = before;
        // An asset with nothing covered yet has no runs to read.
        for w in &watches {
            for a in &w.assets {
                coverage.entry(*a).or_default();
            }
        }
        let mut by_asset: IdMap<i64, Vec<usize>> = IdMap::default();
        for (i, w) in watches.iter().enumerate() {
            for a in &w.assets {
                let on = by_asset.entry(*a).or_default();
                // An asset named twice by one rule counts once.
                if on.last() != Some(&i) {
                    on.push(i);
                }
            }
        }
        Judge {
            watches,
            windows: plan.windows,
            by_asset,
            coverage,
            judged: Judged::new(records),
        }
    }

    /// Apply one batch's new events, then judge every window of every watch
    /// that the batch touched, rules in the order given, windows in order.
    pub(crate) fn batch(&mut self, batch: &BatchEvents<'_>) -> Result<()> {
        let mut any = false;
        for &(asset, events) in batch {
            if let Some(set) = self.coverage.get_mut(&asset) {
                let mut c = Coverage::from_set(std::mem::take(set));
                for &(kind, iv) in events {
                    c.apply(kind, iv);
                }
                *set = c.into_set();
                any |= !events.is_empty();
            }
        }
        if !any {
            return Ok(());
        }
        let parts = Parts {
            watches: &self.watches,
            windows: &self.windows,
            by_asset: &self.by_asset,
            judged: &mut self.judged,
        };
        touched(parts, batch, &mut InMemory(&self.coverage))
    }

    /// Judge every window of every watch that `batch` touched, as
    /// [`Judge::batch`] does, on `src`, the coverage after it (kept by the
    /// caller: this judge's own replay is left alone).
    pub(crate) fn batch_on(
        &mut self,
        batch: &BatchEvents<'_>,
        src: &mut dyn Covered,
    ) -> Result<()> {
        touched(self.parts(), batch, src)
    }

    /// What [`touched`] works with.
    fn parts(&mut self) -> Parts<'_, 'a> {
        Parts {
            watches: &self.watches,
            windows: &self.windows,
            by_asset: &self.by_asset,
            judged: &mut self.judged,
        }
    }

    /// The firings and changed records of all the batches.
    pub(crate) fn finish(self) -> Outcome {
        self.judged.finish()
    }
}

/// A [`Judge`]'s watches (each with its planned windows and found by
/// asset) and what it judged so far.
struct Parts<'j, 'a> {
    watches: &'j [&'a Watch],
    windows: &'j [Vec<Interval>],
    by_asset: &'j IdMap<i64, Vec<usize>>,
    judged: &'j mut Judged,
}

/// Judge every window of the watches that `batch` touched, rules in the
/// order given, windows in order, on `src`.
fn touched(parts: Parts<'_, '_>, batch: &BatchEvents<'_>, src: &mut dyn Covered) -> Result<()> {
    let Parts {
        watches,
        windows,
        by_asset,
        judged,
    } = parts;
    // Each asset's events, found from a watch's assets by search: a batch
    // may interleave thousands of assets, each watched by its own rules,
    // and most (a single event) hold one. The sort is stable: an asset's
    // events stay in batch order.
    let mut of_asset: Vec<AssetEvents<'_>> = batch.to_vec();
    of_asset.sort_by_key(|e| e.0);
    let mut on: Vec<usize> = Vec::new();
    for &(asset, _) in batch {
        on.extend(by_asset.get(&asset).into_iter().flatten());
    }
    on.sort_unstable();
    on.dedup();
    let events_of = |a: i64| {
        let first = of_asset.partition_point(|e| e.0 < a);
        of_asset[first..].iter().take_while(move |e| e.0 == a)
    };
    // The windows of watch `i` that the batch's events touch.
    let pick = |i: usize, picked: &mut Vec<Interval>| {
        let (watch, planned) = (watches[i], &windows[i]);
        picked.clear();
        for &(_, events) in watch.assets.iter().flat_map(|&a| events_of(a)) {
            for &(_, iv) in events {
                let first = planned.partition_point(|w| w.end() <= iv.start());
                picked.extend(planned[first..].iter().take_while(|w| w.start() < iv.end()));
            }
        }
    };
    let mut picked: Vec<Interval> = Vec::new();
    // Windows judged by their runs (policies other than "no gap"): each
    // asset's span of them, told to the source first. An event's windows
    // of several such rules nest (an hour in its day), and the source can
    // read their runs once.
    let mut ahead: Vec<(i64, Interval)> = Vec::new();
    for &i in &on {
        if is_full(watches[i].rule.def.policy()) {
            continue;
        }
        pick(i, &mut picked);
        let (Some(lo), Some(hi)) = (
            picked.iter().map(|w| w.start()).min(),
            picked.iter().map(|w| w.end()).max(),
        ) else {
            continue;
        };
        let span = Interval::new(lo, hi).expect("windows are not empty");
        for &a in &watches[i].assets {
            match ahead.iter_mut().find(|(b, _)| *b == a) {
                Some((_, s)) => {
                    *s = Interval::new(s.start().min(lo), s.end().max(hi))
                        .expect("a hull of intervals")
                }
                None => ahead.push((a, span)),
            }
        }
    }
    for (asset, span) in ahead {
        src.ahead(asset, span)?;
    }
    for i in on {
        let watch = watches[i];
        pick(i, &mut picked);
        if picked.len() > 1 {
            picked.sort_unstable_by_key(|w| w.start());
            picked.dedup();
        }
        for &w in &picked {
            judged.window(watch, w, src)?;
        }
    }
    Ok(())
}

/// The intervals of `touched` on `watch`'s assets: a single asset's own
/// set, borrowed (most rules watch one asset, and a group touches
/// thousands of them).
pub(crate) fn touched_by<'t>(
    watch: &Watch,
    touched: &'t IdMap<i64, IntervalSet>,
) -> Cow<'t, IntervalSet> {
    if let [asset] = watch.assets[..] {
        if let Some(set) = touched.get(&asset) {
            return Cow::Borrowed(set);
        }
    }
    let mut on = IntervalSet::new();
    for a in &watch.assets {
        if let Some(set) = touched.get(a) {
            on.extend(set.runs());
        }
    }
    Cow::Owned(on)
}

/// A new rule's first judging: a `complete` firing for each of its windows
/// that `coverage` (each asset's whole coverage from the rule's `from`)
/// already completes, in window order.
pub(crate) fn initial(watch: &Watch, coverage: &IdMap<i64, IntervalSet>) -> Result<Outcome> {
    let empty = IntervalSet::new();
    let sets: Vec<&IntervalSet> = watch
        .assets
        .iter()
        .map(|a| coverage.get(a).unwrap_or(&empty))
        .collect();
    let all = IntervalSet::intersection(sets.iter().copied());
    let mut judged = Judged::default();
    for w in watch.rule.def.windows_touched(&all) {
        judged.window(watch, w, &mut InMemory(coverage))?;
    }
    Ok(judged.finish())
}

/// The `late` firings of `windows` (whose deadline has passed) of `watch`:
/// one for each that is not complete and has not fired `late` before (by
/// `records`, which may hold other rules' windows too), with its covered
/// share from `coverage` (each asset's coverage over the windows).
pub(crate) fn late(
    watch: &Watch,
    windows: &[Interval],
    coverage: &IdMap<i64, IntervalSet>,
    records: &States,
) -> Result<Outcome> {
    let mut changed = IdMap::default();
    let mut firings = Vec::new();
    for &w in windows {
        let key = (watch.id, w.start().as_micros());
        let record = records.get(key.0, key.1);
        if record.state.complete || record.late {
            continue;
        }
        let ratio = exact(watch, w, &mut InMemory(coverage))?.covered_ratio;
        changed.insert(
            key,
            (
                w,
                WindowRecord {
                    late: true,
                    ..record
                },
            ),
        );
        firings.push(new_firing(
            watch,
            FiringKind::Late,
            w,
            record.state.generation,
            ratio,
        ));
    }
    Ok(outcome(firings, records.only(watch.id), changed))
}
