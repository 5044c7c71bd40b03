//! Rules and firings in PostgreSQL: recording and reading rules, judging a
//! group's windows in the group's transaction, deadlines, the firing
//! listing. The judging itself is shared ([`crate::rule::judge`]).
//!
//! # Concurrency
//!
//! Every transaction that judges or changes a rule holds the locks of the
//! rule's assets that it touches, and reads the coverage it judges *after*
//! taking them: an append holds its assets' (`SELECT ... FOR UPDATE`, in
//! name order); a deadline pass, a rule's creation, change or deletion
//! locks all the rule's assets first. A rule of one asset needs no lock of
//! its own: whoever writes its windows holds its asset. A rule of several
//! assets is also locked by its row (rules in name order, always after the
//! asset locks), since two appends to two of its assets hold different
//! asset locks. Read committed gives each statement a fresh snapshot, so
//! of two appends that complete a window of one rule together (two assets,
//! two replicas) the second to get the rule's lock sees the first's
//! commit: the window fires once. A new rule locks its assets' rows before
//! it judges, so an append to them either commits before (and is judged by
//! the new rule's first judging) or waits and then finds the rule.
//!
//! Firing numbers are drawn from the one-row `firing_clock` table, whose
//! row lock is taken last and held to commit: firings are numbered in
//! commit order, so a reader paging with `after` never misses one that
//! commits late with a lower number.

use std::collections::{HashMap, HashSet};

use gapless_core::{EventKind, Instant, Interval, IntervalSet, NewEvent, Rule, WindowState};
use tokio_postgres::types::{ToSql, Type};

use super::client::Transaction;
use super::error::Fail;
use super::known::Versions;
use super::pool::{Conn, Stmts};
use crate::listing::{self, RulePage, RuleQuery};
use crate::rule::codec::{
    decode_firing, decode_rule, encode_rule, firing_columns, firing_kind_code, rule_columns,
    FiringRow, RuleColumns, RuleRow,
};
use crate::rule::deadlines::DeadlineCache;
use crate::rule::judge::{
    self, AssetEvents, BatchEvents, Judge, Outcome, Plan, StateRead, States, Watch, WindowRecord,
};
use crate::rule::records::{Run, RunChanges};
use crate::rule::{FiringPage, FiringQuery, RulePut, StoredRule, Untaken};
use crate::{IdMap, IdSet};
use crate::{Result, StoreError};

/// As in the SQLite backend: the most windows one deadline pass judges per
/// rule.
const DEADLINE_WINDOWS_PER_PASS: usize = 10_000;
/// The largest page of firings.
const MAX_FIRINGS_PAGE: i64 = 10_000;

/// The ledger's count of rule changes: read by an append once its assets
/// are locked, it says whether the rules the connection keeps are the
/// ledger's, at least for those assets (a change of a rule on them waits
/// for their locks, # Concurrency).
///
/// Beside it, the count of deadline passes that wrote window states
/// (`windows_version`): what the connection knows of those states holds
/// while it does not move ([`super::known`]).
pub(crate) const RULES_VERSION: &str = "SELECT value, \
     (SELECT value FROM meta WHERE key = 'windows_version') \
     FROM meta WHERE key = 'rules_version'";
/// The rules of ids $1 locked, in name order: the rules of several assets
/// an append judges (see # Concurrency).
pub(crate) const LOCK_RULES: &str = "SELECT id FROM rules WHERE id = ANY($1::bigint[]) \
     ORDER BY name COLLATE \"C\" FOR UPDATE";
/// The assets of the rules of ids $1 locked, in name order as appends
/// take them: before a deadline pass or a change of the rules judges or
/// writes their windows.
const LOCK_ASSETS_OF_RULES: &str = "SELECT id FROM assets WHERE id IN \
       (SELECT asset_id FROM rule_assets WHERE rule_id = ANY($1::bigint[])) \
     ORDER BY name COLLATE \"C\" FOR UPDATE";
const ALL_RULES: &str = concat!(
    "SELECT id, ",
    rule_columns!(),
    " FROM rules ORDER BY name COLLATE \"C\""
);
/// The rules watching any of the assets named $1.
const RULES_OF_ASSETS: &str = concat!(
    "SELECT id, ",
    rule_columns!(),
    " FROM rules WHERE id IN (SELECT ra.rule_id FROM rule_assets ra \
     JOIN assets a ON a.id = ra.asset_id WHERE a.name = ANY($1::text[]))"
);
/// A join, not `rule_id = ANY($1)`: that compares each row of the table
/// with every id of the array (all the rules, when the cache is read).
const ASSETS_OF_RULES: &str = "SELECT ra.rule_id, ra.asset_id, a.name FROM rule_assets ra \
     JOIN unnest($1::bigint[]) AS u(id) ON u.id = ra.rule_id \
     JOIN assets a ON a.id = ra.asset_id";
/// The recorded states of each `(rule, lo, hi, rows)` of $4..$7 ($1..$4
/// in [`WINDOW_STATES`]): the runs of windows (`records.rs`) that overlap
/// or touch [lo, hi] (rule, start, end, complete, generation, late), those
/// touching it to be joined with the windows judged. One seek a rule,
/// reading back from hi: of `rows`, the bound of [`StateRead`], those that
/// reach lo.
macro_rules! window_states {
    ($r:literal, $lo:literal, $hi:literal, $rows:literal) => {
        concat!(
            "SELECT 1::smallint, w.rule_id, w.start_us, w.end_us, w.complete, w.generation, \
               w.late \
             FROM unnest(",
            $r,
            "::bigint[], ",
            $lo,
            "::bigint[], ",
            $hi,
            "::bigint[], ",
            $rows,
            "::bigint[]) AS v(r, lo, hi, n) \
             CROSS JOIN LATERAL (SELECT rule_id, start_us, end_us, complete, generation, late \
               FROM rule_windows WHERE rule_id = v.r AND start_us <= v.hi \
               ORDER BY start_us DESC LIMIT v.n) AS w \
             WHERE w.end_us >= v.lo"
        )
    };
}
/// What judging reads, in one round trip: the runs overlapping each
/// `(asset, lo, hi)` of $1..$3, adjacent ones too (part 0: asset, start,
/// end), and the recorded states of each `(rule, lo, hi, rows)` of $4..$7
/// (part 1, as [`WINDOW_STATES`]). Every access an index seek driven by one
/// element of the arrays, for [`Transaction::run_seeks`].
const JUDGING_READS: &str = concat!(
    "SELECT 0::smallint, u.a, r.start_us, r.end_us, \
       NULL::boolean, NULL::bigint, NULL::boolean ",
    runs_touching_from!(),
    " UNION ALL ",
    window_states!("$4", "$5", "$6", "$7"),
    " ORDER BY 1, 2, 3"
);
/// The recorded states of the windows of each `(rule, lo, hi)` of
/// $1..$3, read by an append in its first round trip when it could say
/// beforehand which rules judge it ([`Prediction`]).
pub(crate) const WINDOW_STATES: &str = window_states!("$1", "$2", "$3", "$4");
/// [`WINDOW_STATES`] and, for each `(rule, hi)` of $5, $6, the first run
/// of the rule that starts after `hi` (part 2): where there is none, every
/// run of the rule from the read's `lo` on was read
/// ([`super::known::StateReads::after`]).
pub(crate) const WINDOW_STATES_AND_AFTER: &str = concat!(
    window_states!("$1", "$2", "$3", "$4"),
    " UNION ALL \
     SELECT 2::smallint, v.r, w.start_us, w.end_us, w.complete, w.generation, w.late \
     FROM unnest($5::bigint[], $6::bigint[]) AS v(r, hi) \
     CROSS JOIN LATERAL (SELECT start_us, end_us, complete, generation, late \
       FROM rule_windows WHERE rule_id = v.r AND start_us > v.hi \
       ORDER BY start_us LIMIT 1) AS w"
);

