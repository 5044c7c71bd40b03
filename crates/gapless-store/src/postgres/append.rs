//! Appends and declarations: everything that writes.
//!
//! One append, or one group of batches (the server's group commit), is one
//! transaction (read committed) of two round trips, whatever the number of
//! batches and assets, so that the assets stay locked briefly. Each round
//! trip sends its statements together (see `client.rs`); the server still
//! runs them one after the other, each with its own snapshot.
//!
//! 1. First round trip ([`lock_and_read`]), with the `BEGIN`:
//!    - the assets of the group are locked (`SELECT ... FOR UPDATE`, in name
//!      order, so that writers never deadlock on them); the locks serialise
//!      appends per asset until commit;
//!    - the ledger's rules version is read: when it is the one of the
//!      rules this connection keeps, those say which rules watch the
//!      assets (SPEC §7), and the ones of several assets are locked (a rule
//!      of one asset is guarded by its asset's lock, see `rules.rs`);
//!    - the stored events with the group's `(asset, id)` keys and the
//!      coverage runs that touch the hull of each asset's events (adjacent
//!      ones included) are read in one statement, once the locks are held;
//!    - when the rules this connection keeps say that the group will be
//!      judged ([`super::rules::Prediction`]), the runs are read over the
//!      judged windows too, and the windows' recorded states with them.
//!
//!    Missing assets are created, and the statements sent again (a rare
//!    case). An asset created here that ends up with no event (its batch
//!    failed) is removed again before commit.
//! 2. The batches are walked in order: an id already stored, in an earlier
//!    batch or earlier in the batch with the same content
//!    ([`NewEvent::same_content`]) is a duplicate (counted, not stored),
//!    other content a conflict (that batch stores nothing; the others go
//!    on). The new events are applied to the runs ([`crate::runs`]), and the
//!    rules judged on what was read. When the version moved (another
//!    process changed the rules), the rules are read again, those of
//!    several assets locked then, and judging reads again (a round trip
//!    or three more).
//! 3. Second round trip: one statement writes it all, sent with the
//!    `COMMIT` (`synchronous_commit = on`: durable on return): the new
//!    events (sequence numbers drawn from `events_seq` in batch order while
//!    the locks are held, so per asset they grow in commit order; big
//!    groups go first by `COPY BINARY`, grouped by asset), the runs that changed (deleted,
//!    updated, inserted), each asset's event count, longest event and event
//!    hull, and what judging changed.

use std::collections::{HashMap, HashSet};

use gapless_core::{EventKind, Instant, NewEvent};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Row;

use super::client::{CommitError, Transaction};
use super::error::Fail;
use super::known::{KnownStates, StateReads};
use super::pool::{Conn, Stmts};
use super::row;
use crate::codec::{decode_content, encode, Encoded};
use crate::delta::AssetDelta;
use crate::rule::Untaken;
use crate::runs::RunChanges;
use crate::IdMap;
use crate::{Appended, Result, StoreError};

/// From this many new events on, they are sent with `COPY BINARY` (measured:
/// about 1.5 times the rate of one array insert at 100,000 events, and no
/// slower at 500).
const COPY_FROM: usize = 256;

/// Only missing names reach the insert, so that existing assets do not use
/// up identity values. The ids of the assets it created.
const ENSURE_ASSETS: &str = "INSERT INTO assets (name) \
     SELECT n FROM unnest($1::text[]) AS u(n) \
     WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.name = u.n) \
     ORDER BY n COLLATE \"C\" \
     ON CONFLICT (name) DO NOTHING RETURNING id";
/// Assets this transaction created for batches that failed.
const DROP_UNUSED_ASSETS: &str = "DELETE FROM assets WHERE id = ANY($1::bigint[])";
const LOCK_ASSETS: &str = "SELECT id, name, last_n FROM assets WHERE name = ANY($1::text[]) \
     ORDER BY name COLLATE \"C\" FOR UPDATE";
/// $1 numbers drawn from the event sequence, as one array: one value to
/// read, not a row each.
const NEXT_SEQS: &str =
    "SELECT array_agg(nextval('events_seq')) FROM generate_series(1, $1::bigint)";
const COPY_EVENTS: &str = "COPY events \
     (seq, asset_id, id, start_us, end_us, n, detail, received_at) FROM STDIN (FORMAT binary)";
const DECLARE: &str = "INSERT INTO assets (name, key_span, tz) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET key_span = EXCLUDED.key_span, tz = EXCLUDED.tz";

/// Refuse what PostgreSQL text cannot hold (a NUL character), naming the
/// event, before any work.
pub(crate) fn check_batch(batch: &[NewEvent]) -> Result<()> {
    for (index, ev) in batch.iter().enumerate() {
        let nul = |s: Option<&str>| s.is_some_and(|s| s.contains('\0'));
        let field = if ev.asset.contains('\0') {
            "asset"
        } else if nul(ev.id.as_deref()) {
            "id"
        } else if nul(ev.extra.as_deref()) {
            "extra"
        } else {
            continue;
        };
        return Err(StoreError::Invalid(format!(
            "event {index}: {field} contains a NUL character, which the PostgreSQL ledger cannot store"
        )));
    }
    Ok(())
}

