//! The event of SPEC §2: its kind and the validated event ready to be
//! stored. Names and ids are checked in `names.rs`, the asset's declaration
//! is `decl.rs`, and the JSON object forms an event arrives in are parsed
//! and resolved in `wire.rs`.

use std::fmt;
use std::str::FromStr;

use crate::parse::invalid;
use crate::{Error, Instant, Interval, Result};

mod decl;
mod names;
mod wire;

pub use decl::AssetDecl;
pub(crate) use names::validate_event_id;
pub use names::{validate_asset_name, MAX_NAME_BYTES};
pub use wire::{RawEvent, MAX_EXTRA_BYTES, MAX_EXTRA_DEPTH};

/// Whether an event says its data is in place or withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// The data for the interval is in place.
    Landed,
    /// The data is no longer valid.
    Retracted,
}

impl EventKind {
    /// `landed` or `retracted`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Landed => "landed",
            EventKind::Retracted => "retracted",
        }
    }

    /// Parse `landed` or `retracted` (lower case, as [`EventKind::as_str`]
    /// prints them).
    ///
    /// # Errors
    ///
    /// For any other text: `invalid kind "maybe": expected "landed" or
    /// "retracted"`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::EventKind;
    ///
    /// assert_eq!(EventKind::parse("retracted")?, EventKind::Retracted);
    /// assert!(EventKind::parse("maybe").is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<EventKind> {
        match text {
            "landed" => Ok(EventKind::Landed),
            "retracted" => Ok(EventKind::Retracted),
            _ => Err(invalid(
                "kind",
                text,
                "expected \"landed\" or \"retracted\"",
            )),
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        EventKind::parse(s)
    }
}

impl serde::Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Reads `landed` or `retracted`, as [`EventKind::parse`] does.
impl<'de> serde::Deserialize<'de> for EventKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        crate::parse::deserialize_text(d, EventKind::parse)
    }
}

/// A validated event ready to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// Asset name (validated).
    pub asset: String,
    /// The producer's idempotency key, unique per asset.
    pub id: Option<String>,
    /// The interval covered.
    pub interval: Interval,
    /// Landed or retracted.
    pub kind: EventKind,
    /// The `extra` object, byte for byte as given.
    pub extra: Option<String>,
    /// When the producer made it.
    pub produced_at: Option<Instant>,
}

impl NewEvent {
    /// Whether `other` says the same thing: equal interval, kind,
    /// `produced_at` and `extra`. Two `extra` objects are equal when their
    /// bytes are, or when they parse to equal JSON values (so re-serializing
    /// the same object with other spacing or key order is no conflict).
    ///
    /// The asset and id are not compared: this is the idempotency test for
    /// two events of the same `(asset, id)`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::RawEvent;
    ///
    /// let a = RawEvent::from_json(r#"{"asset": "A", "id": "7", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "extra": {"a": 1, "b": 2}}"#)?;
    /// let b = RawEvent::from_json(r#"{"asset": "A", "id": "7", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z", "extra": {"b":2,"a":1}}"#)?;
    /// assert!(a.resolve(None)?.same_content(&b.resolve(None)?));
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn same_content(&self, other: &NewEvent) -> bool {
        self.interval == other.interval
            && self.kind == other.kind
            && self.produced_at == other.produced_at
            && match (&self.extra, &other.extra) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b || same_json(a, b),
                _ => false,
            }
    }
}

fn same_json(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