/// What judging changed, as data-modifying CTEs over $1..$23: the runs of
/// window records (`records.rs`) changed in place ($1..$6: rule, start,
/// end, complete, generation, late; a run that grows keeps its row) and
/// inserted ($7..$12), then $13 firing numbers drawn under the firing
/// clock's lock (not taken when there is no firing), the firings inserted
/// with them in order. Alone ([`JUDGING_WRITES`]) or as the tail of an
/// append's one write ([`judged_write_sql`]); the runs deleted go first, in
/// a statement of their own ([`DELETE_RUNS`]).
///
/// The runs changed in place are written by an `UPDATE` joined with the
/// arrays, which takes no row lock before it writes, as an upsert does. It
/// finds each row by the key's index: in an append's write, prepared, the
/// transaction is a seeking one ([`super::client::Client::seeking_transaction`]),
/// so a plan made while the table was small (a hash join over all of it)
/// is not kept; alone, the statement is planned for the tables as they
/// are. A run to change that is not stored is inserted with the new ones,
/// as an upsert would: a state the connection wrongly believed stored
/// (`known.rs`) cannot lose a record.
macro_rules! judging_ctes {
    () => {
        "wu AS ( \
           UPDATE rule_windows w SET end_us = u.e, complete = u.c, generation = u.g, late = u.l \
           FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[], \
             $5::bigint[], $6::boolean[]) AS u(r, s, e, c, g, l) \
           WHERE w.rule_id = u.r AND w.start_us = u.s RETURNING w.rule_id, w.start_us \
         ), wi AS ( \
           INSERT INTO rule_windows (rule_id, start_us, end_us, complete, generation, late) \
           SELECT * FROM unnest($7::bigint[], $8::bigint[], $9::bigint[], $10::boolean[], \
             $11::bigint[], $12::boolean[]) \
           UNION ALL \
           SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::boolean[], \
             $5::bigint[], $6::boolean[]) AS u(r, s, e, c, g, l) \
           WHERE NOT EXISTS (SELECT 1 FROM wu WHERE wu.rule_id = u.r AND wu.start_us = u.s) \
         ), d AS ( \
           UPDATE firing_clock SET last = last + $13::bigint WHERE $13::bigint > 0 RETURNING last \
         ), f AS ( \
           INSERT INTO firings (seq, rule_id, kind, start_us, end_us, key, generation, \
             covered_ratio, recorded_us, target, state) \
           SELECT d.last - $13::bigint + u.o, u.r, u.k, u.st, u.en, u.ky, u.g, u.c, $19::bigint, \
             u.t, u.d \
           FROM d, unnest($14::bigint[], $15::smallint[], $16::bigint[], $17::bigint[], \
             $18::text[], $20::bigint[], $21::double precision[], $22::text[], $23::smallint[]) \
             WITH ORDINALITY AS u(r, k, st, en, ky, g, c, t, d, o) \
         )"
    };
}
const JUDGING_WRITES: &str = concat!("WITH ", judging_ctes!(), " SELECT 1");
/// How many parameters [`judging_ctes`] takes.
pub(crate) const JUDGING_PARAMS: usize = 23;
/// The runs of window records that judging joined into others or cut, by
/// `(rule, start)` ($1, $2): rare (a window between two runs, a window
/// cut out of one), and run as index seeks ([`Transaction::run_seeks`]).
pub(crate) const DELETE_RUNS: &str = "DELETE FROM rule_windows w \
     USING unnest($1::bigint[], $2::bigint[]) AS x(r, s) \
     WHERE w.rule_id = x.r AND w.start_us = x.s";

/// The judging CTEs with their parameters numbered from `first` + 1, to
/// follow the `first` parameters of an append's write.
pub(crate) fn judging_ctes_after(first: usize) -> String {
    let sql = judging_ctes!();
    let mut out = String::with_capacity(sql.len() + 32);
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let n: usize = rest[..digits].parse().expect("a parameter number");
        out.push_str(&(n + first).to_string());
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Runs of window records as columns of [`judging_ctes`]'s parameters.
#[derive(Default)]
struct RunColumns {
    rule: Vec<i64>,
    start: Vec<i64>,
    end: Vec<i64>,
    complete: Vec<bool>,
    generation: Vec<i64>,
    late: Vec<bool>,
}

impl RunColumns {
    fn of(runs: &[(i64, Run)]) -> RunColumns {
        let mut c = RunColumns::default();
        for &(rule, (start, end, record)) in runs {
            c.rule.push(rule);
            c.start.push(start);
            c.end.push(end);
            c.complete.push(record.state.complete);
            c.generation.push(i64::from(record.state.generation));
            c.late.push(record.late);
        }
        c
    }
}

/// What judging changed, as the columns of [`judging_ctes`]'s parameters.
pub(crate) struct JudgingColumns<'o> {
    changes: RunChanges,
    deleted_rule: Vec<i64>,
    deleted_start: Vec<i64>,
    updated: RunColumns,
    inserted: RunColumns,
    n: i64,
    rule: Vec<i64>,
    kind: Vec<i16>,
    start: Vec<i64>,
    end: Vec<i64>,
    key: Vec<&'o str>,
    recorded: i64,
    generation: Vec<i64>,
    ratio: Vec<f64>,
    target: Vec<Option<&'o str>>,
    state: Vec<i16>,
    settled: u64,
}