/// The stored content of a row of [`RUNS_AND_STORED`] (`part` 0), for
/// [`NewEvent::same_content`].
fn stored_content(r: &Row) -> Result<NewEvent> {
    let c = row::content(r.try_get(4)?, r.try_get(5)?)?;
    decode_content(
        r.try_get(2)?,
        r.try_get(3)?,
        c.kind,
        c.detail.extra,
        c.detail.produced_at,
    )
}

/// The new events of a batch as columns.
#[derive(Default)]
struct Columns<'a> {
    seq: Vec<i64>,
    asset_id: Vec<i64>,
    id: Vec<Option<&'a str>>,
    start: Vec<i64>,
    end: Vec<i64>,
    /// Each event's number among its asset's events, signed by its kind
    /// (`row.rs`).
    n: Vec<i32>,
    /// Its `produced_at` and `extra` (`row.rs`).
    detail: Vec<Option<Vec<u8>>>,
}

impl<'a> Columns<'a> {
    /// Columns with room for `n` events, allocated once.
    fn with_capacity(n: usize) -> Self {
        Columns {
            seq: Vec::new(),
            asset_id: Vec::with_capacity(n),
            id: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            n: Vec::with_capacity(n),
            detail: Vec::with_capacity(n),
        }
    }

    /// One more event of asset `asset_id`, its `number`th, of kind `kind`,
    /// stored as `c`.
    fn push(&mut self, asset_id: i64, number: i32, kind: EventKind, c: &Encoded<'a>) {
        self.asset_id.push(asset_id);
        self.n.push(row::signed_number(number, kind));
        self.id.push(c.id);
        self.start.push(c.start);
        self.end.push(c.end);
        self.detail.push(row::detail(c.extra, c.produced_at));
    }
}

pub(crate) fn append(
    conn: &mut Conn,
    batch: &[NewEvent],
    received_at: Instant,
    untaken: &Untaken,
    kept: &Known,
) -> Result<Appended, Fail> {
    Ok(append_many(conn, &[batch], received_at, untaken, kept)?
        .pop()
        .expect("one answer per batch")?)
}

/// Several independent batches in one transaction (one durable commit): a
/// batch that fails (a conflict) stores nothing, the others are stored.
pub(crate) fn append_many(
    conn: &mut Conn,
    batches: &[&[NewEvent]],
    received_at: Instant,
    untaken: &Untaken,
    kept: &Known,
) -> Result<Vec<Result<Appended>>, Fail> {
    let Conn {
        client,
        stmts,
        watches,
    } = conn;
    append_group(
        client.seeking_transaction(),
        stmts,
        watches,
        batches,
        received_at,
        untaken,
        kept,
    )
}

/// The window states a store's appends know, shared by its connections.
type Known = std::sync::Mutex<KnownStates>;

fn known_states(kept: &Known) -> std::sync::MutexGuard<'_, KnownStates> {
    // A panic while it was held left it whole or emptied: either holds.
    kept.lock().unwrap_or_else(|e| e.into_inner())
}

/// The assets of a group, locked, and what was read once they were.
struct Locked {
    /// Their ids by name.
    id_of: HashMap<String, i64>,
    /// The number of each one's last event (`assets.last_n`) by id.
    last_n: IdMap<i64, i32>,
    /// The ids of those this transaction created.
    created: Vec<i64>,
    /// The rows of [`super::rules::RULES_VERSION`].
    rules: Vec<Row>,
    /// The rows of [`RUNS_AND_STORED`].
    stored: Vec<Row>,
    /// The rows of [`super::rules::WINDOW_STATES`] for the states asked.
    states: Vec<Row>,
}

/// The group's `(asset name, id)` keys and, per asset name, the hull of
/// all its events.
struct Keys<'b> {
    assets: Vec<&'b str>,
    ids: Vec<&'b str>,
    hull_assets: Vec<&'b str>,
    hull_lo: Vec<i64>,
    hull_hi: Vec<i64>,
}

/// What an append expects to judge ([`super::rules::Prediction`]): the
/// rules of several assets to lock, and the recorded window states to read.
#[derive(Default)]
struct Expected<'p> {
    lock: &'p [i64],
    states: Option<&'p StateReads>,
}

