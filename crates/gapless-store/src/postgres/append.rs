//! Appends and declarations: everything that writes.
//!
//! One append is one transaction (read committed):
//!
//! 1. The batch's assets are created when missing and their rows locked
//!    (`FOR UPDATE`), both in name order so that writers never deadlock on
//!    them. The locks serialise appends per asset until commit.
//! 2. The stored events with the batch's `(asset, id)` keys are read in one
//!    statement; the batch is then walked in order: an id already stored or
//!    earlier in the batch with the same content
//!    ([`NewEvent::same_content`]) is a duplicate (counted, not stored),
//!    other content a conflict (rolled back, nothing stored).
//! 3. Sequence numbers for the new events are drawn from `events_seq` while
//!    the locks are held (so per asset they grow in commit order), and the
//!    events inserted in one statement (arrays, or `COPY BINARY` for big
//!    batches).
//! 4. Per asset: the coverage runs that touch the hull of the batch's new
//!    events (adjacent ones included) are loaded, the new events applied in
//!    order, and the touched runs replaced by the result; the event count,
//!    longest event and event hull updated.
//! 5. Commit (`synchronous_commit = on`: durable on return).
//!
//! `append_many` (the server's group commit) runs several batches in one
//! transaction, a savepoint each, after locking the assets of all of them.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use gapless_core::{EventKind, Instant, Interval, NewEvent};
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::Type;
use postgres::Transaction;

use super::{corrupt, Conn, Fail, Stmts};
use crate::runs::{rebuild, Rebuilt};
use crate::{Appended, Result, StoreError};

/// From this many new events on, they are sent with `COPY BINARY` (measured:
/// about 1.5 times the rate of one array insert at 100,000 events, and no
/// slower at 500).
const COPY_FROM: usize = 256;

/// Only missing names reach the insert, so that existing assets do not use
/// up identity values.
const ENSURE_ASSETS: &str = "INSERT INTO assets (name) \
     SELECT n FROM unnest($1::text[]) AS u(n) \
     WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.name = u.n) \
     ORDER BY n COLLATE \"C\" \
     ON CONFLICT (name) DO NOTHING";
const LOCK_ASSETS: &str = "SELECT id, name FROM assets WHERE name = ANY($1::text[]) \
     ORDER BY name COLLATE \"C\" FOR UPDATE";
const STORED_BY_ID: &str = "SELECT e.asset_id, e.id, e.start_us, e.end_us, e.kind, e.extra, \
     e.produced_at FROM events e \
     JOIN unnest($1::bigint[], $2::text[]) AS k(asset_id, id) \
     ON e.asset_id = k.asset_id AND e.id = k.id";
const NEXT_SEQS: &str = "SELECT nextval('events_seq') FROM generate_series(1, $1::bigint)";
const INSERT_EVENTS: &str = "INSERT INTO events \
     (seq, asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     SELECT s, a, i, st, en, k, x, p, $9::bigint FROM unnest($1::bigint[], $2::bigint[], \
     $3::text[], $4::bigint[], $5::bigint[], $6::smallint[], $7::text[], $8::bigint[]) \
     AS u(s, a, i, st, en, k, x, p)";
const COPY_EVENTS: &str = "COPY events \
     (seq, asset_id, id, start_us, end_us, kind, extra, produced_at, received_at) \
     FROM STDIN (FORMAT binary)";
const RUN_AT_OR_BEFORE: &str = "SELECT start_us FROM coverage_runs \
     WHERE asset_id = $1 AND start_us <= $2 ORDER BY start_us DESC LIMIT 1";
const RUNS_FROM: &str = "SELECT start_us, end_us FROM coverage_runs \
     WHERE asset_id = $1 AND start_us >= $2 AND start_us <= $3 ORDER BY start_us";
const DELETE_RUNS: &str =
    "DELETE FROM coverage_runs WHERE asset_id = $1 AND start_us >= $2 AND start_us <= $3";
const INSERT_RUNS: &str = "INSERT INTO coverage_runs (asset_id, start_us, end_us) \
     SELECT $1, s, e FROM unnest($2::bigint[], $3::bigint[]) AS u(s, e)";