impl<'o> JudgingColumns<'o> {
    pub(crate) fn new(out: &'o Outcome, now: Instant, untaken: &Untaken) -> JudgingColumns<'o> {
        let runs = out.run_changes();
        let f = &out.firings;
        let (state, settled) = untaken.states(f);
        JudgingColumns {
            deleted_rule: runs.deleted.iter().map(|d| d.0).collect(),
            deleted_start: runs.deleted.iter().map(|d| d.1).collect(),
            updated: RunColumns::of(&runs.updated),
            inserted: RunColumns::of(&runs.inserted),
            changes: runs,
            n: f.len() as i64,
            rule: f.iter().map(|f| f.rule_id).collect(),
            kind: f.iter().map(|f| firing_kind_code(f.kind)).collect(),
            start: f.iter().map(|f| f.window.start().as_micros()).collect(),
            end: f.iter().map(|f| f.window.end().as_micros()).collect(),
            key: f.iter().map(|f| f.key.as_str()).collect(),
            recorded: now.as_micros(),
            generation: f.iter().map(|f| i64::from(f.generation)).collect(),
            ratio: f.iter().map(|f| f.covered_ratio).collect(),
            target: f.iter().map(|f| f.target.as_deref()).collect(),
            state,
            settled,
        }
    }

    /// How many of the firings are recorded delivered unsent.
    pub(crate) fn settled(&self) -> u64 {
        self.settled
    }

    /// The window states written, as changes of runs.
    pub(crate) fn into_changes(self) -> RunChanges {
        self.changes
    }

    /// Delete the runs that judging joined into others or cut
    /// ([`DELETE_RUNS`]), when there are any: before the write of the rest.
    pub(crate) fn delete_runs(
        &self,
        tx: &mut Transaction<'_>,
        stmts: &mut Stmts,
    ) -> Result<(), Fail> {
        if self.deleted_rule.is_empty() {
            return Ok(());
        }
        let s = stmts.get(tx, DELETE_RUNS)?;
        let params: [&(dyn ToSql + Sync); 2] = [&self.deleted_rule, &self.deleted_start];
        tx.run_seeks(async |c| c.execute(&s, &params).await)?;
        Ok(())
    }

    /// The parameters in order, with their types.
    pub(crate) fn params(&self) -> [(&(dyn ToSql + Sync), Type); JUDGING_PARAMS] {
        let (u, i) = (&self.updated, &self.inserted);
        [
            (&u.rule, Type::INT8_ARRAY),
            (&u.start, Type::INT8_ARRAY),
            (&u.end, Type::INT8_ARRAY),
            (&u.complete, Type::BOOL_ARRAY),
            (&u.generation, Type::INT8_ARRAY),
            (&u.late, Type::BOOL_ARRAY),
            (&i.rule, Type::INT8_ARRAY),
            (&i.start, Type::INT8_ARRAY),
            (&i.end, Type::INT8_ARRAY),
            (&i.complete, Type::BOOL_ARRAY),
            (&i.generation, Type::INT8_ARRAY),
            (&i.late, Type::BOOL_ARRAY),
            (&self.n, Type::INT8),
            (&self.rule, Type::INT8_ARRAY),
            (&self.kind, Type::INT2_ARRAY),
            (&self.start, Type::INT8_ARRAY),
            (&self.end, Type::INT8_ARRAY),
            (&self.key, Type::TEXT_ARRAY),
            (&self.recorded, Type::INT8),
            (&self.generation, Type::INT8_ARRAY),
            (&self.ratio, Type::FLOAT8_ARRAY),
            (&self.target, Type::TEXT_ARRAY),
            (&self.state, Type::INT2_ARRAY),
        ]
    }
}

fn rule_row(r: &tokio_postgres::Row) -> (i64, RuleRow) {
    (
        r.get(0),
        RuleRow {
            columns: RuleColumns {
                name: r.get(1),
                assets: r.get(2),
                every: r.get(3),
                tz: r.get(4),
                policy: r.get(5),
                from: r.get(6),
                until: r.get(7),
                deadline: r.get(8),
                target: r.get(9),
                key_format: r.get(10),
            },
            created: r.get(11),
        },
    )
}

fn firing_row(r: &tokio_postgres::Row) -> FiringRow {
    FiringRow {
        seq: r.get(0),
        rule: r.get(1),
        kind: i64::from(r.get::<_, i16>(2)),
        start: r.get(3),
        end: r.get(4),
        key: r.get(5),
        generation: r.get(6),
        covered_ratio: r.get(7),
        recorded: r.get(8),
        target: r.get(9),
        state: i64::from(r.get::<_, i16>(10)),
        attempts: r.get(11),
        last_error: r.get(12),
    }
}

/// The watches of rule rows: each with its assets' ids. The name of each
/// asset by id goes to `names`.
fn watches(
    tx: &mut Transaction<'_>,
    rows: Vec<tokio_postgres::Row>,
    names: &mut IdMap<i64, String>,
) -> Result<Vec<Watch>, Fail> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
    let mut assets: IdMap<i64, Vec<i64>> = IdMap::default();
    for r in tx.query(ASSETS_OF_RULES, &[&ids])? {
        assets.entry(r.get(0)).or_default().push(r.get(1));
        names.entry(r.get(1)).or_insert_with(|| r.get(2));
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let (id, row) = rule_row(r);
        out.push(Watch {
            id,
            rule: decode_rule(row)?.rule,
            assets: assets.remove(&id).unwrap_or_default(),
        });
    }
    Ok(out)
}

/// The rules as appends on one connection read them: an asset's the first
/// time an append on this connection touches it, all of them at once when
/// an append brings many new assets, and forgotten when the ledger's
/// `rules_version` moved. A process that appends to one asset of a ledger
/// of 10,000 rules (`gapless emit`) reads that asset's rules, not all of
/// them.
#[derive(Debug, Default)]
pub(crate) struct WatchCache {
    version: Option<String>,
    /// The rules read, in the order read.
    rules: Vec<Watch>,
    /// Each rule read's position in `rules`, by id.
    by_id: IdMap<i64, u32>,
    /// Per asset name whose rules were read, its id and the positions in
    /// `rules` of the rules watching it, for [`predict`].
    by_asset: HashMap<String, (i64, Vec<u32>)>,
    /// The asset names looked up that no rule watches (or no asset has).
    unwatched: HashSet<String>,
    /// Whether every rule was read: a name without an entry in `by_asset`
    /// is then watched by none.
    all: bool,
    /// Whether `rules` are in name order (read all at once), so that
    /// positions sort as names do.
    in_order: bool,
    /// The names of the assets of the rules, by id.
    names: IdMap<i64, String>,
    /// When each rule's next deadline passes, for deadline passes on this
    /// connection (read on their own, from the rules with a deadline).
    deadlines: DeadlineCache,
}

impl WatchCache {
    /// Forget the rules read, for those of `version` (read before any of
    /// them is).
    fn reset(&mut self, version: String) {
        self.rules.clear();
        self.by_id.clear();
        self.by_asset.clear();
        self.unwatched.clear();
        self.names.clear();
        self.all = false;
        self.in_order = false;
        // Read before the rules: a rule changed between the two reads (on
        // other assets) only makes the next append read them again.
        self.version = Some(version);
    }

    /// How much of the rules this cache holds: every rule, or the assets
    /// whose rules it read (of any version).
    pub(crate) fn rules_read(&self) -> usize {
        if self.all {
            usize::MAX
        } else {
            self.by_asset.len() + self.unwatched.len()
        }
    }

    /// Whether the rules on the asset named `name` were read.
    fn knows(&self, name: &str) -> bool {
        self.all || self.by_asset.contains_key(name) || self.unwatched.contains(name)
    }

    /// Read the rules on the assets `names` not read yet: every rule once
    /// this connection has met that many assets.
    fn learn(&mut self, tx: &mut Transaction<'_>, names: &[&str]) -> Result<(), Fail> {
        let unknown: Vec<&str> = names.iter().copied().filter(|n| !self.knows(n)).collect();
        if unknown.is_empty() {
            return Ok(());
        }
        if self.by_asset.len() + self.unwatched.len() + unknown.len() >= LOAD_ALL_FROM {
            return self.load_all(tx);
        }
        let rows = tx.query(RULES_OF_ASSETS, &[&unknown])?;
        let mut read: Vec<u32> = Vec::with_capacity(rows.len());
        let mut new = Vec::new();
        for r in rows {
            match self.by_id.get(&r.get::<_, i64>(0)) {
                Some(&at) => read.push(at),
                None => new.push(r),
            }
        }
        for w in watches(tx, new, &mut self.names)? {
            let at = self.position(self.rules.len())?;
            self.by_id.insert(w.id, at);
            self.rules.push(w);
            self.in_order = false;
            read.push(at);
        }
        read.sort_unstable();
        let wanted: HashSet<&str> = unknown.iter().copied().collect();
        for at in read {
            for asset in &self.rules[at as usize].assets {
                let name = &self.names[asset];
                if wanted.contains(name.as_str()) {
                    let on = &mut self
                        .by_asset
                        .entry(name.clone())
                        .or_insert((*asset, Vec::new()))
                        .1;
                    // An asset named twice by one rule counts once.
                    if on.last() != Some(&at) {
                        on.push(at);
                    }
                }
            }
        }
        for n in unknown {
            if !self.by_asset.contains_key(n) {
                self.unwatched.insert(n.to_string());
            }
        }
        Ok(())
    }