/// Lock the assets `names` until the end of the transaction (their rows, in
/// name order), read the rules version, lock the rules `expected` of
/// several assets, and read the stored events of the keys, the coverage
/// runs of the hulls and the `expected` window states: up to five
/// statements sent with the transaction's `BEGIN` in one round trip (each
/// runs after the one before, so the reads see what the writers before
/// this one committed). Missing assets are created then, and the
/// statements sent again (rare: two round trips more).
fn lock_and_read(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    names: &[&str],
    keys: &Keys<'_>,
    expected: &Expected<'_>,
) -> Result<Locked, Fail> {
    let lock = stmts.get(tx, LOCK_ASSETS)?;
    let rules = stmts.get(tx, super::rules::RULES_VERSION)?;
    let lock_rules = stmts.get(tx, super::rules::LOCK_RULES)?;
    let read = stmts.get(tx, RUNS_AND_STORED)?;
    let lock_params: [&(dyn ToSql + Sync); 1] = [&expected.lock];
    let window_states = stmts.get(tx, super::rules::WINDOW_STATES_AND_AFTER)?;
    let (state_reads, probes) = expected
        .states
        .map_or((&[][..], &[][..]), |s| (&s.read[..], &s.after[..]));
    let [state_rule, state_lo, state_hi, state_rows] =
        super::rules::state_read_columns(state_reads);
    let (after_rule, after_hi): (Vec<i64>, Vec<i64>) = probes.iter().copied().unzip();
    let state_params: [&(dyn ToSql + Sync); 6] = [
        &state_rule,
        &state_lo,
        &state_hi,
        &state_rows,
        &after_rule,
        &after_hi,
    ];
    let read_params: [&(dyn ToSql + Sync); 5] = [
        &keys.hull_assets,
        &keys.hull_lo,
        &keys.hull_hi,
        &keys.assets,
        &keys.ids,
    ];
    type Ids = (HashMap<String, i64>, IdMap<i64, i32>);
    let ids = |rows: &[Row]| -> Result<Ids, Fail> {
        let mut out = (
            HashMap::with_capacity(rows.len()),
            IdMap::with_capacity_and_hasher(rows.len(), Default::default()),
        );
        for r in rows {
            out.0.insert(r.try_get(1)?, r.try_get(0)?);
            out.1.insert(r.try_get(0)?, r.try_get(2)?);
        }
        Ok(out)
    };
    let by_name: [&(dyn ToSql + Sync); 1] = [&names];
    let lock_and_read = |tx: &mut Transaction<'_>| {
        tx.run_seeks(async |c| {
            tokio::try_join!(
                biased;
                c.query(&lock, &by_name),
                c.query(&rules, &[]),
                async {
                    if expected.lock.is_empty() {
                        Ok(Vec::new())
                    } else {
                        c.query(&lock_rules, &lock_params).await
                    }
                },
                c.query(&read, &read_params),
                async {
                    if state_rule.is_empty() && after_rule.is_empty() {
                        Ok(Vec::new())
                    } else {
                        c.query(&window_states, &state_params).await
                    }
                },
            )
        })
    };
    let (locked, rules_rows, _, stored, states) = lock_and_read(tx)?;
    let (id_of, last_n) = ids(&locked)?;
    if id_of.len() == names.len() {
        return Ok(Locked {
            id_of,
            last_n,
            created: Vec::new(),
            rules: rules_rows,
            stored,
            states,
        });
    }
    // New assets: a deadlock with another writer creating them is retried
    // by the caller. Read again: another writer may have created and
    // written them since.
    let ensure = stmts.get(tx, ENSURE_ASSETS)?;
    let created = tx
        .query(&ensure, &[&names])?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    let (locked, rules_rows, _, stored, states) = lock_and_read(tx)?;
    let (id_of, last_n) = ids(&locked)?;
    Ok(Locked {
        id_of,
        last_n,
        created,
        rules: rules_rows,
        stored,
        states,
    })
}

