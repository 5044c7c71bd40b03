//! The answers, in the JSON shapes of SPEC §3 (`--json`) and §4 (HTTP).
//!
//! Each type serializes to exactly the object the spec shows and
//! deserializes from it, so a client reads a server's answer back into the
//! type the embedded ledger returns. Their OpenAPI schemas are derived from
//! these very types.

use gapless_core::{EventKind, Grid, Instant, Interval, Policy};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

#[cfg(feature = "openapi")]
use crate::schema::IntervalSchema;

/// `ingest` and `emit`: `{"accepted": N, "duplicates": N}`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IngestAnswer {
    /// Events stored.
    pub accepted: u64,
    /// Events already stored with the same content (not stored again).
    pub duplicates: u64,
}

/// `POST /api/v1/lineage`: the events recorded from OpenLineage run events
/// and what was left out, by reason (SPEC §4, §10).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LineageAnswer {
    /// Events stored (one per output dataset of a recorded run event).
    pub accepted: u64,
    /// Events already stored with the same content (a run event delivered
    /// again).
    pub duplicates: u64,
    /// Run events (or single outputs) left out: they record nothing.
    pub skipped: u64,
    /// Why, each reason with its count, in the order first seen.
    pub skipped_reasons: Vec<SkippedReason>,
}

/// One reason a [`LineageAnswer`] left records out, and how many.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkippedReason {
    /// Why (e.g. `eventType START (only COMPLETE records)`).
    pub reason: String,
    /// How many were left out for it.
    pub count: u64,
}

/// `check`: coverage of one range, and whether it is complete under a policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CheckAnswer {
    /// The asset asked about.
    pub asset: String,
    /// The range's start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The range's end.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// No gap in the range.
    pub covered: bool,
    /// Covered share of the range.
    pub covered_ratio: f64,
    /// The gaps, in order: the first [`crate::params::MAX_GAPS`] of them.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<IntervalSchema>))]
    pub missing: Vec<Interval>,
    /// How many gaps there are in all (more than `missing` holds when the
    /// list was cut).
    pub missing_count: usize,
    /// The policy judged by (`full` unless given), canonical.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "gap<10m"))]
    pub policy: Policy,
    /// Complete under the policy (what `check`'s exit code says).
    pub complete: bool,
}

/// One window of `windows`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowAnswer {
    /// The window's partition key: its start in the grid's zone, in the
    /// key format asked for (default `%Y-%m-%dT%H:%M:%S`); at most
    /// [`gapless_core::MAX_KEY_BYTES`].
    pub key: String,
    /// The window's start (may be before the range).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The window's end (may be after the range).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// Covered share of the whole window.
    pub covered_ratio: f64,
    /// Complete under the policy.
    pub complete: bool,
    /// The gaps in the window: the first [`crate::params::MAX_GAPS`].
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<IntervalSchema>))]
    pub missing: Vec<Interval>,
    /// How many gaps the window has in all. (`missing` holds fewer, or
    /// none, once the windows before it in the answer list
    /// [`crate::params::MAX_WINDOWS_GAPS`] together.)
    pub missing_count: usize,
}

/// `windows`: the grid windows that overlap a range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WindowsAnswer {
    /// The asset asked about.
    pub asset: String,
    /// The grid, canonical (`1h`).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "1h"))]
    pub every: Grid,
    /// The IANA time zone.
    pub tz: String,
    /// The policy, canonical.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "full"))]
    pub policy: Policy,
    /// The windows in time order.
    pub windows: Vec<WindowAnswer>,
}

/// One part of `buckets`: its covered, retracted and missing
/// microseconds add up to its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BucketAnswer {
    /// The part's start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The part's end (the next part's start).
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// Covered microseconds.
    pub covered_us: i64,
    /// Microseconds no event has ever covered.
    pub missing_us: i64,
    /// Microseconds whose latest event is a retraction.
    pub retracted_us: i64,
}

/// `buckets`: a range in equal parts, and the sums over all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BucketsAnswer {
    /// The asset asked about.
    pub asset: String,
    /// The range's start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The range's end.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// Covered microseconds of the range.
    pub covered_us: i64,
    /// Microseconds of the range no event has ever covered.
    pub missing_us: i64,
    /// Microseconds of the range whose latest event is a retraction.
    pub retracted_us: i64,
    /// The parts in time order, as many as asked (one per microsecond of
    /// a shorter range).
    pub buckets: Vec<BucketAnswer>,
}

/// Which event provides a segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventRef {
    /// The producer's id, if it gave one.
    pub id: Option<String>,
    /// The ledger's sequence number.
    pub seq: i64,
}

/// One segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SegmentAnswer {
    /// Start, clipped to the range.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// End, clipped to the range.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// `landed` or `retracted`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "landed"))]
    pub kind: EventKind,
    /// The winning event; null on a part before the asset's
    /// `pruned_before`, whose event detail was pruned (its kind is then
    /// read from the coverage and the retractions, which prunes keep).
    pub event: Option<EventRef>,
}

/// `segments`: which event is the latest on each part of a range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SegmentsAnswer {
    /// The asset asked about.
    pub asset: String,
    /// The range's start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The range's end.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// The segments in time order: those of [start or the cursor, next).
    pub segments: Vec<SegmentAnswer>,
    /// Where the next page starts (pass it as `after`), or null when this
    /// is the last. A segment that goes on past it is split there: the
    /// next page starts with the rest of it (the same event).
    pub next: Option<String>,
    /// The asset's `pruned_before` when the page starts before it (its
    /// segments before it name no event), else null. Absent from the
    /// answers of older servers.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub pruned_before: Option<Instant>,
}