    /// Read every rule (two round trips).
    fn load_all(&mut self, tx: &mut Transaction<'_>) -> Result<(), Fail> {
        let all = tx.query(ALL_RULES, &[])?;
        self.names.clear();
        self.rules = watches(tx, all, &mut self.names)?;
        self.by_id.clear();
        self.by_asset.clear();
        self.unwatched.clear();
        for at in 0..self.rules.len() {
            let at = self.position(at)?;
            let w = &self.rules[at as usize];
            self.by_id.insert(w.id, at);
            for asset in &w.assets {
                let name = self.names[asset].clone();
                let on = &mut self.by_asset.entry(name).or_insert((*asset, Vec::new())).1;
                // An asset named twice by one rule counts once.
                if on.last() != Some(&at) {
                    on.push(at);
                }
            }
        }
        self.all = true;
        self.in_order = true;
        Ok(())
    }

    /// Position `at` of `rules` as the cache keeps positions.
    fn position(&self, at: usize) -> Result<u32, Fail> {
        u32::try_from(at)
            .map_err(|_| Fail::Store(StoreError::fault("more rules than an append can keep")))
    }

    /// `positions` in the rules' name order (byte order, as they are
    /// locked and judged), each once.
    fn in_name_order(&self, positions: &mut Vec<u32>) {
        if self.in_order {
            // Comparing numbers, not names that are each a cache miss away.
            positions.sort_unstable();
        } else {
            let name = |at: &u32| self.rules[*at as usize].rule.name.as_bytes();
            positions.sort_unstable_by(|a, b| name(a).cmp(name(b)));
        }
        positions.dedup();
    }

    /// The rules at `positions`.
    pub(crate) fn at(&self, positions: &[u32]) -> Vec<&Watch> {
        positions.iter().map(|&i| &self.rules[i as usize]).collect()
    }

    /// The positions of the rules watching the assets named `names` (all
    /// read), in name order, each once.
    fn positions<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> Vec<u32> {
        let mut out: Vec<u32> = names
            .into_iter()
            .filter_map(|n| self.by_asset.get(n))
            .flat_map(|(_, at)| at.iter().copied())
            .collect();
        self.in_name_order(&mut out);
        out
    }
}

/// How many asset names a connection meets before it reads every rule at
/// once rather than those of each new name (two round trips either way).
/// Until an asset's rules are read, an append to it cannot say ahead what
/// judging will read, and takes more round trips: a server whose appends
/// spread over thousands of assets reads every rule early, and a process
/// that appends to a few reads theirs.
const LOAD_ALL_FROM: usize = 200;

/// The rules watching the assets `names` (locked by the caller's
/// transaction), in name order, as the ledger has them at `version` (the
/// rows of [`RULES_VERSION`] read after the locks): from `cache`, reading
/// those of the names it has not read (two round trips), all of them again
/// when the version moved.
pub(crate) fn watches_of<'c>(
    tx: &mut Transaction<'_>,
    cache: &'c mut WatchCache,
    version: &[tokio_postgres::Row],
    names: &[&str],
) -> Result<Vec<&'c Watch>, Fail> {
    let version = version_of(version)?;
    if cache.version.as_deref() != Some(version.as_str()) {
        cache.reset(version);
    }
    cache.learn(tx, names)?;
    let cache: &'c WatchCache = cache;
    Ok(cache.at(&cache.positions(names.iter().copied())))
}

/// The `rules_version` and `windows_version` in the rows of
/// [`RULES_VERSION`], when there are rules.
pub(crate) fn versions_of(rows: &[tokio_postgres::Row]) -> Result<Option<Versions>> {
    let Some(r) = rows.first() else {
        return Ok(None);
    };
    let number = |v: Option<String>| -> Result<i64> {
        v.map_or(Ok(0), |v| {
            v.parse()
                .map_err(|_| crate::error::corrupt("a version in meta"))
        })
    };
    Ok(Some((number(r.try_get(0)?)?, number(r.try_get(1)?)?)))
}

/// The version in the rows of [`RULES_VERSION`] ("0" before any rule).
fn version_of(rows: &[tokio_postgres::Row]) -> Result<String> {
    Ok(match rows.first() {
        Some(r) => r.try_get(0)?,
        None => "0".into(),
    })
}

/// What an append expects to judge, said before its first round trip from
/// the rules `cache` holds, so that judging's reads go with that round
/// trip; it holds only if the ledger's rules are still at the version the
/// cache holds ([`Prediction::holds`]).
#[derive(Debug)]
pub(crate) struct Prediction<'a> {
    version: String,
    /// The rules' positions in the cache, in the rules' name order.
    pub(crate) positions: Vec<u32>,
    /// The ids of those with several assets, in name order: to lock
    /// ([`LOCK_RULES`]).
    pub(crate) multi: Vec<i64>,
    /// Made for the rules and every event of the group (a superset of
    /// its new events).
    pub(crate) plan: Plan,
    /// Per asset name, the range its coverage is read over for `plan`.
    pub(crate) reads: Vec<(&'a str, i64, i64)>,
}

impl Prediction<'_> {
    /// Whether the rules are still those of the predicted version (the
    /// rows of [`RULES_VERSION`] read after the assets' locks).
    pub(crate) fn holds(&self, version: &[tokio_postgres::Row]) -> Result<bool> {
        Ok(version_of(version)? == self.version)
    }
}

/// The ids of those of `watches` that watch more than one asset, in their
/// order: appends to two of their assets hold no common asset lock, so
/// these are locked by their rows ([`LOCK_RULES`]).
pub(crate) fn of_several_assets(watches: &[&Watch]) -> Vec<i64> {
    watches
        .iter()
        .filter(|w| w.single_asset().is_none())
        .map(|w| w.id)
        .collect()
}

/// An asset's name and the kind and interval of each of its events.
type NamedEvents<'a> = (&'a str, Vec<(EventKind, Interval)>);

/// The judging `events` (a group's, all of them) would need by the rules
/// in `cache`: none when no rule the cache knows watches their assets.
pub(crate) fn predict<'a>(
    cache: &'a WatchCache,
    events: impl IntoIterator<Item = &'a NewEvent>,
) -> Option<Prediction<'a>> {
    let version = cache.version.clone()?;
    // Each asset's name too, for the reads: the group's few, at hand,
    // rather than looked up again among every asset of the rules.
    let mut per_asset: IdMap<i64, NamedEvents<'a>> = IdMap::default();
    let mut positions: Vec<u32> = Vec::new();
    // A batch's events of one asset come together: one lookup for them.
    let mut last: Option<(&str, Option<i64>)> = None;
    for ev in events {
        let name = ev.asset.as_str();
        let asset = match last {
            Some((n, asset)) if n == name => asset,
            _ => {
                // An asset whose rules this connection has not read: what
                // judging needs is known once they are.
                if !cache.knows(name) {
                    return None;
                }
                let asset = cache.by_asset.get(name).map(|(asset, at)| {
                    if !per_asset.contains_key(asset) {
                        positions.extend(at);
                    }
                    *asset
                });
                last = Some((name, asset));
                asset
            }
        };
        if let Some(asset) = asset {
            per_asset
                .entry(asset)
                .or_insert_with(|| (name, Vec::new()))
                .1
                .push((ev.kind, ev.interval));
        }
    }
    if positions.is_empty() {
        return None;
    }
    cache.in_name_order(&mut positions);
    let watches = cache.at(&positions);
    let batch: Vec<AssetEvents<'_>> = per_asset
        .iter()
        .map(|(a, (_, evs))| (*a, evs.as_slice()))
        .collect();
    let plan = Plan::new(&watches, [batch.as_slice()]);
    // A rule's other assets, outside the group, are read by name too.
    let reads = plan
        .reads
        .iter()
        .map(|(a, r)| {
            let name = match per_asset.get(a) {
                Some((name, _)) => *name,
                None => cache.names.get(a).map(String::as_str)?,
            };
            Some((name, r.start().as_micros(), r.end().as_micros()))
        })
        .collect::<Option<_>>()?;
    Some(Prediction {
        version,
        multi: of_several_assets(&watches),
        positions,
        plan,
        reads,
    })
}

