//! Rules and firings in SQLite: recording and reading rules, judging an
//! append's windows in the append's transaction, deadlines, the firing
//! listing. The judging itself is shared ([`crate::rule::judge`]).
//!
//! SQLite has one writer at a time, so judging inside the append's
//! transaction sees every other committed append: each change of a
//! window's state fires once.

use std::collections::HashMap;
use std::sync::OnceLock;

use gapless_core::{EventKind, Instant, Interval, IntervalSet, Judgement, NewEvent, Rule};
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::append::Around;
use super::read::{runs_overlapping, RUN_AT_OR_BEFORE_ID};
use crate::listing::{self, RulePage, RuleQuery};
use crate::rule::codec::{
    decode_firing, decode_rule, encode_rule, firing_columns, firing_kind_code, rule_columns,
    FiringRow, RuleColumns, RuleRow,
};
use crate::rule::deadlines::DeadlineCache;
use crate::rule::judge::{
    self, AssetEvents, BatchEvents, Covered, Judge, Judged, Outcome, Plan, StateRead, States,
    Watch, WindowRecord,
};
use crate::rule::{FiringPage, FiringQuery, RulePut, StoredRule, Untaken};
use crate::IdMap;
use crate::{Result, StoreError};

/// The most windows one deadline pass judges per rule; the rest wait for
/// the next pass, so that a pass after a long pause stays short.
const DEADLINE_WINDOWS_PER_PASS: usize = 10_000;
/// The largest page of firings.
const MAX_FIRINGS_PAGE: usize = 10_000;

const SELECT_RULE: &str = concat!(
    "SELECT id, ",
    rule_columns!(),
    " FROM rules WHERE name = ?1"
);
const SELECT_RULES: &str = concat!("SELECT id, ", rule_columns!(), " FROM rules ORDER BY name");
const SELECT_RULE_BY_ID: &str =
    concat!("SELECT id, ", rule_columns!(), " FROM rules WHERE id = ?1");
/// Recorded states of the windows of rules `r`, for each `(r, lo, hi)` of
/// the rows (3 columns a row) of [`multi_row`] between the head and the
/// tail: the runs of windows (`records.rs`) that overlap or touch
/// `[lo, hi]`, those touching it to be joined with the windows judged. A
/// rule's runs never overlap: of those starting before `lo`, only the last
/// can reach it. Each an index seek.
const STATES_OF: (&str, &str) = (
    "WITH v(r, lo, hi) AS (VALUES ",
    ") SELECT w.rule_id, w.start_us, w.end_us, w.complete, w.generation, w.late \
     FROM v CROSS JOIN rule_windows w \
     ON w.rule_id = v.r AND w.start_us >= coalesce((SELECT max(p.start_us) FROM rule_windows p \
       WHERE p.rule_id = v.r AND p.start_us < v.lo), v.lo) AND w.start_us <= v.hi \
     WHERE w.end_us >= v.lo",
);
/// Runs of window records written (inserted, or changed in place when a
/// run keeps its start): what comes before and after the rows (6 columns a
/// row) of [`multi_row`] (`OR IGNORE`: see [`written_all`]).
const UPSERT_STATES: (&str, &str) = (
    "INSERT OR IGNORE INTO rule_windows \
     (rule_id, start_us, end_us, complete, generation, late) VALUES ",
    " ON CONFLICT (rule_id, start_us) DO UPDATE SET end_us = excluded.end_us, \
     complete = excluded.complete, generation = excluded.generation, late = excluded.late",
);
/// A run of window records that judging joined into another or cut.
pub(crate) const DELETE_STATE_RUN: &str =
    "DELETE FROM rule_windows WHERE rule_id = ?1 AND start_us = ?2";
/// Firings inserted, in order (10 columns a row), as [`UPSERT_STATES`]
/// (`OR IGNORE`: see [`written_all`]).
const INSERT_FIRINGS: (&str, &str) = (
    "INSERT OR IGNORE INTO firings \
     (rule_id, kind, start_us, end_us, key, generation, covered_ratio, recorded_us, target, state) \
     VALUES ",
    "",
);
/// The most rows one statement of [`write`] holds: a statement of many rows
/// costs much less per row than a statement per row when a batch fires
/// for thousands of windows, and stays far below SQLite's limit of
/// parameters.
const ROWS_PER_WRITE: usize = 64;
/// The row counts a statement of [`write`] has: [`ROWS_PER_WRITE`] and the
/// powers of two below it, so that writing `n` rows takes at most
/// `n / 64 + 7` statements of seven texts, each prepared once by the
/// connection's statement cache. A text for every count from 1 to 64
/// missed that cache on most group commits (each fires for a different
/// number of windows), and preparing them cost more than executing them.
const WRITE_SIZES: usize = ROWS_PER_WRITE.trailing_zeros() as usize + 1;

/// [`UPSERT_STATES`] and [`INSERT_FIRINGS`] for each of the
/// [`WRITE_SIZES`], written out once.
static UPSERTS: [OnceLock<String>; WRITE_SIZES] = [const { OnceLock::new() }; WRITE_SIZES];
static INSERTS: [OnceLock<String>; WRITE_SIZES] = [const { OnceLock::new() }; WRITE_SIZES];
/// [`STATES_OF`] for each of the [`WRITE_SIZES`].
static STATE_READS: [OnceLock<String>; WRITE_SIZES] = [const { OnceLock::new() }; WRITE_SIZES];

/// `rows` split into the chunks [`write`] writes: whole chunks of
/// [`ROWS_PER_WRITE`], then the rest by falling powers of two.
fn write_chunks<T>(mut rows: &[T]) -> impl Iterator<Item = &[T]> {
    std::iter::from_fn(move || {
        if rows.is_empty() {
            return None;
        }
        let n = ROWS_PER_WRITE.min(1 << rows.len().ilog2());
        let (chunk, rest) = rows.split_at(n);
        rows = rest;
        Some(chunk)
    })
}

/// The statement of `sql` for `rows` rows (one of the [`WRITE_SIZES`]) of
/// `cols` columns, `texts` its texts by size.
fn chunk_sql(
    texts: &'static [OnceLock<String>; WRITE_SIZES],
    sql: (&str, &str),
    cols: usize,
    rows: usize,
) -> &'static str {
    debug_assert!(rows.is_power_of_two() && rows <= ROWS_PER_WRITE);
    texts[rows.trailing_zeros() as usize].get_or_init(|| multi_row(sql, cols, rows))
}