/// The work of one batch, decided in memory before anything is written.
#[derive(Default)]
struct Pending<'a> {
    out: Appended,
    /// `(asset id, event)` of the new events, in batch order.
    events: Vec<(i64, &'a NewEvent)>,
    /// The keys this batch saw first.
    keys: Vec<(i64, &'a str)>,
}

/// Append `batches` in `tx` and commit: each atomic on its own (a batch
/// that fails stores nothing), the others stored in batch order. Two round
/// trips: [`lock_and_read`], then the one statement that writes everything
/// sent with the `COMMIT`; when rules watch the group, judging's reads
/// between them.
fn append_group(
    mut tx: Transaction<'_>,
    stmts: &mut Stmts,
    cache: &mut super::rules::WatchCache,
    batches: &[&[NewEvent]],
    received_at: Instant,
    untaken: &Untaken,
    kept: &Known,
) -> Result<Vec<Result<Appended>>, Fail> {
    let mut out: Vec<Result<Appended>> = batches
        .iter()
        .map(|b| check_batch(b).map(|()| Appended::default()))
        .collect();
    let ok: Vec<bool> = out
        .iter()
        .zip(batches)
        .map(|(o, b)| o.is_ok() && !b.is_empty())
        .collect();
    let valid = |i: usize| ok[i];
    let mut names: Vec<&str> = (0..batches.len())
        .filter(|&i| valid(i))
        .flat_map(|i| batches[i].iter().map(|e| e.asset.as_str()))
        .collect();
    if names.is_empty() {
        return Ok(out);
    }
    names.sort_unstable();
    names.dedup();
    // The rules this connection knows say what judging will read: it goes
    // with the first round trip, and holds if they are the rules locked.
    let prediction = super::rules::predict(
        cache,
        (0..batches.len())
            .filter(|&i| valid(i))
            .flat_map(|i| batches[i].iter()),
    );
    let (events, with_ids) = (0..batches.len())
        .filter(|&i| valid(i))
        .map(|i| {
            let ids = batches[i].iter().filter(|e| e.id.is_some()).count();
            (batches[i].len(), ids)
        })
        .fold((0, 0), |(n, k), (bn, bk)| (n + bn, k + bk));
    let keys = group_keys(
        batches,
        &valid,
        with_ids,
        prediction.as_ref().map_or(&[][..], |p| &p.reads),
    );
    // Of the window states judging needs, those this store knows are not
    // read (known.rs).
    let state_reads = prediction
        .as_ref()
        .map(|p| known_states(kept).split(&cache.at(&p.positions), p.plan.state_reads()));
    let expected = prediction
        .as_ref()
        .map_or_else(Expected::default, |p| Expected {
            lock: &p.multi,
            states: state_reads.as_ref(),
        });
    let Locked {
        id_of,
        mut last_n,
        created,
        rules,
        stored,
        states,
    } = lock_and_read(&mut tx, stmts, &names, &keys, &expected)?;
    drop((keys, expected));
    let predicted = match prediction {
        Some(p) if p.holds(&rules)? => Some((p.positions, p.plan)),
        _ => None,
    };
    let versions = super::rules::versions_of(&rules)?;
    // The rules on these assets as the ledger has them once the assets were
    // locked (SPEC §7: judged after each batch, in this transaction); those
    // of several assets locked too. When they are not the ones expected
    // (the version moved), they are read again, those of several assets
    // locked now, and judging reads again after that.
    // The window states this store knows of those rules hold if the rules'
    // assets, the rules and the deadline passes did not move since
    // (known.rs).
    let (watches, prefetched, keeping) = match (predicted, state_reads) {
        (Some((positions, plan)), Some(reads)) => {
            let (mut got, after) = super::rules::states_and_after(&states)?;
            let missing = {
                let mut k = known_states(kept);
                k.check(versions, &reads, &last_n);
                k.fill(&reads, &mut got)
            };
            super::rules::read_states(&mut tx, stmts, &missing, &mut got)?;
            let fresh = super::known::KnownStates::fresh(&reads, &got, &after);
            let locked_n = last_n.clone();
            (
                cache.at(&positions),
                Some((plan, got)),
                Some((reads, fresh, locked_n)),
            )
        }
        _ => {
            let watches = super::rules::watches_of(&mut tx, cache, &rules, &names)?;
            let several = super::rules::of_several_assets(&watches);
            if !several.is_empty() {
                let s = stmts.get(&mut tx, super::rules::LOCK_RULES)?;
                tx.query(&s, &[&several])?;
            }
            (watches, None, None)
        }
    };
    drop(states);
    let mut judged: Vec<super::rules::GroupBatch> = Vec::new();

    // The first event of each key: stored, or in an earlier (stored) batch,
    // or earlier in the batch. Sized once for every key the group can
    // hold: grown a doubling at a time, a map of a million keys is copied
    // whole some twenty times, into memory the kernel zeroes first.
    let mut runs = super::rules::StoredRuns::default();
    let mut firsts: Vec<((i64, String), NewEvent)> = Vec::new();
    for r in &stored {
        if r.try_get::<_, i16>(6)? == 1 {
            runs.entry(r.try_get(0)?)
                .or_default()
                .push((r.try_get(2)?, r.try_get(3)?));
        } else {
            firsts.push(((r.try_get(0)?, r.try_get(1)?), stored_content(r)?));
        }
    }
    drop(stored);
    for v in runs.values_mut() {
        v.sort_unstable();
    }
    let mut known: HashMap<(i64, &str), &NewEvent> =
        HashMap::with_capacity(firsts.len() + with_ids);
    known.extend(
        firsts
            .iter()
            .map(|((aid, id), ev)| ((*aid, id.as_str()), ev)),
    );

    // Walk the batches in order.
    let mut cols = Columns::with_capacity(events);
    let mut assets: Vec<AssetDelta> = Vec::new();
    let mut slot_of: IdMap<i64, usize> = IdMap::default();
    for (bi, batch) in batches.iter().enumerate() {
        if !valid(bi) {
            continue;
        }
        match walk(batch, &id_of, &mut known) {
            Ok(p) => {
                if !watches.is_empty() {
                    judged.push(group_batch(&p.events));
                }
                for (aid, ev) in p.events {
                    let slot = *slot_of.entry(aid).or_insert_with(|| {
                        assets.push(AssetDelta::new(aid));
                        assets.len() - 1
                    });
                    let c = encode(ev);
                    assets[slot].push(ev.kind, ev.interval, &c);
                    let n = last_n.entry(aid).or_default();
                    *n = n.checked_add(1).ok_or_else(|| {
                        Fail::Store(StoreError::Invalid(format!(
                            "asset {:?} holds {} events, the most a PostgreSQL ledger numbers",
                            ev.asset,
                            i32::MAX
                        )))
                    })?;
                    cols.push(aid, *n, ev.kind, &c);
                }
                out[bi] = Ok(p.out);
            }
            Err(failed) => {
                let (e, p) = *failed;
                // Forget what this batch saw first: it stores nothing.
                for (aid, id) in p.keys {
                    known.remove(&(aid, id));
                }
                out[bi] = Err(e);
            }
        }
    }
    drop(known);
    // Nothing of a failed batch is stored, not even an asset it named first.
    let unused: Vec<i64> = created
        .into_iter()
        .filter(|id| !slot_of.contains_key(id))
        .collect();
    if !unused.is_empty() {
        let s = stmts.get(&mut tx, DROP_UNUSED_ASSETS)?;
        tx.execute(&s, &[&unused])?;
    }
    if cols.asset_id.is_empty() {
        tx.commit().map_err(Fail::Commit)?;
        return Ok(out);
    }
    // With rules, judging has read with the first round trip what it
    // needs, or reads the runs again with its coverage.
    let stored = match prefetched {
        _ if watches.is_empty() => Stored::Read(runs),
        Some((plan, states)) => Stored::Judged {
            watches: watches.as_slice(),
            batches: judged.as_slice(),
            plan,
            runs,
            states,
        },
        None => Stored::Judge(watches.as_slice(), judged.as_slice()),
    };
    let written = write(tx, stmts, &mut cols, &assets, received_at, stored, untaken);
    let (settled, changes) = match written {
        Ok(w) => w,
        Err(e) => {
            // Written or not: what the store knew may be stale.
            known_states(kept).clear();
            return Err(e);
        }
    };
    if let Some((reads, fresh, locked_n)) = keeping {
        known_states(kept).committed(
            versions,
            &reads,
            fresh,
            changes.as_ref(),
            [&locked_n, &last_n],
        );
    }
    untaken.committed(settled);
    Ok(out)
}

/// The `(asset, id)` keys of the group's valid batches (each once) and,
/// per asset, the hull of all its events and of its range in `reads`
/// (judging's, predicted).
fn group_keys<'b>(
    batches: &[&'b [NewEvent]],
    valid: &dyn Fn(usize) -> bool,
    with_ids: usize,
    reads: &[(&'b str, i64, i64)],
) -> Keys<'b> {
    let mut keys: HashSet<(&str, &str)> = HashSet::with_capacity(with_ids);
    let mut hull: HashMap<&str, (i64, i64)> = HashMap::new();
    for (i, batch) in batches.iter().enumerate() {
        if !valid(i) {
            continue;
        }
        for ev in *batch {
            if let Some(id) = ev.id.as_deref() {
                keys.insert((&ev.asset, id));
            }
            let (s, e) = (
                ev.interval.start().as_micros(),
                ev.interval.end().as_micros(),
            );
            let h = hull.entry(&ev.asset).or_insert((s, e));
            *h = (h.0.min(s), h.1.max(e));
        }
    }
    for &(asset, s, e) in reads {
        let h = hull.entry(asset).or_insert((s, e));
        *h = (h.0.min(s), h.1.max(e));
    }
    // By asset: the seeks of one asset's ids then read its few pages of the
    // id index one after the other, not pages of every asset in turn.
    let mut keys: Vec<(&str, &str)> = keys.into_iter().collect();
    keys.sort_unstable();
    let (assets, ids) = keys.into_iter().unzip();
    let mut out = Keys {
        assets,
        ids,
        hull_assets: Vec::with_capacity(hull.len()),
        hull_lo: Vec::with_capacity(hull.len()),
        hull_hi: Vec::with_capacity(hull.len()),
    };
    for (asset, (lo, hi)) in hull {
        out.hull_assets.push(asset);
        out.hull_lo.push(lo);
        out.hull_hi.push(hi);
    }
    out
}

/// How [`write`] has the stored runs the new events touch.
enum Stored<'w> {
    /// Read already (a group no rule watches).
    Read(super::rules::StoredRuns),
    /// Read already, with what judging the locked watches needs: the runs
    /// (over the planned reads too) and the planned windows' states.
    Judged {
        watches: &'w [&'w crate::rule::judge::Watch],
        batches: &'w [super::rules::GroupBatch],
        plan: crate::rule::judge::Plan,
        runs: super::rules::StoredRuns,
        states: crate::rule::judge::States,
    },
    /// To be read with judging's coverage: the locked watches and the
    /// group's batches.
    Judge(
        &'w [&'w crate::rule::judge::Watch],
        &'w [super::rules::GroupBatch],
    ),
}