/// Each asset's runs overlapping its range, as sets.
fn read_coverage(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    reads: &[(i64, Interval)],
) -> Result<IdMap<i64, IntervalSet>, Fail> {
    let reads: Vec<(i64, i64, i64)> = reads
        .iter()
        .map(|(a, r)| (*a, r.start().as_micros(), r.end().as_micros()))
        .collect();
    Ok(run_sets(read_for_judging(tx, stmts, &reads, &[])?.0)?)
}

/// Write what judging changed in one statement: window records, then the
/// firings, numbered under the firing clock's lock (taken last, held to
/// commit).
/// How many firings it recorded delivered unsent (`untaken`), to be
/// counted once the transaction commits.
fn write(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    out: &Outcome,
    now: Instant,
    untaken: &Untaken,
) -> Result<u64, Fail> {
    if out.is_empty() {
        return Ok(0);
    }
    let cols = JudgingColumns::new(out, now, untaken);
    cols.delete_runs(tx, stmts)?;
    // Typed and unprepared: one round trip (rule creation and deadlines
    // run it rarely; appends write judging with their own statement).
    tx.query_typed(JUDGING_WRITES, &cols.params())?;
    Ok(cols.settled())
}

/// The new events of one batch of a group, per asset.
pub(crate) type GroupBatch = Vec<(i64, Vec<(EventKind, Interval)>)>;

/// Stored coverage runs by asset, each `(start, end)` in start order.
pub(crate) type StoredRuns = IdMap<i64, Vec<(i64, i64)>>;

/// Judge `watches` (locked) for a group's batches, in order, in the
/// group's transaction before its coverage runs are written; and read the
/// runs the append needs, the ones touching each `(asset, lo, hi)` of
/// `hulls` (adjacent ones included), in the same round trip as judging's
/// coverage and window states. What judging changed is written by the
/// append's own write.
pub(crate) fn read_and_judge(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    watches: &[&Watch],
    batches: &[GroupBatch],
    hulls: &[(i64, i64, i64)],
) -> Result<(StoredRuns, Outcome), Fail> {
    let plan = Plan::new(watches, borrowed(batches).iter().map(Vec::as_slice));
    // One range per asset: the hull of its new events and of its windows.
    let mut ranges: IdMap<i64, (i64, i64)> =
        hulls.iter().map(|&(a, lo, hi)| (a, (lo, hi))).collect();
    for (a, range) in &plan.reads {
        let (lo, hi) = (range.start().as_micros(), range.end().as_micros());
        let r = ranges.entry(*a).or_insert((lo, hi));
        *r = (r.0.min(lo), r.1.max(hi));
    }
    let mut reads: Vec<(i64, i64, i64)> = ranges
        .into_iter()
        .map(|(a, (lo, hi))| (a, lo, hi))
        .collect();
    reads.sort_unstable();
    let (runs, states) = read_for_judging(tx, stmts, &reads, plan.state_reads())?;
    Ok(judge_read(watches, batches, plan, runs, states, hulls)?)
}

/// The batches' events borrowed as judging takes them.
fn borrowed(batches: &[GroupBatch]) -> Vec<Vec<AssetEvents<'_>>> {
    batches
        .iter()
        .map(|b| b.iter().map(|(a, e)| (*a, e.as_slice())).collect())
        .collect()
}