/// The statement of `sql` (head, tail) for `rows` rows of `cols` columns.
fn multi_row(sql: (&str, &str), cols: usize, rows: usize) -> String {
    let mut out = String::with_capacity(sql.0.len() + sql.1.len() + rows * cols * 6);
    out.push_str(sql.0);
    for r in 0..rows {
        if r > 0 {
            out.push_str(", ");
        }
        out.push('(');
        for c in 0..cols {
            if c > 0 {
                out.push_str(", ");
            }
            out.push('?');
            out.push_str(&(r * cols + c + 1).to_string());
        }
        out.push(')');
    }
    out.push_str(sql.1);
    out
}

fn rule_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, RuleRow)> {
    Ok((
        r.get(0)?,
        RuleRow {
            columns: RuleColumns {
                name: r.get(1)?,
                assets: r.get(2)?,
                every: r.get(3)?,
                tz: r.get(4)?,
                policy: r.get(5)?,
                from: r.get(6)?,
                until: r.get(7)?,
                deadline: r.get(8)?,
                target: r.get(9)?,
                key_format: r.get(10)?,
            },
            created: r.get(11)?,
        },
    ))
}

fn firing_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FiringRow> {
    Ok(FiringRow {
        seq: r.get(0)?,
        rule: r.get(1)?,
        kind: r.get(2)?,
        start: r.get(3)?,
        end: r.get(4)?,
        key: r.get(5)?,
        generation: r.get(6)?,
        covered_ratio: r.get(7)?,
        recorded: r.get(8)?,
        target: r.get(9)?,
        state: r.get(10)?,
        attempts: r.get(11)?,
        last_error: r.get(12)?,
    })
}

/// The watch of a rule row: the rule and its assets' ids, found by name
/// (`rule_assets` is keyed by asset first: finding a rule's rows there
/// reads the whole table).
fn watch(conn: &Connection, id: i64, row: RuleRow) -> Result<Watch> {
    let rule = decode_rule(row)?.rule;
    let mut stmt = conn.prepare_cached("SELECT id FROM assets WHERE name = ?1")?;
    let assets = rule
        .def
        .assets()
        .iter()
        .map(|a| {
            stmt.query_row([a], |r| r.get(0))
                .optional()?
                .ok_or_else(|| {
                    crate::error::corrupt(format_args!("asset {a:?} of rule {:?}", rule.name))
                })
        })
        .collect::<Result<Vec<i64>>>()?;
    Ok(Watch { id, rule, assets })
}

/// The rules as the append path needs them, kept by the write connection:
/// read for an asset the first time an append touches it, and forgotten
/// when the ledger's `rules_version` moved (every change of a rule, by any
/// process, moves it in the same transaction). A process that appends to
/// one asset of a ledger of 10,000 rules (`gapless emit`) reads that
/// asset's rules, not all of them.
#[derive(Debug, Default)]
pub(crate) struct WatchCache {
    version: Option<String>,
    /// How many rules the ledger has.
    rules: usize,
    /// The rules read so far, in the order read.
    watches: Vec<Watch>,
    /// Each rule read's index in `watches`, by id.
    by_id: IdMap<i64, usize>,
    /// Per asset whose rules were read, the indexes of the watches on it.
    by_asset: IdMap<i64, Vec<usize>>,
    /// Per asset name looked up, its id if a rule watches it.
    ids: HashMap<String, Option<i64>>,
    /// Whether every rule was read (an append touched many assets): an
    /// asset without an entry in `by_asset` is then watched by none.
    all: bool,
    /// When each rule's next deadline passes, for deadline passes (read
    /// on their own, from the rules with a deadline).
    pub(crate) deadlines: DeadlineCache,
}

impl WatchCache {
    /// Forget what was read if the ledger's rules changed since (in the
    /// caller's transaction, so that what is read next stays so until it
    /// ends).
    pub(crate) fn refresh(&mut self, conn: &Connection) -> Result<()> {
        let version = rules_version(conn)?;
        if self.version.as_ref() == Some(&version) {
            return Ok(());
        }
        let rules: i64 = conn
            .prepare_cached("SELECT count(*) FROM rules")?
            .query_row([], |r| r.get(0))?;
        self.rules = usize::try_from(rules).unwrap_or(0);
        self.watches.clear();
        self.by_id.clear();
        self.by_asset.clear();
        self.ids.clear();
        self.all = false;
        self.version = Some(version);
        Ok(())
    }