const UPDATE_ASSET: &str = "UPDATE assets SET event_count = event_count + $2, \
     max_len_us = greatest(max_len_us, $3), \
     min_start_us = least(coalesce(min_start_us, $4), $4), \
     max_end_us = greatest(coalesce(max_end_us, $5), $5) \
     WHERE id = $1";
const DECLARE: &str = "INSERT INTO assets (name, key_span, tz) VALUES ($1, $2, $3) \
     ON CONFLICT (name) DO UPDATE SET key_span = EXCLUDED.key_span, tz = EXCLUDED.tz";

/// The stored integer of a kind.
pub(crate) fn kind_code(kind: EventKind) -> i16 {
    match kind {
        EventKind::Landed => 0,
        EventKind::Retracted => 1,
    }
}

/// The kind of a stored integer.
pub(crate) fn kind_of(code: i16) -> Result<EventKind> {
    match code {
        0 => Ok(EventKind::Landed),
        1 => Ok(EventKind::Retracted),
        _ => Err(corrupt(format_args!("event kind {code}"))),
    }
}

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

/// The stored event of a row of [`STORED_BY_ID`], for
/// [`NewEvent::same_content`] (asset and id are not compared there).
fn stored_content(r: &postgres::Row) -> Result<NewEvent> {
    let produced: Option<i64> = r.try_get(6)?;
    Ok(NewEvent {
        asset: String::new(),
        id: None,
        interval: Interval::from_micros(r.try_get(2)?, r.try_get(3)?)
            .map_err(|_| corrupt("event interval"))?,
        kind: kind_of(r.try_get(4)?)?,
        extra: r.try_get(5)?,
        produced_at: produced
            .map(|p| Instant::from_micros(p).map_err(|_| corrupt("event produced_at")))
            .transpose()?,
    })
}

/// What one append does to one asset.
struct AssetBatch {
    id: i64,
    /// The new (not duplicate) events, in batch order.
    events: Vec<(EventKind, Interval)>,
    max_len: i64,
    min_start: i64,
    max_end: i64,
}

/// The new events of a batch as columns.
#[derive(Default)]
struct Columns<'a> {
    seq: Vec<i64>,
    asset_id: Vec<i64>,
    id: Vec<Option<&'a str>>,
    start: Vec<i64>,
    end: Vec<i64>,
    kind: Vec<i16>,
    extra: Vec<Option<&'a str>>,
    produced_at: Vec<Option<i64>>,
}

pub(crate) fn append(
    conn: &mut Conn,
    batch: &[NewEvent],
    received_at: Instant,
) -> Result<Appended, Fail> {
    let Conn { client, stmts } = conn;
    let mut tx = client.transaction()?;
    let ids = lock_assets(&mut tx, stmts, batch.iter().map(|e| e.asset.as_str()))?;
    let out = append_locked(&mut tx, stmts, &ids, batch, received_at)?;
    tx.commit().map_err(Fail::Commit)?;
    Ok(out)
}

/// Several independent batches in one transaction (one durable commit), each
/// in its own savepoint: a batch that fails is rolled back alone. The assets
/// of all batches are locked first, in name order, so that groups never
/// deadlock with each other.
pub(crate) fn append_many(
    conn: &mut Conn,
    batches: &[&[NewEvent]],
    received_at: Instant,
) -> Result<Vec<Result<Appended>>, Fail> {
    let Conn { client, stmts } = conn;
    let mut tx = client.transaction()?;
    // (A name PostgreSQL cannot store fails its batch's check below.)
    let names = batches
        .iter()
        .flat_map(|b| b.iter())
        .map(|e| e.asset.as_str())
        .filter(|n| !n.contains('\0'));
    let ids = lock_assets(&mut tx, stmts, names)?;
    let mut out = Vec::with_capacity(batches.len());
    for batch in batches {
        if batch.is_empty() {
            out.push(Ok(Appended::default()));
            continue;
        }
        if let Err(e) = check_batch(batch) {
            out.push(Err(e));
            continue;
        }
        let mut sp = tx.savepoint("gapless_batch")?;
        match append_locked(&mut sp, stmts, &ids, batch, received_at) {
            Ok(a) => {
                sp.commit()?;
                out.push(Ok(a));
            }
            Err(Fail::Store(e)) => {
                sp.rollback()?;
                out.push(Err(e));
            }
            Err(e) => return Err(e),
        }
    }
    tx.commit().map_err(Fail::Commit)?;
    Ok(out)
}