/// Judge `watches` for a group's batches from what was read for `plan`
/// (made for them and a superset of the batches' events): `runs`, each
/// planned asset's runs over at least its planned read and its hull in
/// `hulls`, and `states`, the planned windows' records. The runs touching
/// each hull, for the append's write, and what judging changed.
pub(crate) fn judge_read(
    watches: &[&Watch],
    batches: &[GroupBatch],
    plan: Plan,
    runs: StoredRuns,
    states: States,
    hulls: &[(i64, i64, i64)],
) -> Result<(StoredRuns, Outcome)> {
    let mut stored = StoredRuns::default();
    for &(asset, lo, hi) in hulls {
        let touching = runs
            .get(&asset)
            .into_iter()
            .flatten()
            .filter(|r| r.1 >= lo && r.0 <= hi)
            .copied()
            .collect();
        stored.insert(asset, touching);
    }
    if plan.is_empty() {
        return Ok((stored, Outcome::default()));
    }
    let mut judge = Judge::new(watches.to_vec(), plan, run_sets(runs)?, states);
    for b in &borrowed(batches) {
        judge.batch(b as &BatchEvents<'_>)?;
    }
    Ok((stored, judge.finish()))
}

/// Each asset's runs overlapping its range as sets.
fn run_sets(runs: StoredRuns) -> Result<IdMap<i64, IntervalSet>> {
    let mut out = IdMap::default();
    for (asset, v) in runs {
        let set = v
            .into_iter()
            .map(|(s, e)| crate::codec::interval(s, e, "coverage run"))
            .collect::<Result<Vec<_>>>()?;
        out.insert(asset, crate::codec::run_set(set)?);
    }
    Ok(out)
}

/// The runs (as `(start, end)`, in order) overlapping or touching each
/// `(asset, lo, hi)` of `runs` and the recorded states of each
/// `(rule, range)` of `states`, in one statement.
fn read_for_judging(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    runs: &[(i64, i64, i64)],
    states: &[StateRead],
) -> Result<(StoredRuns, States), Fail> {
    let a: Vec<i64> = runs.iter().map(|r| r.0).collect();
    let alo: Vec<i64> = runs.iter().map(|r| r.1).collect();
    let ahi: Vec<i64> = runs.iter().map(|r| r.2).collect();
    let [r, rlo, rhi, rn] = state_read_columns(states);
    let s = stmts.get(tx, JUDGING_READS)?;
    let params: [&(dyn ToSql + Sync); 7] = [&a, &alo, &ahi, &r, &rlo, &rhi, &rn];
    let rows = tx.run_seeks(async |c| c.query(&s, &params).await)?;
    let mut by_asset = StoredRuns::default();
    let mut out = States::new();
    for row in rows {
        let part: i16 = row.get(0);
        if part == 0 {
            let v = by_asset.entry(row.get(1)).or_default();
            let run: (i64, i64) = (row.get(2), row.get(3));
            // Rows come in start order per asset: a run met twice (an
            // asset asked for over two ranges) counts once.
            if v.last() != Some(&run) {
                v.push(run);
            }
        } else {
            insert_run(&mut out, &row)?;
        }
    }
    Ok((by_asset, out))
}

/// The columns of [`window_states`]'s parameters: rule, lo, hi, rows.
pub(crate) fn state_read_columns(reads: &[StateRead]) -> [Vec<i64>; 4] {
    [
        reads.iter().map(|s| s.rule).collect(),
        reads.iter().map(|s| s.hull.start().as_micros()).collect(),
        reads.iter().map(|s| s.hull.end().as_micros()).collect(),
        reads.iter().map(|s| s.rows).collect(),
    ]
}

/// Add a row of [`window_states`] (a run of a rule's windows) to `states`.
fn insert_run(states: &mut States, row: &tokio_postgres::Row) -> Result<()> {
    let generation: i64 = row.try_get(5)?;
    let record = WindowRecord {
        state: WindowState {
            complete: row.try_get(4)?,
            generation: u32::try_from(generation)
                .map_err(|_| crate::error::corrupt("window generation"))?,
        },
        late: row.try_get(6)?,
    };
    states.insert(row.try_get(1)?, row.try_get(2)?, row.try_get(3)?, record);
    Ok(())
}

/// The recorded states of the rows of [`WINDOW_STATES_AND_AFTER`], and
/// the rules with a run after the range probed.
pub(crate) fn states_and_after(rows: &[tokio_postgres::Row]) -> Result<(States, IdSet<i64>)> {
    let mut out = States::new();
    let mut after = IdSet::default();
    for row in rows {
        if row.try_get::<_, i16>(0)? == 2 {
            after.insert(row.try_get(1)?);
        } else {
            insert_run(&mut out, row)?;
        }
    }
    Ok((out, after))
}

/// Read the recorded states of `reads` into `states` (none: nothing).
pub(crate) fn read_states(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    reads: &[StateRead],
    states: &mut States,
) -> Result<(), Fail> {
    if reads.is_empty() {
        return Ok(());
    }
    let s = stmts.get(tx, WINDOW_STATES)?;
    let [r, lo, hi, n] = state_read_columns(reads);
    let params: [&(dyn ToSql + Sync); 4] = [&r, &lo, &hi, &n];
    for row in tx.run_seeks(async |c| c.query(&s, &params).await)? {
        insert_run(states, &row)?;
    }
    Ok(())
}

fn stored_rule(
    tx: &mut Transaction<'_>,
    name: &str,
    lock: bool,
) -> Result<Option<(i64, StoredRule)>, Fail> {
    const SELECT: &str = concat!(
        "SELECT id, ",
        rule_columns!(),
        " FROM rules WHERE name = $1"
    );
    const LOCK: &str = concat!(
        "SELECT id, ",
        rule_columns!(),
        " FROM rules WHERE name = $1 FOR UPDATE"
    );
    let row = tx.query_opt(if lock { LOCK } else { SELECT }, &[&name])?;
    match row {
        Some(r) => {
            let (id, row) = rule_row(&r);
            Ok(Some((id, decode_rule(row)?)))
        }
        None => Ok(None),
    }
}

/// The rule named `name`, locked with its assets (assets first, as
/// appends lock them: # Concurrency); `None` when there is none.
fn lock_rule(tx: &mut Transaction<'_>, name: &str) -> Result<Option<(i64, StoredRule)>, Fail> {
    loop {
        let Some((id, _)) = stored_rule(tx, name, false)? else {
            return Ok(None);
        };
        tx.execute(LOCK_ASSETS_OF_RULES, &[&vec![id]])?;
        match stored_rule(tx, name, true)? {
            Some((locked, rule)) if locked == id => return Ok(Some((locked, rule))),
            // Deleted meanwhile, and the name perhaps another rule's now,
            // with other assets: again.
            Some(_) => continue,
            None => return Ok(None),
        }
    }
}

pub(crate) fn put_rule(
    conn: &mut Conn,
    rule: &Rule,
    now: Instant,
    untaken: &Untaken,
) -> Result<RulePut, Fail> {
    let c = encode_rule(rule)?;
    let Conn { client, stmts, .. } = conn;
    let mut tx = client.transaction();
    // One writer per rule name, so that two first `rule set`s do not race.
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('gapless rule'), hashtext($1))",
        &[&rule.name],
    )?;
    if let Some((id, stored)) = lock_rule(&mut tx, &rule.name)? {
        if stored.rule.def != rule.def {
            return Err(crate::rule::changed_definition(&stored.rule, rule).into());
        }
        if stored.rule.settings == rule.settings {
            return Ok(RulePut::Unchanged);
        }
        tx.execute(
            "UPDATE rules SET deadline = $2, target = $3, key_format = $4 WHERE id = $1",
            &[&id, &c.deadline, &c.target, &c.key_format],
        )?;
        bump_rules_version(&mut tx)?;
        tx.commit().map_err(Fail::Commit)?;
        return Ok(RulePut::Updated);
    }
    // The assets' locks, in name order as appends take them: an append to
    // them commits before this judging reads, or waits and finds the rule.
    let names: Vec<&str> = rule.def.assets().iter().map(String::as_str).collect();
    let locked: HashMap<String, i64> = tx
        .query(
            "SELECT name, id FROM assets WHERE name = ANY($1::text[]) \
             ORDER BY name COLLATE \"C\" FOR UPDATE",
            &[&names],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let mut asset_ids = Vec::with_capacity(names.len());
    for a in &names {
        asset_ids.push(
            *locked
                .get(*a)
                .ok_or_else(|| crate::rule::unknown_asset(a))?,
        );
    }
    let id: i64 = tx
        .query_one(
            "INSERT INTO rules (name, assets, every, tz, policy, from_us, until_us, deadline, \
             target, key_format, created_us, deadlines_us) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id",
            &[
                &c.name,
                &c.assets,
                &c.every,
                &c.tz,
                &c.policy,
                &c.from,
                &c.until,
                &c.deadline,
                &c.target,
                &c.key_format,
                &now.as_micros(),
            ],
        )?
        .get(0);
    tx.execute(
        "INSERT INTO rule_assets (asset_id, rule_id) SELECT unnest($1::bigint[]), $2",
        &[&asset_ids, &id],
    )?;
    let watch = Watch {
        id,
        rule: rule.clone(),
        assets: asset_ids,
    };
    let span = crate::rule::span(&rule.def);
    let reads: Vec<(i64, Interval)> = watch.assets.iter().map(|&a| (a, span)).collect();
    let coverage = read_coverage(&mut tx, stmts, &reads)?;
    let out = judge::initial(&watch, &coverage)?;
    let settled = write(&mut tx, stmts, &out, now, untaken)?;
    // Last: every `rule set` takes the version's row lock, held to commit,
    // so rules created at once (a deploy) wait for each other's commit
    // only, not for each other's judging.
    bump_rules_version(&mut tx)?;
    tx.commit().map_err(Fail::Commit)?;
    untaken.committed(settled);
    Ok(RulePut::Created {
        firings: out.firings.len() as u64,
    })
}

/// Count a change of the rules (their definitions or settings): a process
/// that keeps rules in memory reads them again when the count moved.
fn bump_rules_version(tx: &mut Transaction<'_>) -> Result<(), Fail> {
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('rules_version', '1') \
         ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text",
        &[],
    )?;
    Ok(())
}

pub(crate) fn rule(conn: &mut Conn, name: &str) -> Result<Option<StoredRule>, Fail> {
    let mut tx = conn.client.transaction();
    Ok(stored_rule(&mut tx, name, false)?.map(|(_, r)| r))
}