    /// The ids of the assets named that a rule watches, each looked up
    /// once per version of the rules.
    fn watched_ids<'n>(
        &mut self,
        conn: &Connection,
        names: impl Iterator<Item = &'n str>,
    ) -> Result<()> {
        if self.rules == 0 {
            return Ok(());
        }
        let mut stmt = conn.prepare_cached(
            "SELECT a.id FROM assets a WHERE a.name = ?1 \
             AND EXISTS (SELECT 1 FROM rule_assets r WHERE r.asset_id = a.id)",
        )?;
        // Events of one asset come together, within a batch and across a
        // group's batches: a name is looked up once a stretch.
        let mut last = None;
        for name in names {
            if last.replace(name) == Some(name) {
                continue;
            }
            if !self.ids.contains_key(name) {
                let id = stmt.query_row([name], |r| r.get(0)).optional()?;
                self.ids.insert(name.to_string(), id);
            }
        }
        Ok(())
    }

    /// Read the rules on `assets` not read yet: each asset's by seeks, or
    /// every rule in one pass when that many assets are new.
    fn load(&mut self, conn: &Connection, assets: &[i64]) -> Result<()> {
        if self.rules == 0 || self.all {
            return Ok(());
        }
        let new = assets
            .iter()
            .filter(|a| !self.by_asset.contains_key(a))
            .count();
        // Seeking one asset's rules costs about half as much again as
        // reading a rule in the pass over all of them.
        if new >= LOAD_ALL_FROM && 3 * new >= 2 * self.rules {
            return self.load_all(conn);
        }
        let mut of_asset =
            conn.prepare_cached("SELECT rule_id FROM rule_assets WHERE asset_id = ?1")?;
        let mut rule = conn.prepare_cached(SELECT_RULE_BY_ID)?;
        for &a in assets {
            if self.by_asset.contains_key(&a) {
                continue;
            }
            let ids = of_asset
                .query_map([a], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<i64>>>()?;
            let mut on = Vec::with_capacity(ids.len());
            for id in ids {
                let i = match self.by_id.get(&id) {
                    Some(&i) => i,
                    None => {
                        let (_, row) = rule.query_row([id], rule_row)?;
                        self.watches.push(watch(conn, id, row)?);
                        self.by_id.insert(id, self.watches.len() - 1);
                        self.watches.len() - 1
                    }
                };
                on.push(i);
            }
            self.by_asset.insert(a, on);
        }
        Ok(())
    }

    /// Read every rule, in three statements.
    fn load_all(&mut self, conn: &Connection) -> Result<()> {
        let mut stmt = conn.prepare_cached(SELECT_RULES)?;
        let rows = stmt
            .query_map([], rule_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        // Every rule's assets in one statement, not one per rule.
        let mut assets: IdMap<i64, Vec<i64>> = IdMap::default();
        let mut stmt = conn.prepare_cached("SELECT rule_id, asset_id FROM rule_assets")?;
        for row in stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))? {
            let (rule, asset): (i64, i64) = row?;
            assets.entry(rule).or_default().push(asset);
        }
        self.watches = rows
            .into_iter()
            .map(|(id, row)| {
                Ok(Watch {
                    id,
                    rule: decode_rule(row)?.rule,
                    assets: assets.remove(&id).unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        self.by_id.clear();
        self.by_asset.clear();
        for (i, w) in self.watches.iter().enumerate() {
            self.by_id.insert(w.id, i);
            for a in &w.assets {
                self.by_asset.entry(*a).or_default().push(i);
            }
        }
        self.all = true;
        Ok(())
    }

    /// The rules watching any of `assets` (all [`WatchCache::load`]ed), in
    /// name order.
    fn of(&self, assets: &[i64]) -> Vec<&Watch> {
        let mut picked: Vec<usize> = assets
            .iter()
            .filter_map(|a| self.by_asset.get(a))
            .flatten()
            .copied()
            .collect();
        // Names are unique: a rule picked twice sorts next to itself.
        picked.sort_unstable_by(|&a, &b| self.watches[a].rule.name.cmp(&self.watches[b].rule.name));
        picked.dedup();
        picked.into_iter().map(|i| &self.watches[i]).collect()
    }
}

/// The fewest new assets of an append for which every rule may be read in
/// one pass rather than each asset's by seeks: below it, either costs
/// little.
const LOAD_ALL_FROM: usize = 100;

/// One batch's events per watched asset, owned.
type OwnedBatch = Vec<(i64, Vec<(EventKind, Interval)>)>;

/// Up to this many assets, a batch's place of an asset in its
/// [`OwnedBatch`] is found by looking through them; past it, by a map.
const FEW_ASSETS: usize = 8;

/// The place of asset `id` in `per`, added at the end when new. `slot`
/// maps assets to places once `per` holds more than [`FEW_ASSETS`]: most
/// batches name one asset (a single event) or a few, and a map for them
/// would cost more than it finds; some interleave thousands.
fn place(per: &mut OwnedBatch, slot: &mut IdMap<i64, usize>, id: i64) -> usize {
    if per.len() <= FEW_ASSETS {
        if let Some(i) = per.iter().position(|(a, _)| *a == id) {
            return i;
        }
    } else {
        if slot.is_empty() {
            slot.extend(per.iter().enumerate().map(|(i, (a, _))| (*a, i)));
        }
        if let Some(&i) = slot.get(&id) {
            return i;
        }
    }
    per.push((id, Vec::new()));
    if !slot.is_empty() {
        slot.insert(id, per.len() - 1);
    }
    per.len() - 1
}

/// Judging the batches of a group commit: the rules on the group's assets
/// and the window states they need are read once, before the first batch;
/// each batch that is stored is then judged on the coverage it left (in
/// the group's transaction, answered from its rebuilt runs where they tell
/// it all, [`Fresh`]), and what changed is written once, before the commit.
/// The default judges nothing (no rule watches the group's assets).
#[derive(Default)]
pub(crate) struct GroupJudge<'c> {
    judge: Option<Judge<'c>>,
    /// The spans read ahead of judging ([`Fresh::ahead`]), kept up to
    /// date through the group's batches.
    spans: Spans,
}

impl<'c> GroupJudge<'c> {
    /// Read what judging `batches` needs (nothing when no rule watches
    /// their assets).
    pub(crate) fn start(
        conn: &Connection,
        cache: &'c mut WatchCache,
        batches: &[&[NewEvent]],
    ) -> Result<GroupJudge<'c>> {
        cache.refresh(conn)?;
        if cache.rules == 0 {
            return Ok(GroupJudge::default());
        }
        cache.watched_ids(
            conn,
            batches
                .iter()
                .flat_map(|b| b.iter().map(|e| e.asset.as_str())),
        )?;
        // Each batch's intervals on watched assets, duplicates included (a
        // superset of what it will store: only the windows to read widen).
        // The id of the previous event's asset is at hand for the next.
        let mut last: Option<(&str, Option<i64>)> = None;
        let planned: Vec<OwnedBatch> = batches
            .iter()
            .map(|b| {
                let mut per: OwnedBatch = Vec::new();
                let mut slot: IdMap<i64, usize> = IdMap::default();
                for ev in b.iter() {
                    let id = match last {
                        Some((name, id)) if name == ev.asset => id,
                        _ => {
                            let id = cache.ids.get(&ev.asset).copied().flatten();
                            last = Some((ev.asset.as_str(), id));
                            id
                        }
                    };
                    if let Some(id) = id {
                        let i = place(&mut per, &mut slot, id);
                        per[i].1.push((ev.kind, ev.interval));
                    }
                }
                per
            })
            .collect();
        // A group of single events names an asset once a batch: its rules
        // are looked up once.
        let mut assets: Vec<i64> = planned.iter().flatten().map(|(a, _)| *a).collect();
        assets.sort_unstable();
        assets.dedup();
        cache.load(conn, &assets)?;
        let cache: &'c WatchCache = cache;
        let watches = cache.of(&assets);
        if watches.is_empty() {
            return Ok(GroupJudge::default());
        }
        let borrowed: Vec<Vec<AssetEvents<'_>>> = planned
            .iter()
            .map(|b| b.iter().map(|(a, e)| (*a, e.as_slice())).collect())
            .collect();
        let plan = Plan::new(&watches, borrowed.iter().map(Vec::as_slice));
        let mut states = States::new();
        read_states(conn, plan.state_reads(), &mut states)?;
        // No coverage is read before the first batch: each batch is judged
        // on what it left (the spans its windows read, once read, kept up
        // to date by the batches after it).
        Ok(GroupJudge {
            judge: Some(Judge::new(watches, plan, IdMap::default(), states)),
            spans: Spans::default(),
        })
    }

    /// Judge one stored batch, by its new events, on the coverage it left
    /// (`conn`, the group's transaction, and `rebuilt`, its runs).
    pub(crate) fn batch(
        &mut self,
        conn: &Connection,
        events: &BatchEvents<'_>,
        rebuilt: &[Rebuilt<'_>],
    ) -> Result<()> {
        match &mut self.judge {
            Some(j) => j.batch_on(events, &mut Fresh::new(conn, rebuilt, &mut self.spans)),
            None => Ok(()),
        }
    }

    /// Write what the group's batches changed; how many firings it
    /// recorded delivered unsent, to be counted once committed.
    pub(crate) fn finish(self, conn: &Connection, now: Instant, untaken: &Untaken) -> Result<u64> {
        match self.judge {
            Some(j) => write(conn, &j.finish(), now, untaken),
            None => Ok(0),
        }
    }
}

/// Count a change of the rules (definitions or settings), so that every
/// writer's [`WatchCache`] reads them again.
fn bump_rules_version(conn: &Connection) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO meta (key, value) VALUES ('rules_version', '1') \
         ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
    )?
    .execute([])?;
    Ok(())
}

