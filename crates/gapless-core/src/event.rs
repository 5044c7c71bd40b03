//! The event object of SPEC §2 in all its forms.
// STUB: implemented by the parsing work (see issue 2).

use crate::{Duration, Instant, Interval, Result};

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
    /// Parse `landed` or `retracted`.
    pub fn parse(text: &str) -> Result<EventKind> {
        todo!("{text}")
    }
}

/// What an asset declares about itself: the span of a discrete key and the
/// time zone its keys and bare dates are read in.
#[derive(Debug, Clone)]
pub struct AssetDecl {
    /// `[key, key + span)` for a discrete `partition_key`.
    pub key_span: Option<Duration>,
    /// Time zone of the asset.
    pub tz: jiff::tz::TimeZone,
}

/// An event object as parsed from JSON, before the asset's declaration is
/// known (a discrete key needs it).
#[derive(Debug, Clone)]
pub struct RawEvent {
    asset: String,
}

impl RawEvent {
    /// Parse one JSON object (one NDJSON line).
    pub fn from_json(text: &str) -> Result<RawEvent> {
        todo!("{text}")
    }
    /// The asset named by the event.
    pub fn asset(&self) -> &str {
        &self.asset
    }
    /// The event with its interval resolved.
    pub fn resolve(&self, decl: Option<&AssetDecl>) -> Result<NewEvent> {
        todo!("{decl:?}")
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