pub(crate) fn rules(conn: &mut Conn) -> Result<Vec<StoredRule>, Fail> {
    let rows = conn.client.query(
        concat!(
            "SELECT id, ",
            rule_columns!(),
            " FROM rules ORDER BY name COLLATE \"C\""
        ),
        &[],
    )?;
    rows.iter()
        .map(|r| Ok(decode_rule(rule_row(r).1)?))
        .collect()
}

/// A page of rules (listing.rs): names at or after $1 (and before $4 in
/// the bounded form), after $2, at most $3, in byte order (`COLLATE "C"`,
/// the `rules_name_bytes` index), each with the bytes of the asset lists
/// before it; a rule past the page's byte budget $5 comes without its
/// asset list (only to say that more follow).
macro_rules! rules_page {
    ($bound:literal) => {
        concat!(
            "SELECT id, name, CASE WHEN before < $5 THEN assets END, every, tz, policy, \
               from_us, until_us, deadline, target, key_format, created_us, before \
             FROM (SELECT id, ",
            rule_columns!(),
            ", coalesce(sum(octet_length(assets)) OVER (ORDER BY name COLLATE \"C\" \
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before \
             FROM rules WHERE name COLLATE \"C\" >= $1 ",
            $bound,
            " AND name COLLATE \"C\" > $2 ORDER BY name COLLATE \"C\" LIMIT $3) p \
             ORDER BY name COLLATE \"C\""
        )
    };
}

/// One page of rules in name order, ending at its limit or once the asset
/// lists reach the budget.
pub(crate) fn rules_page(conn: &mut Conn, q: &RuleQuery) -> Result<RulePage, Fail> {
    let limit = listing::limit(q.limit);
    let range = listing::name_range(q.prefix.as_deref(), q.after.as_deref());
    let n = limit as i64 + 1;
    let budget = listing::rule_bytes(q.bytes) as i64;
    let none: Option<String> = None;
    let (sql, hi): (&str, &(dyn ToSql + Sync)) = match &range.hi {
        Some(hi) => (rules_page!("AND name COLLATE \"C\" < $4"), hi),
        None => (rules_page!("AND $4::text IS NULL"), &none),
    };
    let s = conn.stmts.get(&mut conn.client, sql)?;
    let rows = conn
        .client
        .query(&s, &[&range.lo, &range.after, &n, hi, &budget])?;
    let mut out = Vec::new();
    let mut more = false;
    for r in &rows {
        let before: i64 = r.get(12);
        if before >= budget {
            more = true;
            break;
        }
        out.push(decode_rule(rule_row(r).1)?);
    }
    let (rules, next) = listing::page_of(out, limit, more, |r| r.rule.name.as_str());
    Ok(RulePage { rules, next })
}

pub(crate) fn delete_rule(conn: &mut Conn, name: &str) -> Result<bool, Fail> {
    let mut tx = conn.client.transaction();
    let Some((id, _)) = lock_rule(&mut tx, name)? else {
        return Ok(false);
    };
    for sql in [
        "DELETE FROM firings WHERE rule_id = $1",
        "DELETE FROM rule_windows WHERE rule_id = $1",
        "DELETE FROM rule_assets WHERE rule_id = $1",
        "DELETE FROM rules WHERE id = $1",
    ] {
        tx.execute(sql, &[&id])?;
    }
    bump_rules_version(&mut tx)?;
    tx.commit().map_err(Fail::Commit)?;
    Ok(true)
}

pub(crate) fn firings(conn: &mut Conn, q: &FiringQuery) -> Result<FiringPage, Fail> {
    let limit = match i64::try_from(q.limit) {
        Ok(0) | Err(_) => MAX_FIRINGS_PAGE,
        Ok(n) => n.min(MAX_FIRINGS_PAGE),
    };
    // One statement per order: the newest page reads downwards.
    macro_rules! page {
        ($order:literal) => {
            concat!(
                "SELECT ",
                firing_columns!(),
                " FROM firings f JOIN rules r ON r.id = f.rule_id \
                 WHERE f.seq > $1 AND ($2::text IS NULL OR r.name = $2) ORDER BY f.seq ",
                $order,
                " LIMIT $3"
            )
        };
    }
    let sql = if q.newest { page!("DESC") } else { page!("") };
    let rows = conn
        .client
        .query(sql, &[&q.after.unwrap_or(0), &q.rule, &limit])?;
    let firings = rows
        .iter()
        .map(|r| decode_firing(firing_row(r)))
        .collect::<Result<Vec<_>>>()?;
    Ok(FiringPage::of(firings, q, limit as usize))
}

/// A rule row with its `deadlines_us` (column 12).
const DEADLINE_COLUMNS: &str = concat!("SELECT id, ", rule_columns!(), ", deadlines_us");

/// Bring `cache` up to date with the ledger's rules: the version alone
/// when it did not move, else the rules with a deadline and the version in
/// one statement (one snapshot).
fn refresh_deadlines(
    client: &mut super::client::Client,
    cache: &mut DeadlineCache,
) -> Result<(), Fail> {
    const VERSION: &str = "SELECT value FROM meta WHERE key = 'rules_version'";
    let version: String = client
        .query_opt(VERSION, &[])?
        .map_or_else(|| "0".to_string(), |r| r.get(0));
    if cache.is_current(&version) {
        return Ok(());
    }
    let rows = client.query(
        &format!("{DEADLINE_COLUMNS}, ({VERSION}) FROM rules WHERE deadline IS NOT NULL"),
        &[],
    )?;
    // With no rule to read the version beside, the one read before stands:
    // older or the same, so the next pass reads again if it moved.
    let version = rows
        .first()
        .and_then(|r| r.get::<_, Option<String>>(13))
        .unwrap_or(version);
    let rules = rows
        .iter()
        .map(|r| {
            let (id, row) = rule_row(r);
            Ok((id, decode_rule(row)?.rule, r.get::<_, i64>(12)))
        })
        .collect::<Result<Vec<_>>>()?;
    cache.load(version, rules);
    Ok(())
}

