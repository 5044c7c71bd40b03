//! Judging rules' windows, the same in both backends and free of I/O.
//!
//! An append judges after each of its batches (a group commit holds
//! several): a backend reads what [`Plan`] asks for (the rules' assets'
//! coverage before the group over the windows the group touches, and those
//! windows' recorded states), then [`Judge`] replays the batches in order,
//! judging after each the windows that batch touched. Rule creation and
//! deadlines judge from what is stored ([`initial`], [`late`]).

use std::collections::HashMap;

use gapless_core::{
    Coverage, EventKind, FiringKind, Instant, Interval, IntervalSet, Rule, WindowState,
};

/// A rule as judging needs it: its row id, the rule, its assets' ids (in
/// the rule's asset order).
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    pub(crate) id: i64,
    pub(crate) rule: Rule,
    pub(crate) assets: Vec<i64>,
}

/// A window's recorded state: complete or not (with its generation), and
/// whether it fired `late`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WindowRecord {
    pub(crate) state: WindowState,
    pub(crate) late: bool,
}

/// Recorded window states by `(rule id, window start)`.
pub(crate) type States = HashMap<(i64, i64), WindowRecord>;

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
/// record of every window whose record changed.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) firings: Vec<NewFiring>,
    pub(crate) records: Vec<(i64, Interval, WindowRecord)>,
}

impl Outcome {
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
        let mut touched: HashMap<i64, IntervalSet> = HashMap::new();
        for batch in batches {
            for &(asset, events) in batch {
                touched
                    .entry(asset)
                    .or_default()
                    .extend(events.iter().map(|e| e.1));
            }
        }
        let mut hull: HashMap<i64, (Instant, Instant)> = HashMap::new();
        let windows: Vec<Vec<Interval>> = watches
            .iter()
            .map(|w| {
                let mut on = IntervalSet::new();
                for a in &w.assets {
                    if let Some(set) = touched.get(a) {
                        on.extend(set.runs());
                    }
                }
                let windows = w.rule.def.windows_touched(&on);
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
        Plan { windows, reads }
    }

    /// Whether no window is touched: nothing to read or judge.
    pub(crate) fn is_empty(&self) -> bool {
        self.reads.is_empty()
    }

    /// The windows of watch `i` to read states for, as `(start, end)` hulls
    /// per watch: `(watch index, hull)`.
    pub(crate) fn state_reads(&self) -> impl Iterator<Item = (usize, Interval)> + '_ {
        self.windows.iter().enumerate().filter_map(|(i, ws)| {
            let (first, last) = (ws.first()?, ws.last()?);
            Some((
                i,
                Interval::new(first.start(), last.end()).expect("windows are not empty"),
            ))
        })
    }
}

/// The joint coverage of `sets` over window `w`.
fn joint<'a>(sets: impl Iterator<Item = &'a IntervalSet>, w: Interval) -> IntervalSet {
    let clipped: Vec<IntervalSet> = sets
        .map(|s| s.runs_overlapping(w).collect::<IntervalSet>())
        .collect();
    IntervalSet::intersection(clipped.iter())
}

/// Judge `w` of `watch` against `joint`; on a change of state, record it
/// in `records` and push the firing.
fn judge_window(
    watch: &Watch,
    w: Interval,
    joint: &IntervalSet,
    records: &mut States,
    changed: &mut HashMap<(i64, i64), Interval>,
    firings: &mut Vec<NewFiring>,
) {
    let judgement = watch.rule.def.judge(w, joint);
    let key = (watch.id, w.start().as_micros());
    let record = records.get(&key).copied().unwrap_or_default();
    let (state, fired) = record.state.judged(judgement.complete);
    if let Some((kind, generation)) = fired {
        records.insert(key, WindowRecord { state, ..record });
        changed.insert(key, w);
        firings.push(new_firing(
            watch,
            kind,
            w,
            generation,
            judgement.covered_ratio,
        ));
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

fn outcome(
    firings: Vec<NewFiring>,
    records: &States,
    changed: HashMap<(i64, i64), Interval>,
) -> Outcome {
    let mut records: Vec<(i64, Interval, WindowRecord)> = changed
        .into_iter()
        .map(|(k, w)| (k.0, w, records[&k]))
        .collect();
    records.sort_unstable_by_key(|r| (r.0, r.1.start()));
    Outcome { firings, records }
}

/// Judging a group of batches, one after the other.
#[derive(Debug)]
pub(crate) struct Judge<'a> {
    watches: &'a [&'a Watch],
    coverage: HashMap<i64, Coverage>,
    records: States,
    changed: HashMap<(i64, i64), Interval>,
    firings: Vec<NewFiring>,
}

