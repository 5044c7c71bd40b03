//! How an event is stored: the kind as a small integer (0 landed, 1
//! retracted), instants as microseconds since the Unix epoch, `extra` as
//! the JSON text byte for byte, the id as text. The PostgreSQL backend
//! keeps the kind, `extra` and `produced_at` in two columns of its own
//! (`postgres/row.rs`) and reads them back into the same [`EventRow`].
//!
//! Encoding borrows from the event (no allocation per event on the append
//! path); decoding checks what the ledger holds, so that a bad value is
//! reported as a damaged ledger rather than a panic.

use gapless_core::{EventKind, Instant, Interval, IntervalSet, NewEvent};

use crate::error::corrupt;
use crate::{AssetSummary, Result, StoredEvent};

/// The columns of a stored event, in the order [`EventRow`] holds them:
/// the SQLite backend selects them so (`concat!(... event_columns!() ...)`).
macro_rules! event_columns {
    () => {
        "seq, id, start_us, end_us, kind, extra, produced_at, received_at"
    };
}
pub(crate) use event_columns;

/// The stored integer of a kind.
#[inline]
pub(crate) const fn kind_code(kind: EventKind) -> i16 {
    match kind {
        EventKind::Landed => 0,
        EventKind::Retracted => 1,
    }
}

/// The kind of a stored integer.
pub(crate) fn kind_of(code: i64) -> Result<EventKind> {
    match code {
        0 => Ok(EventKind::Landed),
        1 => Ok(EventKind::Retracted),
        _ => Err(corrupt(format_args!("event kind {code}"))),
    }
}

/// An event's columns as they are written (borrowed from the event).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Encoded<'a> {
    pub(crate) id: Option<&'a str>,
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) kind: i16,
    pub(crate) extra: Option<&'a str>,
    pub(crate) produced_at: Option<i64>,
}

impl Encoded<'_> {
    /// The interval's length in microseconds.
    #[inline]
    pub(crate) fn len(&self) -> i64 {
        self.end - self.start
    }
}

/// The columns `ev` is stored as.
#[inline]
pub(crate) fn encode(ev: &NewEvent) -> Encoded<'_> {
    Encoded {
        id: ev.id.as_deref(),
        start: ev.interval.start().as_micros(),
        end: ev.interval.end().as_micros(),
        kind: kind_code(ev.kind),
        extra: ev.extra.as_deref(),
        produced_at: ev.produced_at.map(Instant::as_micros),
    }
}

/// The columns of a stored event as read ([`event_columns!`] order).
#[derive(Debug)]
pub(crate) struct EventRow {
    pub(crate) seq: i64,
    pub(crate) id: Option<String>,
    pub(crate) start: i64,
    pub(crate) end: i64,
    pub(crate) kind: i64,
    pub(crate) extra: Option<String>,
    pub(crate) produced_at: Option<i64>,
    pub(crate) received_at: i64,
    /// The backend's cursor of the event ([`StoredEvent::cursor`]).
    pub(crate) cursor: i64,
}

/// A stored instant.
pub(crate) fn instant(us: i64, what: &str) -> Result<Instant> {
    Instant::from_micros(us).map_err(|_| corrupt(what))
}

/// A stored interval.
pub(crate) fn interval(start: i64, end: i64, what: &str) -> Result<Interval> {
    Interval::from_micros(start, end).map_err(|_| corrupt(what))
}

/// The event of a stored row.
pub(crate) fn decode(row: EventRow) -> Result<StoredEvent> {
    Ok(StoredEvent {
        seq: row.seq,
        id: row.id,
        interval: interval(row.start, row.end, "event interval")?,
        kind: kind_of(row.kind)?,
        extra: row.extra,
        produced_at: row
            .produced_at
            .map(|p| instant(p, "event produced_at"))
            .transpose()?,
        received_at: instant(row.received_at, "event received_at")?,
        cursor: row.cursor,
    })
}

/// The content of a stored event (start, end, kind, extra, produced_at), to
/// compare with [`NewEvent::same_content`] (asset and id are not compared
/// there, so they are left empty).
pub(crate) fn decode_content(
    start: i64,
    end: i64,
    kind: i64,
    extra: Option<String>,
    produced_at: Option<i64>,
) -> Result<NewEvent> {
    Ok(NewEvent {
        asset: String::new(),
        id: None,
        interval: interval(start, end, "event interval")?,
        kind: kind_of(kind)?,
        extra,
        produced_at: produced_at
            .map(|p| instant(p, "event produced_at"))
            .transpose()?,
    })
}

/// The set of stored coverage runs, in start order.
pub(crate) fn run_set(runs: Vec<Interval>) -> Result<IntervalSet> {
    IntervalSet::from_sorted_runs(runs)
        .map_err(|e| corrupt(format_args!("set of coverage runs ({e})")))
}

/// An asset of the listing from its stored count, the start of its first
/// and the end of its last coverage run, its stored declaration and its
/// pruning watermark.
pub(crate) fn summary(
    asset: String,
    events: i64,
    first: Option<i64>,
    last: Option<i64>,
    last_received: Option<i64>,
    declared: (Option<String>, Option<String>),
    pruned_before: Option<i64>,
) -> Result<AssetSummary> {
    Ok(AssetSummary {
        asset,
        events: u64::try_from(events).map_err(|_| corrupt("event count"))?,
        first_covered: first.map(|t| instant(t, "coverage run")).transpose()?,
        last_covered: last.map(|t| instant(t, "coverage run")).transpose()?,
        last_received: last_received
            .map(|t| instant(t, "last received"))
            .transpose()?,
        key_span: declared.0,
        tz: declared.1,
        pruned_before: pruned_before
            .map(|t| instant(t, "pruned before"))
            .transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_bad_codes_are_damage() {
        for kind in [EventKind::Landed, EventKind::Retracted] {
            assert_eq!(kind_of(i64::from(kind_code(kind))).unwrap(), kind);
        }
        let err = kind_of(7).unwrap_err().to_string();
        assert!(err.contains("event kind 7"), "{err}");
    }

    #[test]
    fn an_event_round_trips() {
        let ev = NewEvent {
            asset: "a".into(),
            id: Some("x".into()),
            interval: Interval::from_micros(10, 20).unwrap(),
            kind: EventKind::Retracted,
            extra: Some("{}".into()),
            produced_at: Some(Instant::from_micros(5).unwrap()),
        };
        let e = encode(&ev);
        assert_eq!((e.start, e.end, e.kind, e.len()), (10, 20, 1, 10));
        let back = decode(EventRow {
            seq: 3,
            id: e.id.map(str::to_string),
            start: e.start,
            end: e.end,
            kind: e.kind.into(),
            extra: e.extra.map(str::to_string),
            produced_at: e.produced_at,
            received_at: 30,
            cursor: 3,
        })
        .unwrap();
        assert_eq!(back.seq, 3);
        assert_eq!(back.id.as_deref(), Some("x"));
        assert_eq!(back.interval, ev.interval);
        assert_eq!(back.kind, ev.kind);
        assert_eq!(back.extra, ev.extra);
        assert_eq!(back.produced_at, ev.produced_at);
        assert_eq!(back.received_at.as_micros(), 30);
        let content = decode_content(e.start, e.end, e.kind.into(), None, None).unwrap();
        assert!(!content.same_content(&ev));
        assert!(decode_content(20, 10, 0, None, None).is_err());
    }
}