/// Judge the deadlines that passed by `now` (see the SQLite backend): only
/// the rules whose next deadline is due (`conn`'s cache) are locked, read
/// and written, all of them in a few round trips; when none is, nothing is
/// but the version read.
pub(crate) fn judge_deadlines(
    conn: &mut Conn,
    now: Instant,
    untaken: &Untaken,
) -> Result<u64, Fail> {
    let Conn {
        client,
        stmts,
        watches: cache,
    } = conn;
    let deadlines = &mut cache.deadlines;
    refresh_deadlines(client, deadlines)?;
    let due = deadlines.due(now);
    if due.is_empty() {
        return Ok(0);
    }
    let mut tx = client.transaction();
    // The rules' assets first, as appends lock them: a rule of one asset
    // is judged under its asset's lock alone (# Concurrency).
    tx.execute(LOCK_ASSETS_OF_RULES, &[&due])?;
    // Every replica judges deadlines: the rule locks (name order, as
    // appends take them) make each pass once, and the rows read under them
    // say how far each rule was judged.
    let rows = tx.query(
        &format!(
            "{DEADLINE_COLUMNS} FROM rules WHERE id = ANY($1::bigint[]) AND deadline IS NOT NULL \
             ORDER BY name COLLATE \"C\" FOR UPDATE"
        ),
        &[&due],
    )?;
    let judged_up_to: Vec<i64> = rows.iter().map(|r| r.get(12)).collect();
    let watches = watches(&mut tx, rows, &mut IdMap::default())?;
    let mut passes = Vec::with_capacity(watches.len());
    let (mut runs, mut state_reads) = (Vec::new(), Vec::new());
    for (w, &up_to) in watches.iter().zip(&judged_up_to) {
        let pass = crate::rule::deadline_pass(&w.rule, up_to, now, DEADLINE_WINDOWS_PER_PASS)?;
        if let Some(range) = pass.as_ref().and_then(crate::rule::DeadlinePass::hull) {
            let (lo, hi) = (range.start().as_micros(), range.end().as_micros());
            runs.extend(w.assets.iter().map(|&a| (a, lo, hi)));
            state_reads.extend(pass.iter().flat_map(|p| StateRead::of(w.id, &p.windows)));
        }
        passes.push(pass);
    }
    // The coverage and window states of every due rule in one round trip.
    let (stored, states) = if state_reads.is_empty() {
        (StoredRuns::default(), States::new())
    } else {
        runs.sort_unstable();
        read_for_judging(&mut tx, stmts, &runs, &state_reads)?
    };
    let coverage = run_sets(stored)?;
    let mut out = Outcome::default();
    let (mut ids, mut ups) = (Vec::new(), Vec::new());
    for (w, pass) in watches.iter().zip(&passes) {
        let Some(pass) = pass else { continue };
        if !pass.windows.is_empty() {
            out.extend(judge::late(w, &pass.windows, &coverage, &states)?);
        }
        ids.push(w.id);
        ups.push(pass.judged_up_to.as_micros());
    }
    let fired = out.firings.len() as u64;
    let settled = write(&mut tx, stmts, &out, now, untaken)?;
    if !out.records.is_empty() {
        // Appends on other connections that know these states learn here
        // that they changed.
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('windows_version', '1') \
             ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text",
            &[],
        )?;
    }
    if !ids.is_empty() {
        tx.execute(
            "UPDATE rules r SET deadlines_us = v.up_to \
             FROM unnest($1::bigint[], $2::bigint[]) AS v(id, up_to) WHERE r.id = v.id",
            &[&ids, &ups],
        )?;
    }
    tx.commit().map_err(Fail::Commit)?;
    untaken.committed(settled);
    // Only what was committed moves the cache.
    for id in due {
        deadlines.forget(id);
    }
    for (w, (pass, up_to)) in watches.iter().zip(passes.iter().zip(judged_up_to)) {
        let up_to = pass.as_ref().map_or(up_to, |p| p.judged_up_to.as_micros());
        deadlines.judged(w.id, &w.rule, up_to);
    }
    Ok(fired)
}

pub(crate) fn ledger_id(conn: &mut Conn) -> Result<String, Fail> {
    let row = conn
        .client
        .query_opt("SELECT value FROM meta WHERE key = 'ledger_id'", &[])?;
    match row {
        Some(r) => Ok(r.get(0)),
        None => Err(StoreError::fault("the ledger has no id (table meta)").into()),
    }
}

/// Lease up to `limit` due firings to `owner`: rows another deliverer is
/// claiming at this moment are skipped (`SKIP LOCKED`), and a row leased
/// since this statement's snapshot is checked again after its lock, so no
/// two deliverers hold one firing.
pub(crate) fn claim_deliveries(
    conn: &mut Conn,
    owner: &str,
    now: Instant,
    lease: std::time::Duration,
    limit: usize,
) -> Result<Vec<crate::Firing>, Fail> {
    let limit = limit.clamp(1, crate::rule::MAX_CLAIM) as i64;
    let until = crate::rule::lease_end(now, lease);
    let rows = conn.client.query(
        concat!(
            "WITH c AS (SELECT seq, lease_owner IS NOT NULL AS reclaimed FROM firings WHERE state = 1 \
               AND (next_try_us IS NULL OR next_try_us <= $2) \
               AND (lease_until_us IS NULL OR lease_until_us <= $2) \
               ORDER BY seq LIMIT $4 FOR UPDATE SKIP LOCKED), \
             u AS (UPDATE firings f SET lease_owner = $1, lease_until_us = $3 FROM c \
               WHERE f.seq = c.seq RETURNING f.*) \
             SELECT ",
            firing_columns!(),
            ", c.reclaimed FROM u f JOIN c ON c.seq = f.seq JOIN rules r ON r.id = f.rule_id \
             ORDER BY f.seq"
        ),
        &[&owner, &now.as_micros(), &until, &limit],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut f = decode_firing(firing_row(r))?;
        f.delivery.reclaimed = r.get(13);
        out.push(f);
    }
    Ok(out)
}

/// Mark delivered unsent every due firing a target does not take, in one
/// statement: the targets and the kinds they take (as bit sets) go in as
/// two arrays; rows another deliverer is claiming at this moment are left
/// to it (`SKIP LOCKED`).
pub(crate) fn skip_deliveries(
    conn: &mut Conn,
    now: Instant,
    takes: &[crate::TargetKinds<'_>],
) -> Result<u64, Fail> {
    if takes.is_empty() {
        return Ok(0);
    }
    let names: Vec<&str> = takes.iter().map(|t| t.target).collect();
    let masks: Vec<i64> = takes.iter().map(|t| t.mask()).collect();
    let skipped = crate::DeliveryOutcome::Skipped;
    let c = skipped.columns();
    let n = conn.client.execute(
        "UPDATE firings f SET state = $4, attempts = f.attempts + $5, last_error = NULL, \
         next_try_us = NULL, lease_owner = NULL, lease_until_us = NULL \
         FROM (SELECT s.seq FROM firings s \
               JOIN unnest($2::text[], $3::bigint[]) AS t(name, mask) ON s.target = t.name \
               WHERE s.state = 1 AND (s.next_try_us IS NULL OR s.next_try_us <= $1) \
               AND (s.lease_until_us IS NULL OR s.lease_until_us <= $1) \
               AND ((t.mask >> s.kind::int) & 1) = 0 \
               FOR UPDATE OF s SKIP LOCKED) c \
         WHERE f.seq = c.seq",
        &[&now.as_micros(), &names, &masks, &c.state, &c.add_attempts],
    )?;
    Ok(n)
}

pub(crate) fn finish_delivery(
    conn: &mut Conn,
    seq: i64,
    owner: &str,
    outcome: &crate::DeliveryOutcome,
) -> Result<bool, Fail> {
    let c = outcome.columns();
    let n = conn.client.execute(
        "UPDATE firings SET state = $3, attempts = attempts + $4, last_error = $5, \
         next_try_us = $6, lease_owner = NULL, lease_until_us = NULL \
         WHERE seq = $1 AND lease_owner = $2 AND state = 1",
        &[
            &seq,
            &owner,
            &c.state,
            &c.add_attempts,
            &c.last_error,
            &c.next_try,
        ],
    )?;
    Ok(n == 1)
}

pub(crate) fn retry_failed(conn: &mut Conn, rule: Option<&str>) -> Result<u64, Fail> {
    let n = conn.client.execute(
        "UPDATE firings SET state = 1, attempts = 0, next_try_us = NULL, \
         lease_owner = NULL, lease_until_us = NULL \
         WHERE state = 3 AND ($1::text IS NULL OR rule_id = (SELECT id FROM rules WHERE name = $1))",
        &[&rule],
    )?;
    Ok(n)
}