/// A batch's new events per asset, in batch order (for judging rules).
fn group_batch(events: &[(i64, &NewEvent)]) -> super::rules::GroupBatch {
    let mut out: super::rules::GroupBatch = Vec::new();
    let mut slot: IdMap<i64, usize> = IdMap::default();
    for &(aid, ev) in events {
        let i = *slot.entry(aid).or_insert_with(|| {
            out.push((aid, Vec::new()));
            out.len() - 1
        });
        out[i].1.push((ev.kind, ev.interval));
    }
    out
}

/// Decide one batch against what is known (stored or earlier): its new
/// events, or the conflict (with what it had added to `known`), boxed: the
/// rare case need not widen every result.
fn walk<'b>(
    batch: &'b [NewEvent],
    id_of: &HashMap<String, i64>,
    known: &mut HashMap<(i64, &'b str), &'b NewEvent>,
) -> Result<Pending<'b>, Box<(StoreError, Pending<'b>)>> {
    let mut p = Pending::default();
    p.events.reserve(batch.len());
    p.keys.reserve(batch.len());
    for (index, ev) in batch.iter().enumerate() {
        let Some(&aid) = id_of.get(&ev.asset) else {
            let e = StoreError::fault(format!("asset {:?} vanished during an append", ev.asset));
            return Err(Box::new((e, p)));
        };
        if let Some(id) = ev.id.as_deref() {
            match known.get(&(aid, id)) {
                Some(first) if first.same_content(ev) => {
                    p.out.duplicates += 1;
                    continue;
                }
                Some(_) => {
                    let e = StoreError::Conflict {
                        index,
                        asset: ev.asset.clone(),
                        id: id.to_string(),
                    };
                    return Err(Box::new((e, p)));
                }
                None => {
                    known.insert((aid, id), ev);
                    p.keys.push((aid, id));
                }
            }
        }
        p.out.accepted += 1;
        p.events.push((aid, ev));
    }
    Ok(p)
}