/// Each asset's runs overlapping its range, as sets.
fn read_coverage(conn: &Connection, reads: &[(i64, Interval)]) -> Result<IdMap<i64, IntervalSet>> {
    let mut out: IdMap<i64, IntervalSet> = IdMap::default();
    for &(asset, range) in reads {
        out.entry(asset)
            .or_default()
            .extend(runs_overlapping(conn, asset, range)?);
    }
    Ok(out)
}

/// The recorded states of each read of `reads`: the rule's runs that
/// overlap or touch its hull. Many rules a statement ([`STATES_OF`], in
/// the sizes of [`write_chunks`]): a group commit over thousands of assets
/// reads a range for each of their rules.
fn read_states(conn: &Connection, reads: &[StateRead], into: &mut States) -> Result<()> {
    for chunk in write_chunks(reads) {
        let sql = chunk_sql(&STATE_READS, STATES_OF, 3, chunk.len());
        let mut stmt = conn.prepare_cached(sql)?;
        for (i, read) in chunk.iter().enumerate() {
            let p = i * 3;
            stmt.raw_bind_parameter(p + 1, read.rule)?;
            stmt.raw_bind_parameter(p + 2, read.hull.start().as_micros())?;
            stmt.raw_bind_parameter(p + 3, read.hull.end().as_micros())?;
        }
        let mut rows = stmt.raw_query();
        while let Some(r) = rows.next()? {
            let generation: i64 = r.get(4)?;
            into.insert(
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                WindowRecord {
                    state: gapless_core::WindowState {
                        complete: r.get(3)?,
                        generation: u32::try_from(generation)
                            .map_err(|_| crate::error::corrupt("window generation"))?,
                    },
                    late: r.get(5)?,
                },
            );
        }
    }
    Ok(())
}

/// [`STATES_OF`] for `rows` reads, for the test of its plan.
#[cfg(test)]
pub(crate) fn states_of(rows: usize) -> &'static str {
    chunk_sql(&STATE_READS, STATES_OF, 3, rows)
}

/// Write what judging changed: window records, then firings in order,
/// many rows a statement; how many firings it recorded delivered unsent
/// (`untaken`).
fn write(conn: &Connection, out: &Outcome, now: Instant, untaken: &Untaken) -> Result<u64> {
    if out.is_empty() {
        return Ok(0);
    }
    let runs = out.run_changes();
    if !runs.deleted.is_empty() {
        let mut delete = conn.prepare_cached(DELETE_STATE_RUN)?;
        for d in &runs.deleted {
            delete.execute(params![d.0, d.1])?;
        }
    }
    let mut written = runs.updated;
    written.extend(runs.inserted);
    for chunk in write_chunks(&written) {
        let sql = chunk_sql(&UPSERTS, UPSERT_STATES, 6, chunk.len());
        let mut upsert = conn.prepare_cached(sql)?;
        for (i, (rule, (start, end, rec))) in chunk.iter().enumerate() {
            let p = i * 6;
            upsert.raw_bind_parameter(p + 1, rule)?;
            upsert.raw_bind_parameter(p + 2, start)?;
            upsert.raw_bind_parameter(p + 3, end)?;
            upsert.raw_bind_parameter(p + 4, rec.state.complete)?;
            upsert.raw_bind_parameter(p + 5, rec.state.generation)?;
            upsert.raw_bind_parameter(p + 6, rec.late)?;
        }
        written_all(upsert.raw_execute()?, chunk.len(), "window records")?;
    }
    let (states, settled) = untaken.states(&out.firings);
    let mut states = states.into_iter();
    for chunk in write_chunks(&out.firings) {
        let sql = chunk_sql(&INSERTS, INSERT_FIRINGS, 10, chunk.len());
        let mut insert = conn.prepare_cached(sql)?;
        for (i, f) in chunk.iter().enumerate() {
            let state = states.next().expect("a state per firing");
            let p = i * 10;
            insert.raw_bind_parameter(p + 1, f.rule_id)?;
            insert.raw_bind_parameter(p + 2, firing_kind_code(f.kind))?;
            insert.raw_bind_parameter(p + 3, f.window.start().as_micros())?;
            insert.raw_bind_parameter(p + 4, f.window.end().as_micros())?;
            insert.raw_bind_parameter(p + 5, &f.key)?;
            insert.raw_bind_parameter(p + 6, f.generation)?;
            insert.raw_bind_parameter(p + 7, f.covered_ratio)?;
            insert.raw_bind_parameter(p + 8, now.as_micros())?;
            insert.raw_bind_parameter(p + 9, &f.target)?;
            insert.raw_bind_parameter(p + 10, state)?;
        }
        written_all(insert.raw_execute()?, chunk.len(), "firings")?;
    }
    Ok(settled)
}

/// Check that a statement of [`write`] wrote each of its `rows` rows
/// (`changed` as SQLite counts them): it skips a row that breaks a
/// constraint (`OR IGNORE`) rather than aborting, so that SQLite keeps no
/// statement journal for it (a copy of every page it changes, most of a
/// small write's cost); a skipped row is a fault, and fails the
/// transaction as an abort would.
fn written_all(changed: usize, rows: usize, what: &str) -> Result<()> {
    if changed == rows {
        Ok(())
    } else {
        Err(StoreError::fault(format!(
            "the ledger refused {} of {rows} {what} judging wrote",
            rows.abs_diff(changed)
        )))
    }
}

/// The ledger's own coverage, read in the caller's transaction.
struct Stored<'c>(&'c Connection);

impl Covered for Stored<'_> {
    fn covers(&mut self, asset: i64, w: Interval) -> Result<bool> {
        let run: Option<(i64, i64)> = self
            .0
            .prepare_cached(RUN_AT_OR_BEFORE_ID)?
            .query_row(params![asset, w.start().as_micros()], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        Ok(run.is_some_and(|(_, end)| end >= w.end().as_micros()))
    }

    fn runs(&mut self, asset: i64, w: Interval) -> Result<IntervalSet> {
        Ok(runs_overlapping(self.0, asset, w)?.into_iter().collect())
    }
}