/// One event as listed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventAnswer {
    /// The producer's id.
    pub id: Option<String>,
    /// Sequence number.
    pub seq: i64,
    /// Interval start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// Interval end.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// `landed` or `retracted`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "landed"))]
    pub kind: EventKind,
    /// The `extra` object byte for byte, or null.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub extra: Option<Box<RawValue>>,
    /// When the producer made it.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub produced_at: Option<Instant>,
    /// When the ledger accepted it.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub received_at: Instant,
}

impl PartialEq for EventAnswer {
    fn eq(&self, o: &Self) -> bool {
        self.id == o.id
            && self.seq == o.seq
            && self.start == o.start
            && self.end == o.end
            && self.kind == o.kind
            && self.extra.as_ref().map(|r| r.get()) == o.extra.as_ref().map(|r| r.get())
            && self.produced_at == o.produced_at
            && self.received_at == o.received_at
    }
}

/// `events`: one page of events in sequence order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EventsAnswer {
    /// The asset asked about.
    pub asset: String,
    /// The events.
    pub events: Vec<EventAnswer>,
    /// The cursor for the next page, or null when this is the last.
    pub next: Option<String>,
    /// The asset's `pruned_before` when the range asked (all time when none
    /// is given) starts before it: events ending by then may have been
    /// pruned. Else null; absent from the answers of older servers.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub pruned_before: Option<Instant>,
}

/// `frontier`: complete up to when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FrontierAnswer {
    /// The asset asked about.
    pub asset: String,
    /// Where the covered run is looked for.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub origin: Instant,
    /// The end of the covered run from the origin, or the origin.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub frontier: Instant,
}

/// One asset of the listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssetAnswer {
    /// The asset's name.
    pub asset: String,
    /// Events stored.
    pub events: u64,
    /// The first covered instant.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub first_covered: Option<Instant>,
    /// The end of the last covered run.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_covered: Option<Instant>,
    /// When the ledger stored the asset's last event (null before the
    /// first): with `last_covered`, whether its producer is still at work.
    /// Absent from the answers of older servers.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_received: Option<Instant>,
    /// The declared span of a discrete key (ISO 8601), or null.
    pub key_span: Option<String>,
    /// The declared time zone, or null when the asset was never declared
    /// (its keys are then read in UTC).
    pub tz: Option<String>,
    /// The latest instant a prune removed some of its events before (null
    /// when none was ever removed): its event detail before it may be
    /// gone, its coverage is whole. Absent from the answers of older
    /// servers.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub pruned_before: Option<Instant>,
}

/// `prune`: what a prune removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PruneAnswer {
    /// The instant pruned before.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub before: Instant,
    /// The one asset pruned, or null for every asset.
    pub asset: Option<String>,
    /// Events removed.
    pub events_removed: u64,
    /// Firings removed (none when one asset is pruned).
    pub firings_removed: u64,
    /// Assets of which some event was removed.
    pub assets_touched: u64,
}

/// One asset of an `assets` page: what `asset show` answers, and what an
/// overview of it shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssetOverviewAnswer {
    /// The asset's name.
    pub asset: String,
    /// Events stored.
    pub events: u64,
    /// The first covered instant.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub first_covered: Option<Instant>,
    /// The end of the last covered run.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_covered: Option<Instant>,
    /// When the ledger stored the asset's last event (null before the
    /// first).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub last_received: Option<Instant>,
    /// The declared span of a discrete key (ISO 8601), or null.
    pub key_span: Option<String>,
    /// The declared time zone, or null when the asset was never declared.
    pub tz: Option<String>,
    /// Complete up to when from its first covered instant (the end of its
    /// first covered run, as `frontier` answers), null when nothing is
    /// covered.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub frontier: Option<Instant>,
    /// The covered share of `[as_of - 24h, as_of)`.
    #[serde(default)]
    pub covered_ratio_day: f64,
    /// The covered share of `[as_of - 7d, as_of)`.
    #[serde(default)]
    pub covered_ratio_week: f64,
    /// As `asset show`'s: the latest instant a prune removed some of its
    /// events before, null when none was.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub pruned_before: Option<Instant>,
}

/// `assets`: one page of the assets, by name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AssetsAnswer {
    /// The assets by name (byte order).
    pub assets: Vec<AssetOverviewAnswer>,
    /// The cursor of the next page (pass it as `after`), or null when this
    /// is the last.
    #[serde(default)]
    pub next: Option<String>,
    /// The instant the overviews' day and week end at: the server's clock
    /// when it read the page.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub as_of: Instant,
}

/// `POST /v1/buckets`: one `buckets` answer per item, in the order asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MultiBucketsAnswer {
    /// Each item's answer, exactly as `GET /v1/assets/{asset}/buckets`
    /// answers it.
    pub buckets: Vec<BucketsAnswer>,
}

/// `asset set`: the declaration now in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeclAnswer {
    /// The asset.
    pub asset: String,
    /// The discrete key span, if any.
    pub key_span: Option<String>,
    /// The time zone.
    pub tz: String,
}

/// Coverage of several assets at once: an instant counts only where every
/// asset covers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MultiCheckAnswer {
    /// The assets asked about.
    pub assets: Vec<String>,
    /// The range's start.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub start: Instant,
    /// The range's end.
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub end: Instant,
    /// No gap in the range.
    pub covered: bool,
    /// Covered share of the range.
    pub covered_ratio: f64,
    /// The gaps, in order: the first [`crate::params::MAX_GAPS`] of them.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<IntervalSchema>))]
    pub missing: Vec<Interval>,
    /// How many gaps there are in all (more than `missing` holds when the
    /// list was cut).
    pub missing_count: usize,
}