/// The two reads of a group: the stored runs that touch each `(asset name,
/// lo, hi)` of $1..$3 (rows with `part` 1: asset id, -, start, end), and
/// the stored events of the `(asset name, id)` keys of $4, $5 (`part` 0:
/// asset id, id, start, end, signed number, detail). The hulls are those
/// of all the group's events, not only of the new ones (which are known
/// only once the stored ids are): runs that no new event touches come back
/// unchanged from [`crate::runs::changes`].
///
/// Every access is an index seek driven by one element of the arrays
/// (`LATERAL ... OFFSET 0` keeps each subquery a scan parameterised by
/// it), so that its generic plan ([`Transaction::run_seeks`]) is right for
/// tables of any size. A stored id is sought by its hash (the index
/// `events_id_hash`) and compared in full on the row; `asset_id + 0` keeps
/// the other indexes, which lead with the asset, out of that seek (a
/// bitmap of all the asset's events beside the hash's one row).
const RUNS_AND_STORED: &str = concat!(
    "SELECT u.a, NULL::text, r.start_us, r.end_us, NULL::integer, NULL::bytea, \
     1::smallint AS part \
     FROM (SELECT s.id AS a, h.lo, h.hi \
       FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS h(name, lo, hi) \
       CROSS JOIN LATERAL (SELECT id FROM assets WHERE name = h.name OFFSET 0) AS s) AS u",
    runs_touching_lateral!(),
    " UNION ALL \
     SELECT s.id, k.id, e.start_us, e.end_us, e.n, e.detail, 0::smallint \
     FROM unnest($4::text[], $5::text[]) AS k(name, id) \
     CROSS JOIN LATERAL (SELECT id FROM assets WHERE name = k.name OFFSET 0) AS s \
     CROSS JOIN LATERAL (SELECT start_us, end_us, n, detail FROM events \
       WHERE hashtextextended(id, asset_id) = hashtextextended(k.id, s.id) \
       AND asset_id + 0 = s.id AND id = k.id OFFSET 0) AS e"
);

