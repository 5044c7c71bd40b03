//! What goes into and comes out of a [`crate::Store`].

use gapless_core::{EventKind, Instant, Interval};

/// Counts of one append.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Appended {
    /// Events stored.
    pub accepted: u64,
    /// Events already stored with the same content.
    pub duplicates: u64,
}

/// An event as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEvent {
    /// Sequence number: later events have higher ones.
    pub seq: i64,
    /// The producer's idempotency key.
    pub id: Option<String>,
    /// The interval covered.
    pub interval: Interval,
    /// Landed or retracted.
    pub kind: EventKind,
    /// The `extra` JSON object, byte for byte as given.
    pub extra: Option<String>,
    /// When the producer made it.
    pub produced_at: Option<Instant>,
    /// When the ledger accepted it.
    pub received_at: Instant,
    /// Where a page that ends with this event goes on from
    /// ([`EventQuery::after`]): its place in its asset's sequence order as
    /// the backend numbers it (SQLite: its sequence number; PostgreSQL:
    /// its number among the asset's events).
    pub cursor: i64,
}

/// Which events to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventQuery {
    /// Only events whose interval overlaps this range.
    pub range: Option<Interval>,
    /// Only events of this kind.
    pub kind: Option<EventKind>,
    /// At most this many (the backend caps it at 10,000).
    pub limit: usize,
    /// Only events after this cursor (the [`StoredEvent::cursor`] of the
    /// last event of the previous page).
    pub after: Option<i64>,
}

/// One page of events.
#[derive(Debug, Clone, PartialEq)]
pub struct EventPage {
    /// The events, in sequence order.
    pub events: Vec<StoredEvent>,
    /// The cursor for the next page (the last event's
    /// [`StoredEvent::cursor`]), when more may follow.
    pub next: Option<i64>,
}

/// One asset in the listing: every asset with an event or a declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssetSummary {
    /// The asset's name.
    pub asset: String,
    /// Events stored.
    pub events: u64,
    /// The first covered instant, if any.
    pub first_covered: Option<Instant>,
    /// The end of the last covered run, if any.
    pub last_covered: Option<Instant>,
    /// When the asset's last event was stored, if any.
    pub last_received: Option<Instant>,
    /// Its declared key span (ISO 8601), if any.
    pub key_span: Option<String>,
    /// Its declared time zone (IANA name); `None` if never declared.
    pub tz: Option<String>,
    /// The latest instant its event detail was pruned before
    /// ([`crate::Store::prune_events`]); `None` if none was ever pruned.
    pub pruned_before: Option<Instant>,
}