/// An asset's coverage as an append just rebuilt it: `(asset, (lo, hi),
/// around)`, `[lo, hi]` the hull of the append's new events on it,
/// `around` every run that touches that hull, as now stored, and where
/// they are all of the asset's coverage.
pub(crate) type Rebuilt<'a> = (i64, (i64, i64), &'a Around);

/// The ledger's coverage in the caller's transaction, answered from the
/// runs an append just rebuilt where they tell it all, else read.
///
/// They tell whether a window that touches the hull is covered: a run
/// covering it would touch the hull, so it is among them. They hold every
/// run overlapping a window inside the hull, for the same reason. Most
/// windows an append judges touch its hull: an append over thousands of
/// assets then probes none.
struct Fresh<'a, 'c, 's> {
    rebuilt: IdMap<i64, ((i64, i64), &'a Around)>,
    stored: Stored<'c>,
    ahead: &'s mut Spans,
}

/// Per asset, a span of its coverage read from the store ahead of the
/// windows in it ([`Covered::ahead`]), and its runs.
type Spans = IdMap<i64, (Interval, IntervalSet)>;

impl<'a, 'c, 's> Fresh<'a, 'c, 's> {
    /// The coverage a batch left: its rebuilt runs, and the spans read
    /// before it (`ahead`), brought up to date with them. A batch changes
    /// its asset's coverage only within the hull of its new events, where
    /// the runs it rebuilt tell it all.
    fn new(conn: &'c Connection, rebuilt: &[Rebuilt<'a>], ahead: &'s mut Spans) -> Self {
        for &(asset, (lo, hi), around) in rebuilt {
            let Some((span, runs)) = ahead.get_mut(&asset) else {
                continue;
            };
            let hull = Interval::from_micros(lo, hi)
                .ok()
                .and_then(|h| h.intersect(*span));
            if let Some(hull) = hull {
                runs.remove(hull);
                for r in around.runs.runs_overlapping(hull) {
                    if let Some(r) = r.intersect(hull) {
                        runs.insert(r);
                    }
                }
            }
        }
        Fresh {
            rebuilt: rebuilt
                .iter()
                .map(|&(a, hull, runs)| (a, (hull, runs)))
                .collect(),
            stored: Stored(conn),
            ahead,
        }
    }
}

/// Whether `w` lies within `[lo, hi]`.
fn within(w: Interval, (lo, hi): (i64, i64)) -> bool {
    w.start().as_micros() >= lo && w.end().as_micros() <= hi
}

/// Whether `w` lies within `span`.
fn inside(w: Interval, span: Interval) -> bool {
    within(w, (span.start().as_micros(), span.end().as_micros()))
}

impl Fresh<'_, '_, '_> {
    /// Runs in hand that are all of `asset`'s coverage over `w`: those the
    /// batch rebuilt, or a span read ahead.
    fn held(&self, asset: i64, w: Interval) -> Option<&IntervalSet> {
        if let Some(&(_, around)) = self.rebuilt.get(&asset) {
            if within(w, around.known) {
                return Some(&around.runs);
            }
        }
        match self.ahead.get(&asset) {
            Some((span, runs)) if inside(w, *span) => Some(runs),
            _ => None,
        }
    }
}

impl Covered for Fresh<'_, '_, '_> {
    fn covers(&mut self, asset: i64, w: Interval) -> Result<bool> {
        match self.rebuilt.get(&asset) {
            // A run that covers a window touching the hull touches it too.
            Some(&((lo, hi), around))
                if (w.start().as_micros() <= hi && w.end().as_micros() >= lo)
                    || within(w, around.known) =>
            {
                Ok(around.runs.covers(w))
            }
            _ => self.stored.covers(asset, w),
        }
    }

    fn runs(&mut self, asset: i64, w: Interval) -> Result<IntervalSet> {
        match self.held(asset, w) {
            Some(runs) => Ok(runs.runs_overlapping(w).collect()),
            None => self.stored.runs(asset, w),
        }
    }

    fn judge_one(&mut self, watch: &Watch, asset: i64, w: Interval) -> Result<Judgement> {
        // The runs in hand judge the window as they are: nothing copied.
        match self.held(asset, w) {
            Some(runs) => Ok(watch.rule.def.judge(w, runs)),
            None => Ok(watch.rule.def.judge(w, &self.stored.runs(asset, w)?)),
        }
    }

    fn ahead(&mut self, asset: i64, span: Interval) -> Result<()> {
        let known = self.rebuilt.get(&asset).map(|&(_, around)| around.known);
        if known.is_some_and(|k| within(span, k)) {
            return Ok(());
        }
        if let Some((read, _)) = self.ahead.get(&asset) {
            if inside(span, *read) {
                return Ok(());
            }
        }
        let runs = self.stored.runs(asset, span)?;
        self.ahead.insert(asset, (span, runs));
        Ok(())
    }
}