/// Everything a group writes, in one statement: the events (sequence
/// numbers drawn in array order), the coverage runs (deleted, changed and
/// new ones have distinct keys), the asset statistics; as CTEs over
/// $1..$20 ([`WRITE`]), which a group that fires extends with judging's
/// ([`judged_write_sql`]). An append's transaction is a seeking one
/// ([`super::client::Client::seeking_transaction`]): the joins of the
/// arrays with `coverage_runs` and `assets` are index seeks whatever the
/// tables' size when the connection planned them.
macro_rules! write_ctes {
    () => {
        "WITH ev AS ( \
       INSERT INTO events (seq, asset_id, id, start_us, end_us, n, detail, received_at) \
       SELECT nextval('events_seq'), a, i, st, en, nn, d, $7::bigint \
       FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::integer[], \
         $6::bytea[]) AS u(a, i, st, en, nn, d) \
     ), del AS ( \
       DELETE FROM coverage_runs c USING unnest($8::bigint[], $9::bigint[]) AS d(a, s) \
       WHERE c.asset_id = d.a AND c.start_us = d.s \
     ), upd AS ( \
       UPDATE coverage_runs c SET end_us = u.e \
       FROM unnest($10::bigint[], $11::bigint[], $12::bigint[]) AS u(a, s, e) \
       WHERE c.asset_id = u.a AND c.start_us = u.s \
     ), ins AS ( \
       INSERT INTO coverage_runs (asset_id, start_us, end_us) \
       SELECT a, s, e FROM unnest($13::bigint[], $14::bigint[], $15::bigint[]) AS u(a, s, e) \
     ), st AS ( \
       UPDATE assets SET event_count = event_count + u.n, last_n = last_n + u.n, \
       max_len_us = greatest(max_len_us, u.l), \
       min_start_us = least(coalesce(min_start_us, u.s), u.s), \
       max_end_us = greatest(coalesce(max_end_us, u.e), u.e), last_received_us = $7::bigint \
       FROM unnest($16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[]) \
         AS u(id, n, l, s, e) \
       WHERE assets.id = u.id \
     )"
    };
}
const WRITE: &str = concat!(write_ctes!(), " SELECT 1");
/// How many parameters [`write_ctes`] takes.
const WRITE_PARAMS: usize = 20;

/// [`WRITE`] and judging's writes in one statement: a group that fires
/// costs no round trip more than one that does not.
fn judged_write_sql() -> &'static str {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "{}, {} SELECT 1",
            write_ctes!(),
            super::rules::judging_ctes_after(WRITE_PARAMS)
        )
    });
    SQL.as_str()
}

/// Runs as `(asset, start, end)` columns.
#[derive(Default)]
struct RunCols {
    asset: Vec<i64>,
    start: Vec<i64>,
    end: Vec<i64>,
}

impl RunCols {
    fn push(&mut self, asset: i64, start: i64, end: i64) {
        self.asset.push(asset);
        self.start.push(start);
        self.end.push(end);
    }
}

/// Write the new events, the coverage runs they change and the assets'
/// statistics (assets locked), and commit; with watches in `stored` (the
/// locked watches and the group's batches), judge them first and write what
/// that changed in the same statement. How many firings it recorded
/// delivered unsent (`untaken`), and the window states it wrote.
fn write(
    mut tx: Transaction<'_>,
    stmts: &mut Stmts,
    cols: &mut Columns<'_>,
    assets: &[AssetDelta],
    received_at: Instant,
    stored: Stored<'_>,
    untaken: &Untaken,
) -> Result<(u64, Option<crate::rule::records::RunChanges>), Fail> {
    let received = received_at.as_micros();
    let ids: Vec<i64> = assets.iter().map(|a| a.id).collect();
    let los: Vec<i64> = assets.iter().map(|a| a.min_start).collect();
    let his: Vec<i64> = assets.iter().map(|a| a.max_end).collect();
    let hulls: Vec<(i64, i64, i64)> = assets
        .iter()
        .map(|a| (a.id, a.min_start, a.max_end))
        .collect();
    // The stored runs each asset's new events touch (read with judging's
    // coverage when rules watch the group: before the runs are written,
    // judging replays the batches on them). Judging what was read already
    // needs nothing of the events' COPY: with that many events, it is
    // worked out on a thread of its own while the server takes the COPY.
    let copied = cols.asset_id.len() >= COPY_FROM;
    let (mut stored, judged) = match stored {
        Stored::Read(runs) => {
            if copied {
                draw_and_copy(&mut tx, stmts, cols, received)?;
            }
            (runs, None)
        }
        Stored::Judged {
            watches,
            batches,
            plan,
            runs,
            states,
        } => {
            let judge = || super::rules::judge_read(watches, batches, plan, runs, states, &hulls);
            let (stored, out) = if copied {
                std::thread::scope(|scope| {
                    let judging = scope.spawn(judge);
                    let copy = draw_and_copy(&mut tx, stmts, cols, received);
                    let judged = judging
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    copy.and(judged.map_err(Fail::Store))
                })?
            } else {
                judge()?
            };
            (stored, Some(out).filter(|o| !o.is_empty()))
        }
        Stored::Judge(watches, batches) => {
            let (stored, out) =
                super::rules::read_and_judge(&mut tx, stmts, watches, batches, &hulls)?;
            if copied {
                draw_and_copy(&mut tx, stmts, cols, received)?;
            }
            (stored, Some(out).filter(|o| !o.is_empty()))
        }
    };
    // Deleted runs as `(asset, start)` columns.
    let (mut del_asset, mut del_start) = (Vec::new(), Vec::new());
    let (mut upd, mut ins) = (RunCols::default(), RunCols::default());
    // The assets whose overview inputs change with their runs.
    let mut changed: Vec<i64> = Vec::new();
    for a in assets {
        let runs = stored.remove(&a.id).unwrap_or_default();
        let RunChanges {
            deleted,
            updated,
            inserted,
        } = a.run_changes(&runs)?;
        if !(deleted.is_empty() && updated.is_empty() && inserted.is_empty()) {
            changed.push(a.id);
        }
        for s in deleted {
            del_asset.push(a.id);
            del_start.push(s);
        }
        for (s, e) in updated {
            upd.push(a.id, s, e);
        }
        for (s, e) in inserted {
            ins.push(a.id, s, e);
        }
    }

    // The events: in the statement, or by COPY (above) when many.
    let empty = Columns::default();
    let ev = if copied { &empty } else { &*cols };
    let counts: Vec<i64> = assets.iter().map(AssetDelta::count).collect();
    let lens: Vec<i64> = assets.iter().map(|a| a.max_len).collect();
    let judging = judged
        .as_ref()
        .map(|out| super::rules::JudgingColumns::new(out, received_at, untaken));
    if let Some(j) = &judging {
        j.delete_runs(&mut tx, stmts)?;
    }
    let s = stmts.get(
        &mut tx,
        if judging.is_some() {
            judged_write_sql()
        } else {
            WRITE
        },
    )?;
    let write_params: [&(dyn ToSql + Sync); WRITE_PARAMS] = [
        &ev.asset_id,
        &ev.id,
        &ev.start,
        &ev.end,
        &ev.n,
        &ev.detail,
        &received,
        &del_asset,
        &del_start,
        &upd.asset,
        &upd.start,
        &upd.end,
        &ins.asset,
        &ins.start,
        &ins.end,
        &ids,
        &counts,
        &lens,
        &los,
        &his,
    ];
    let judging_params = judging.as_ref().map(super::rules::JudgingColumns::params);
    let params: Vec<&(dyn ToSql + Sync)> = write_params
        .into_iter()
        .chain(judging_params.iter().flatten().map(|p| p.0))
        .collect();
    let done = if changed.is_empty() {
        tx.execute_and_commit(&s, &params)
    } else {
        let refresh = stmts.get(&mut tx, super::overview::REFRESH)?;
        let [week, runs] = super::overview::REFRESH_AFTER_IDS;
        tx.execute_two_and_commit((&s, &params), (&refresh, &[&changed, week, runs]))
    };
    done.map_err(|e| match e {
        CommitError::Statement(e) => Fail::Pg(e),
        CommitError::Commit(e) => Fail::Commit(e),
    })?;
    Ok(judging.map_or((0, None), |j| (j.settled(), Some(j.into_changes()))))
}