/// Create the assets named by `names` when missing and lock their rows until
/// the end of the transaction, both in name order: their ids by name.
fn lock_assets<'n>(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    names: impl Iterator<Item = &'n str>,
) -> Result<HashMap<String, i64>, Fail> {
    let mut names: Vec<&str> = names.collect();
    names.sort_unstable();
    names.dedup();
    let s = stmts.get(tx, ENSURE_ASSETS)?;
    tx.execute(&s, &[&names])?;
    let s = stmts.get(tx, LOCK_ASSETS)?;
    Ok(tx
        .query(&s, &[&names])?
        .iter()
        .map(|r| (r.get::<_, String>(1), r.get::<_, i64>(0)))
        .collect())
}

/// One batch, its assets locked: idempotency, events, coverage, statistics.
fn append_locked(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    id_of: &HashMap<String, i64>,
    batch: &[NewEvent],
    received_at: Instant,
) -> Result<Appended, Fail> {
    let asset_id = |name: &str| -> Result<i64, Fail> {
        id_of.get(name).copied().ok_or_else(|| {
            Fail::Store(StoreError::Backend(format!(
                "asset {name:?} vanished during an append"
            )))
        })
    };

    // 2. Idempotency: the stored events of the batch's ids, then the batch in order.
    let mut keys: HashSet<(i64, &str)> = HashSet::new();
    for ev in batch {
        if let Some(id) = ev.id.as_deref() {
            keys.insert((asset_id(&ev.asset)?, id));
        }
    }
    // The first event of each key: stored, or earlier in this batch.
    let mut known: HashMap<(i64, Cow<'_, str>), Cow<'_, NewEvent>> =
        HashMap::with_capacity(keys.len());
    if !keys.is_empty() {
        let (key_assets, key_ids): (Vec<i64>, Vec<&str>) = keys.iter().copied().unzip();
        let s = stmts.get(tx, STORED_BY_ID)?;
        for r in tx.query(&s, &[&key_assets, &key_ids])? {
            known.insert(
                (r.get(0), Cow::Owned(r.get::<_, String>(1))),
                Cow::Owned(stored_content(&r)?),
            );
        }
    }
    let mut out = Appended::default();
    let mut cols = Columns::default();
    let mut assets: Vec<AssetBatch> = Vec::new();
    let mut slot_of: HashMap<i64, usize> = HashMap::new();
    for (index, ev) in batch.iter().enumerate() {
        let aid = asset_id(&ev.asset)?;
        if let Some(id) = ev.id.as_deref() {
            match known.get(&(aid, Cow::Borrowed(id))) {
                Some(first) if first.same_content(ev) => {
                    out.duplicates += 1;
                    continue;
                }
                Some(_) => {
                    // Dropping the transaction rolls the batch back.
                    return Err(Fail::Store(StoreError::Conflict {
                        index,
                        asset: ev.asset.clone(),
                        id: id.to_string(),
                    }));
                }
                None => {
                    known.insert((aid, Cow::Borrowed(id)), Cow::Borrowed(ev));
                }
            }
        }
        out.accepted += 1;
        let slot = *slot_of.entry(aid).or_insert_with(|| {
            assets.push(AssetBatch {
                id: aid,
                events: Vec::new(),
                max_len: 0,
                min_start: i64::MAX,
                max_end: i64::MIN,
            });
            assets.len() - 1
        });
        let a = &mut assets[slot];
        let (start, end) = (
            ev.interval.start().as_micros(),
            ev.interval.end().as_micros(),
        );
        a.events.push((ev.kind, ev.interval));
        a.max_len = a.max_len.max(end - start);
        a.min_start = a.min_start.min(start);
        a.max_end = a.max_end.max(end);
        cols.asset_id.push(aid);
        cols.id.push(ev.id.as_deref());
        cols.start.push(start);
        cols.end.push(end);
        cols.kind.push(kind_code(ev.kind));
        cols.extra.push(ev.extra.as_deref());
        cols.produced_at
            .push(ev.produced_at.map(Instant::as_micros));
    }
    drop(known);

    if !cols.asset_id.is_empty() {
        // 3. Sequence numbers, drawn under the asset locks, then the events.
        let n = cols.asset_id.len();
        let s = stmts.get(tx, NEXT_SEQS)?;
        let mut seqs: Vec<i64> = tx
            .query(&s, &[&(n as i64)])?
            .iter()
            .map(|r| r.get(0))
            .collect();
        seqs.sort_unstable();
        if seqs.len() != n {
            return Err(Fail::Store(StoreError::Backend(
                "the event sequence returned too few numbers".into(),
            )));
        }
        cols.seq = seqs;
        insert_events(tx, stmts, &cols, received_at.as_micros())?;

        // 4. Coverage runs and asset statistics.
        for a in &assets {
            update_coverage(tx, stmts, a)?;
            let s = stmts.get(tx, UPDATE_ASSET)?;
            tx.execute(
                &s,
                &[
                    &a.id,
                    &(a.events.len() as i64),
                    &a.max_len,
                    &a.min_start,
                    &a.max_end,
                ],
            )?;
        }
    }
    Ok(out)
}

fn insert_events(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    cols: &Columns<'_>,
    received: i64,
) -> Result<(), Fail> {
    if cols.seq.len() < COPY_FROM {
        let s = stmts.get(tx, INSERT_EVENTS)?;
        tx.execute(
            &s,
            &[
                &cols.seq,
                &cols.asset_id,
                &cols.id,
                &cols.start,
                &cols.end,
                &cols.kind,
                &cols.extra,
                &cols.produced_at,
                &received,
            ],
        )?;
        return Ok(());
    }
    let sink = tx.copy_in(COPY_EVENTS)?;
    let types = [
        Type::INT8,
        Type::INT8,
        Type::TEXT,
        Type::INT8,
        Type::INT8,
        Type::INT2,
        Type::TEXT,
        Type::INT8,
        Type::INT8,
    ];
    let mut w = BinaryCopyInWriter::new(sink, &types);
    for i in 0..cols.seq.len() {
        w.write(&[
            &cols.seq[i],
            &cols.asset_id[i],
            &cols.id[i],
            &cols.start[i],
            &cols.end[i],
            &cols.kind[i],
            &cols.extra[i],
            &cols.produced_at[i],
            &received,
        ])?;
    }
    w.finish()?;
    Ok(())
}

/// Replace the asset's stored runs that touch the batch's hull by the result
/// of applying the batch's new events to them.
fn update_coverage(
    tx: &mut Transaction<'_>,
    stmts: &mut Stmts,
    a: &AssetBatch,
) -> Result<(), Fail> {
    let (hull_start, hull_end) = (a.min_start, a.max_end);
    // The run with the greatest start at or before the hull (it may reach
    // into or touch the hull), then every run starting up to the hull's end.
    let s = stmts.get(tx, RUN_AT_OR_BEFORE)?;
    let lower: i64 = tx
        .query_opt(&s, &[&a.id, &hull_start])?
        .map_or(hull_start, |r| r.get(0));
    let s = stmts.get(tx, RUNS_FROM)?;
    let mut runs = Vec::new();
    for r in tx.query(&s, &[&a.id, &lower, &hull_end])? {
        let (s, e): (i64, i64) = (r.get(0), r.get(1));
        if e >= hull_start {
            runs.push((s, e));
        }
    }
    let Rebuilt { replaced, set } = rebuild(runs, &a.events)?;
    if let Some((first, last)) = replaced {
        let s = stmts.get(tx, DELETE_RUNS)?;
        tx.execute(&s, &[&a.id, &first, &last])?;
    }
    if !set.is_empty() {
        let (starts, ends): (Vec<i64>, Vec<i64>) = set
            .runs()
            .map(|r| (r.start().as_micros(), r.end().as_micros()))
            .unzip();
        let s = stmts.get(tx, INSERT_RUNS)?;
        tx.execute(&s, &[&a.id, &starts, &ends])?;
    }
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