/// Judge the rules on an append's assets: called in the append's
/// transaction (or savepoint) after its events are stored and its coverage
/// runs updated, with each asset's new events and the runs they left
/// (`rebuilt`). The windows the batch touches are judged on the coverage
/// now stored ([`Fresh`]): a probe per window and asset under a "no gap"
/// policy, the window's runs otherwise. How many firings it recorded
/// delivered unsent, to be counted once committed.
pub(crate) fn judge_append(
    conn: &Connection,
    cache: &mut WatchCache,
    batch: &BatchEvents<'_>,
    rebuilt: &[Rebuilt<'_>],
    now: Instant,
    untaken: &Untaken,
) -> Result<u64> {
    cache.refresh(conn)?;
    let assets: Vec<i64> = batch.iter().map(|e| e.0).collect();
    cache.load(conn, &assets)?;
    let watches = cache.of(&assets);
    if watches.is_empty() {
        return Ok(0);
    }
    let plan = Plan::new(&watches, [batch]);
    let mut states = States::new();
    read_states(conn, plan.state_reads(), &mut states)?;
    let mut judged = Judged::new(states);
    let mut spans = Spans::default();
    let mut src = Fresh::new(conn, rebuilt, &mut spans);
    for (i, w) in watches.iter().enumerate() {
        for &window in plan.windows(i) {
            judged.window(w, window, &mut src)?;
        }
    }
    write(conn, &judged.finish(), now, untaken)
}

fn stored_rule(conn: &Connection, name: &str) -> Result<Option<(i64, StoredRule)>> {
    let found = conn
        .prepare_cached(SELECT_RULE)?
        .query_row([name], rule_row)
        .optional()?;
    found
        .map(|(id, row)| Ok((id, decode_rule(row)?)))
        .transpose()
}

/// Record `rule`: a new one (judging its windows at once), new settings of
/// an existing one, or nothing when it is already so.
pub(crate) fn put_rule(
    conn: &mut Connection,
    rule: &Rule,
    now: Instant,
    untaken: &Untaken,
) -> Result<RulePut> {
    let c = encode_rule(rule)?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some((id, stored)) = stored_rule(&tx, &rule.name)? {
        if stored.rule.def != rule.def {
            return Err(crate::rule::changed_definition(&stored.rule, rule));
        }
        if stored.rule.settings == rule.settings {
            return Ok(RulePut::Unchanged);
        }
        tx.prepare_cached(
            "UPDATE rules SET deadline = ?2, target = ?3, key_format = ?4 WHERE id = ?1",
        )?
        .execute(params![id, c.deadline, c.target, c.key_format])?;
        bump_rules_version(&tx)?;
        tx.commit()?;
        return Ok(RulePut::Updated);
    }
    let mut asset_ids = Vec::with_capacity(rule.def.assets().len());
    for a in rule.def.assets() {
        let id: Option<i64> = tx
            .prepare_cached("SELECT id FROM assets WHERE name = ?1")?
            .query_row([a], |r| r.get(0))
            .optional()?;
        asset_ids.push(id.ok_or_else(|| crate::rule::unknown_asset(a))?);
    }
    tx.prepare_cached(
        "INSERT INTO rules (name, assets, every, tz, policy, from_us, until_us, deadline, \
         target, key_format, created_us, deadlines_us) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11)",
    )?
    .execute(params![
        c.name,
        c.assets,
        c.every,
        c.tz,
        c.policy,
        c.from,
        c.until,
        c.deadline,
        c.target,
        c.key_format,
        now.as_micros()
    ])?;
    let id = tx.last_insert_rowid();
    bump_rules_version(&tx)?;
    for a in &asset_ids {
        tx.prepare_cached("INSERT INTO rule_assets (asset_id, rule_id) VALUES (?1, ?2)")?
            .execute(params![a, id])?;
    }
    let watch = Watch {
        id,
        rule: rule.clone(),
        assets: asset_ids,
    };
    let span = crate::rule::span(&rule.def);
    let coverage = read_coverage(
        &tx,
        &watch.assets.iter().map(|&a| (a, span)).collect::<Vec<_>>(),
    )?;
    let out = judge::initial(&watch, &coverage)?;
    let settled = write(&tx, &out, now, untaken)?;
    tx.commit()?;
    untaken.committed(settled);
    Ok(RulePut::Created {
        firings: out.firings.len() as u64,
    })
}

pub(crate) fn rule(conn: &mut Connection, name: &str) -> Result<Option<StoredRule>> {
    Ok(stored_rule(conn, name)?.map(|(_, r)| r))
}

pub(crate) fn rules(conn: &mut Connection) -> Result<Vec<StoredRule>> {
    let mut stmt = conn.prepare_cached(SELECT_RULES)?;
    let rows = stmt
        .query_map([], rule_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    rows.into_iter().map(|(_, row)| decode_rule(row)).collect()
}

/// A page of rules (listing.rs): names at or after ?1 (and before ?4 in
/// the bounded form), after ?2, at most ?3, each with the length of its
/// stored asset list, so that the page can end at its byte budget without
/// reading further.
macro_rules! rules_page {
    ($bound:literal) => {
        concat!(
            "SELECT id, ",
            rule_columns!(),
            ", length(CAST(assets AS BLOB)) FROM rules WHERE name >= ?1 ",
            $bound,
            " AND name > ?2 ORDER BY name LIMIT ?3"
        )
    };
}

/// One page of rules in name order; rows are read one at a time and the
/// page ends at its limit or once the asset lists reach the budget.
pub(crate) fn rules_page(conn: &mut Connection, q: &RuleQuery) -> Result<RulePage> {
    let limit = listing::limit(q.limit);
    let range = listing::name_range(q.prefix.as_deref(), q.after.as_deref());
    let n = limit as i64 + 1;
    let mut args: Vec<&dyn rusqlite::ToSql> = vec![&range.lo, &range.after, &n];
    let sql = match &range.hi {
        Some(hi) => {
            args.push(hi);
            rules_page!("AND name < ?4")
        }
        None => rules_page!(""),
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(&args[..])?;
    let budget = listing::rule_bytes(q.bytes);
    let (mut out, mut bytes, mut more) = (Vec::new(), 0usize, false);
    while let Some(r) = rows.next()? {
        if bytes >= budget {
            more = true;
            break;
        }
        let len: i64 = r.get(12)?;
        bytes += usize::try_from(len).unwrap_or(0);
        out.push(decode_rule(rule_row(r)?.1)?);
    }
    let (rules, next) = listing::page_of(out, limit, more, |r| r.rule.name.as_str());
    Ok(RulePage { rules, next })
}

/// Remove rule `name` and its firings; whether it existed.
pub(crate) fn delete_rule(conn: &mut Connection, name: &str) -> Result<bool> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let Some((id, _)) = stored_rule(&tx, name)? else {
        return Ok(false);
    };
    for sql in [
        "DELETE FROM firings WHERE rule_id = ?1",
        "DELETE FROM rule_windows WHERE rule_id = ?1",
        "DELETE FROM rule_assets WHERE rule_id = ?1",
        "DELETE FROM rules WHERE id = ?1",
    ] {
        tx.prepare_cached(sql)?.execute([id])?;
    }
    bump_rules_version(&tx)?;
    tx.commit()?;
    Ok(true)
}

/// A page of firings after ?1, at most ?3: every rule's (?2 is NULL, no
/// rule named), or those of the rule named ?2, sought in the firings'
/// index by rule rather than found among every rule's. One statement per
/// order, the newest page reading downwards.
macro_rules! firings_page {
    (every, $order:literal) => {
        firings_page!(@ "firings f JOIN rules r ON r.id = f.rule_id WHERE ?2 IS NULL", $order)
    };
    (named, $order:literal) => {
        firings_page!(@ "rules r JOIN firings f ON f.rule_id = r.id WHERE r.name = ?2", $order)
    };
    (@ $which:literal, $order:literal) => {
        concat!(
            "SELECT ",
            firing_columns!(),
            " FROM ",
            $which,
            " AND f.seq > ?1 ORDER BY f.seq ",
            $order,
            " LIMIT ?3"
        )
    };
}
pub(crate) const FIRINGS_PAGE: &str = firings_page!(every, "");
pub(crate) const FIRINGS_PAGE_NEWEST: &str = firings_page!(every, "DESC");
pub(crate) const RULE_FIRINGS_PAGE: &str = firings_page!(named, "");
pub(crate) const RULE_FIRINGS_PAGE_NEWEST: &str = firings_page!(named, "DESC");

pub(crate) fn firings(conn: &mut Connection, q: &FiringQuery) -> Result<FiringPage> {
    let limit = if q.limit == 0 || q.limit > MAX_FIRINGS_PAGE {
        MAX_FIRINGS_PAGE
    } else {
        q.limit
    };
    let sql = match (q.rule.is_some(), q.newest) {
        (false, false) => FIRINGS_PAGE,
        (false, true) => FIRINGS_PAGE_NEWEST,
        (true, false) => RULE_FIRINGS_PAGE,
        (true, true) => RULE_FIRINGS_PAGE_NEWEST,
    };
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt
        .query_map(
            params![q.after.unwrap_or(0), q.rule, limit as i64],
            firing_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let firings = rows
        .into_iter()
        .map(decode_firing)
        .collect::<Result<Vec<_>>>()?;
    Ok(FiringPage::of(firings, q, limit))
}

/// The ledger's `rules_version` (a ledger without the row, where no rule
/// was ever recorded, counts as "0").
fn rules_version(conn: &Connection) -> Result<String> {
    Ok(conn
        .prepare_cached("SELECT value FROM meta WHERE key = 'rules_version'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or_else(|| "0".into()))
}

/// A rule row with its `deadlines_us` (column 12).
const DEADLINE_COLUMNS: &str = concat!("SELECT id, ", rule_columns!(), ", deadlines_us FROM rules");

/// Bring `cache` up to date with the ledger's rules (version and rules read
/// in one snapshot).
fn refresh_deadlines(conn: &mut Connection, cache: &mut DeadlineCache) -> Result<()> {
    if cache.is_current(&rules_version(conn)?) {
        return Ok(());
    }
    let tx = conn.transaction()?;
    let version = rules_version(&tx)?;
    let rows = tx
        .prepare_cached(&format!("{DEADLINE_COLUMNS} WHERE deadline IS NOT NULL"))?
        .query_map([], |r| Ok((rule_row(r)?, r.get::<_, i64>(12)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let rules = rows
        .into_iter()
        .map(|((id, row), judged)| Ok((id, decode_rule(row)?.rule, judged)))
        .collect::<Result<Vec<_>>>()?;
    cache.load(version, rules);
    Ok(())
}

/// Judge the deadlines that passed by `now`: a `late` firing for each
/// window of a rule with a deadline that is not complete at its end plus
/// the deadline. Only the rules whose next deadline is due are read and
/// written (`cache`); when none is, nothing is. The number of firings
/// recorded.
pub(crate) fn judge_deadlines(
    conn: &mut Connection,
    cache: &mut DeadlineCache,
    now: Instant,
    untaken: &Untaken,
) -> Result<u64> {
    refresh_deadlines(conn, cache)?;
    let due = cache.due(now);
    if due.is_empty() {
        return Ok(0);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read again in the write transaction: another process may have judged
    // them, changed them or deleted them since.
    let mut rows = Vec::with_capacity(due.len());
    {
        let mut stmt = tx.prepare_cached(&format!(
            "{DEADLINE_COLUMNS} WHERE id = ?1 AND deadline IS NOT NULL"
        ))?;
        for &id in &due {
            if let Some(row) = stmt
                .query_row([id], |r| Ok((rule_row(r)?, r.get::<_, i64>(12)?)))
                .optional()?
            {
                rows.push(row);
            }
        }
    }
    rows.sort_by(|a, b| a.0 .1.columns.name.cmp(&b.0 .1.columns.name));
    let (mut fired, mut settled) = (0, 0);
    let mut judged: Vec<(i64, Rule, i64)> = Vec::with_capacity(rows.len());
    for ((id, row), judged_up_to) in rows {
        let w = watch(&tx, id, row)?;
        let Some(step) =
            crate::rule::deadline_pass(&w.rule, judged_up_to, now, DEADLINE_WINDOWS_PER_PASS)?
        else {
            judged.push((id, w.rule, judged_up_to));
            continue;
        };
        if let Some(range) = step.hull() {
            let coverage = read_coverage(
                &tx,
                &w.assets.iter().map(|&a| (a, range)).collect::<Vec<_>>(),
            )?;
            let mut states = States::new();
            let reads: Vec<StateRead> = StateRead::of(id, &step.windows).collect();
            read_states(&tx, &reads, &mut states)?;
            let out = judge::late(&w, &step.windows, &coverage, &states)?;
            fired += out.firings.len() as u64;
            settled += write(&tx, &out, now, untaken)?;
        }
        tx.prepare_cached("UPDATE rules SET deadlines_us = ?2 WHERE id = ?1")?
            .execute(params![id, step.judged_up_to.as_micros()])?;
        judged.push((id, w.rule, step.judged_up_to.as_micros()));
    }
    tx.commit()?;
    untaken.committed(settled);
    // Only what was committed moves the cache.
    for id in due {
        cache.forget(id);
    }
    for (id, rule, up_to) in &judged {
        cache.judged(*id, rule, *up_to);
    }
    Ok(fired)
}

/// The ledger's id (for delivery keys).
pub(crate) fn ledger_id(conn: &mut Connection) -> Result<String> {
    conn.prepare_cached("SELECT value FROM meta WHERE key = 'ledger_id'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::fault("the ledger has no id (table meta)"))
}

/// Pending firings due by ?1 whose lease is free or expired, in order:
/// from the partial index of pending firings (the planner would otherwise
/// walk every firing in sequence order).
pub(crate) const DUE: &str =
    "SELECT seq, lease_owner IS NOT NULL FROM firings INDEXED BY firings_pending WHERE state = 1 \
     AND (next_try_us IS NULL OR next_try_us <= ?1) \
     AND (lease_until_us IS NULL OR lease_until_us <= ?1) ORDER BY seq LIMIT ?2";

/// Lease up to `limit` due firings to `owner` (SPEC §7, targets). Nothing
/// is written when none is due, so an idle deliverer's pass is one read.
pub(crate) fn claim_deliveries(
    conn: &mut Connection,
    owner: &str,
    now: Instant,
    lease: std::time::Duration,
    limit: usize,
) -> Result<Vec<crate::Firing>> {
    let limit = limit.clamp(1, crate::rule::MAX_CLAIM) as i64;
    let due = |c: &Connection| -> Result<Vec<(i64, bool)>> {
        let mut stmt = c.prepare_cached(DUE)?;
        let seqs = stmt
            .query_map(params![now.as_micros(), limit], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(seqs)
    };
    if due(conn)?.is_empty() {
        return Ok(Vec::new());
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let seqs = due(&tx)?;
    let until = crate::rule::lease_end(now, lease);
    let mut out = Vec::with_capacity(seqs.len());
    {
        let mut lease_it = tx.prepare_cached(
            "UPDATE firings SET lease_owner = ?2, lease_until_us = ?3 WHERE seq = ?1",
        )?;
        let mut read = tx.prepare_cached(concat!(
            "SELECT ",
            firing_columns!(),
            " FROM firings f JOIN rules r ON r.id = f.rule_id WHERE f.seq = ?1"
        ))?;
        for (seq, reclaimed) in seqs {
            lease_it.execute(params![seq, owner, until])?;
            let mut f = decode_firing(read.query_row([seq], firing_row)?)?;
            f.delivery.reclaimed = reclaimed;
            out.push(f);
        }
    }
    tx.commit()?;
    Ok(out)
}

/// Due pending firings, lease free or expired, of target ?2 whose kind is
/// not in the bit set ?3 (the kinds the target takes): from the partial
/// index of pending firings, as [`DUE`].
macro_rules! untaken_due {
    () => {
        "SELECT seq FROM firings INDEXED BY firings_pending \
         WHERE state = 1 AND (next_try_us IS NULL OR next_try_us <= ?1) \
         AND (lease_until_us IS NULL OR lease_until_us <= ?1) \
         AND target = ?2 AND ((?3 >> kind) & 1) = 0"
    };
}
/// The statement as written, for the test of its plan.
#[cfg(test)]
pub(crate) const UNTAKEN_DUE: &str = untaken_due!();

/// Mark delivered unsent every due firing a target does not take (SPEC §7,
/// targets), in one transaction. Nothing is written when there is none, so
/// an idle deliverer's pass stays reads only.
pub(crate) fn skip_deliveries(
    conn: &mut Connection,
    now: Instant,
    takes: &[crate::TargetKinds<'_>],
) -> Result<u64> {
    let any = |c: &Connection| -> Result<bool> {
        let mut stmt = c.prepare_cached(concat!("SELECT EXISTS (", untaken_due!(), ")"))?;
        for t in takes {
            if stmt.query_row(params![now.as_micros(), t.target, t.mask()], |r| r.get(0))? {
                return Ok(true);
            }
        }
        Ok(false)
    };
    if !any(conn)? {
        return Ok(0);
    }
    let skipped = crate::DeliveryOutcome::Skipped;
    let c = skipped.columns();
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut n = 0;
    {
        let mut skip = tx.prepare_cached(concat!(
            "UPDATE firings SET state = ?4, attempts = attempts + ?5, last_error = NULL, \
             next_try_us = NULL, lease_owner = NULL, lease_until_us = NULL WHERE seq IN (",
            untaken_due!(),
            ")"
        ))?;
        for t in takes {
            n += skip.execute(params![
                now.as_micros(),
                t.target,
                t.mask(),
                c.state,
                c.add_attempts
            ])? as u64;
        }
    }
    tx.commit()?;
    Ok(n)
}

/// Finish a claimed firing's attempt while `owner` holds its lease.
pub(crate) fn finish_delivery(
    conn: &mut Connection,
    seq: i64,
    owner: &str,
    outcome: &crate::DeliveryOutcome,
) -> Result<bool> {
    let c = outcome.columns();
    let n = conn
        .prepare_cached(
            "UPDATE firings SET state = ?3, attempts = attempts + ?4, last_error = ?5, \
             next_try_us = ?6, lease_owner = NULL, lease_until_us = NULL \
             WHERE seq = ?1 AND lease_owner = ?2 AND state = 1",
        )?
        .execute(params![
            seq,
            owner,
            c.state,
            c.add_attempts,
            c.last_error,
            c.next_try
        ])?;
    Ok(n == 1)
}

/// Failed firings (of one rule or all) pending again.
pub(crate) fn retry_failed(conn: &mut Connection, rule: Option<&str>) -> Result<u64> {
    let n = conn
        .prepare_cached(
            "UPDATE firings SET state = 1, attempts = 0, next_try_us = NULL, \
             lease_owner = NULL, lease_until_us = NULL \
             WHERE state = 3 AND (?1 IS NULL OR rule_id = (SELECT id FROM rules WHERE name = ?1))",
        )?
        .execute(params![rule])?;
    Ok(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every count of rows is written whole, in order, by statements of
    /// the few prepared sizes.
    #[test]
    fn write_chunks_cover_every_row_with_few_sizes() {
        for n in 0..=300usize {
            let rows: Vec<usize> = (0..n).collect();
            let chunks: Vec<&[usize]> = write_chunks(&rows).collect();
            assert_eq!(chunks.concat(), rows, "{n} rows");
            for c in &chunks {
                assert!(c.len().is_power_of_two() && c.len() <= ROWS_PER_WRITE);
            }
            assert!(chunks.len() <= n / ROWS_PER_WRITE + WRITE_SIZES, "{n} rows");
        }
        let sql = chunk_sql(&INSERTS, INSERT_FIRINGS, 10, 4);
        assert!(sql.ends_with("(?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40)"));
    }

    /// A batch's events land in one place per asset, in the order the
    /// assets first appear, however many assets it names and however
    /// they interleave (looked through or mapped).
    #[test]
    fn each_asset_has_one_place_in_first_seen_order() {
        for assets in [1, 2, FEW_ASSETS, FEW_ASSETS + 1, 3 * FEW_ASSETS] {
            for stride in [1, 3, 7] {
                let ids: Vec<i64> = (0..5 * assets as i64)
                    .map(|k| (k * stride) % assets as i64 * 10)
                    .collect();
                let (mut per, mut slot) = (OwnedBatch::new(), IdMap::default());
                for (k, &id) in ids.iter().enumerate() {
                    let i = place(&mut per, &mut slot, id);
                    let iv = Interval::from_micros(k as i64, k as i64 + 1).unwrap();
                    per[i].1.push((EventKind::Landed, iv));
                }
                let mut first_seen: Vec<i64> = Vec::new();
                for id in &ids {
                    if !first_seen.contains(id) {
                        first_seen.push(*id);
                    }
                }
                let order: Vec<i64> = per.iter().map(|(a, _)| *a).collect();
                assert_eq!(order, first_seen, "{assets} assets, stride {stride}");
                for (a, events) in &per {
                    let mine: Vec<i64> = (0..ids.len() as i64)
                        .filter(|k| ids[*k as usize] == *a)
                        .collect();
                    let got: Vec<i64> = events.iter().map(|e| e.1.start().as_micros()).collect();
                    assert_eq!(got, mine, "asset {a}");
                }
            }
        }
    }
}