/// The events of `cols` numbered from the event sequence and sent by COPY.
fn draw_and_copy(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    cols: &mut Columns<'_>,
    received: i64,
) -> Result<(), Fail> {
    let n = cols.asset_id.len();
    let s = stmts.get(tx, NEXT_SEQS)?;
    let mut seqs: Vec<i64> = tx.query_one(&s, &[&(n as i64)])?.try_get(0)?;
    seqs.sort_unstable();
    if seqs.len() != n {
        return Err(Fail::Store(StoreError::fault(
            "the event sequence returned too few numbers",
        )));
    }
    cols.seq = seqs;
    copy_events(tx, cols, received)
}

fn copy_events(tx: &mut Transaction<'_>, cols: &Columns<'_>, received: i64) -> Result<(), Fail> {
    const TYPES: [Type; 8] = [
        Type::INT8,
        Type::INT8,
        Type::TEXT,
        Type::INT8,
        Type::INT8,
        Type::INT4,
        Type::BYTEA,
        Type::INT8,
    ];
    // Grouped by asset (each asset's events in sequence order): every
    // index of `events` leads with the asset, so a group that interleaves
    // many assets would otherwise send each row to another leaf page of
    // each index, more pages than the buffer cache holds; grouped, each
    // asset's rows go to its few leaf pages one after the other.
    let mut order: Vec<usize> = (0..cols.seq.len()).collect();
    order.sort_by_key(|&i| cols.asset_id[i]);
    let rows = order.into_iter().map(|i| -> [&(dyn ToSql + Sync); 8] {
        [
            &cols.seq[i],
            &cols.asset_id[i],
            &cols.id[i],
            &cols.start[i],
            &cols.end[i],
            &cols.n[i],
            &cols.detail[i],
            &received,
        ]
    });
    tx.copy_in_binary(COPY_EVENTS, &TYPES, rows)?;
    Ok(())
}

pub(crate) fn declare_asset(
    conn: &mut Conn,
    asset: &str,
    span: Option<&str>,
    tz: &str,
) -> Result<(), Fail> {
    let s = conn.stmts.get(&mut conn.client, DECLARE)?;
    conn.client.execute(&s, &[&asset, &span, &tz])?;
    Ok(())
}