impl<'a> Judge<'a> {
    /// Start from `before`, each planned asset's coverage before the group
    /// (at least over its planned read), and the recorded states of the
    /// planned windows.
    pub(crate) fn new(
        watches: &'a [&'a Watch],
        before: HashMap<i64, IntervalSet>,
        records: States,
    ) -> Judge<'a> {
        let mut coverage: HashMap<i64, Coverage> = before
            .into_iter()
            .map(|(a, set)| (a, Coverage::from_set(set)))
            .collect();
        // An asset with nothing covered yet has no runs to read.
        for w in watches {
            for a in &w.assets {
                coverage.entry(*a).or_default();
            }
        }
        Judge {
            watches,
            coverage,
            records,
            changed: HashMap::new(),
            firings: Vec::new(),
        }
    }

    /// Apply one batch's new events, then judge every window of every watch
    /// that the batch touched, rules in the order given, windows in order.
    pub(crate) fn batch(&mut self, batch: &BatchEvents<'_>) {
        let mut touched: HashMap<i64, IntervalSet> = HashMap::new();
        for &(asset, events) in batch {
            if let Some(c) = self.coverage.get_mut(&asset) {
                let t = touched.entry(asset).or_default();
                for &(kind, iv) in events {
                    c.apply(kind, iv);
                    t.insert(iv);
                }
            }
        }
        if touched.is_empty() {
            return;
        }
        for &watch in self.watches {
            let mut on = IntervalSet::new();
            for a in &watch.assets {
                if let Some(set) = touched.get(a) {
                    on.extend(set.runs());
                }
            }
            for w in watch.rule.def.windows_touched(&on) {
                let joint = joint(
                    watch
                        .assets
                        .iter()
                        .filter_map(|a| self.coverage.get(a).map(Coverage::set)),
                    w,
                );
                judge_window(
                    watch,
                    w,
                    &joint,
                    &mut self.records,
                    &mut self.changed,
                    &mut self.firings,
                );
            }
        }
    }

    /// The firings and changed records of all the batches.
    pub(crate) fn finish(self) -> Outcome {
        outcome(self.firings, &self.records, self.changed)
    }
}

/// A new rule's first judging: a `complete` firing for each of its windows
/// that `coverage` (each asset's whole coverage from the rule's `from`)
/// already completes, in window order.
pub(crate) fn initial(watch: &Watch, coverage: &HashMap<i64, IntervalSet>) -> Outcome {
    let empty = IntervalSet::new();
    let sets: Vec<&IntervalSet> = watch
        .assets
        .iter()
        .map(|a| coverage.get(a).unwrap_or(&empty))
        .collect();
    let all = IntervalSet::intersection(sets.iter().copied());
    let mut records = States::new();
    let mut changed = HashMap::new();
    let mut firings = Vec::new();
    for w in watch.rule.def.windows_touched(&all) {
        let joint: IntervalSet = all.runs_overlapping(w).collect();
        judge_window(watch, w, &joint, &mut records, &mut changed, &mut firings);
    }
    outcome(firings, &records, changed)
}

/// The `late` firings of `windows` (whose deadline has passed) of `watch`:
/// one for each that is not complete and has not fired `late` before, with
/// its covered share from `coverage` (each asset's coverage over the
/// windows).
pub(crate) fn late(
    watch: &Watch,
    windows: &[Interval],
    coverage: &HashMap<i64, IntervalSet>,
    mut records: States,
) -> Outcome {
    let empty = IntervalSet::new();
    let mut changed = HashMap::new();
    let mut firings = Vec::new();
    for &w in windows {
        let key = (watch.id, w.start().as_micros());
        let record = records.get(&key).copied().unwrap_or_default();
        if record.state.complete || record.late {
            continue;
        }
        let joint = joint(
            watch
                .assets
                .iter()
                .map(|a| coverage.get(a).unwrap_or(&empty)),
            w,
        );
        let ratio = watch.rule.def.judge(w, &joint).covered_ratio;
        records.insert(
            key,
            WindowRecord {
                late: true,
                ..record
            },
        );
        changed.insert(key, w);
        firings.push(new_firing(
            watch,
            FiringKind::Late,
            w,
            record.state.generation,
            ratio,
        ));
    }
    outcome(firings, &records, changed)
}
