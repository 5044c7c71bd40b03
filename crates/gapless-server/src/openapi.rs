//! The OpenAPI document served at `/openapi.json`.
//!
//! Paths come from the handlers' `#[utoipa::path]` attributes as they are
//! routed (see `app.rs`), so every served route is documented. The answers
//! are the ledger's types; their schemas are described here, field for
//! field, and a test checks each one against the JSON the ledger really
//! produces.

#![allow(dead_code)] // the schema types below are never built, only described

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// The root of the document; paths are added by `app`.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "gapless",
        description = "A coverage ledger for time-partitioned data: record which interval each output covers, ask whether a range is complete and which gaps are missing. Answers have the shapes of the command line's `--json` output (SPEC §3, §4).",
    ),
    modifiers(&BearerAuth),
    components(schemas(ErrorBody, Interval)),
    tags(
        (name = "events", description = "Recording events"),
        (name = "questions", description = "Coverage, windows, segments, events, frontier"),
        (name = "assets", description = "The assets and their declarations"),
        (name = "operations", description = "Health, metrics, this document"),
    )
)]
pub(crate) struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// An error: one line naming the input and the reason.
#[derive(ToSchema)]
pub(crate) struct ErrorBody {
    /// The message (the same the command line prints).
    error: String,
    /// More about it, e.g. `{"line": 3}` for the third NDJSON line; or null.
    detail: Option<serde_json::Value>,
}

/// A half-open interval `[start, end)`.
#[derive(ToSchema)]
pub(crate) struct Interval {
    /// RFC 3339 UTC.
    #[schema(format = DateTime)]
    start: String,
    /// RFC 3339 UTC, exclusive.
    #[schema(format = DateTime)]
    end: String,
}

/// One event object in any form of SPEC §2: `start`/`end` columns,
/// `extra.interval_start`/`interval_end`, an ISO 8601 interval
/// `partition_key`, or a discrete `partition_key` of an asset with a key span.
#[derive(ToSchema, serde::Deserialize)]
pub(crate) struct EventInput {
    /// The asset (1 to 512 bytes of UTF-8, no control characters).
    asset: String,
    /// Interval start: RFC 3339, naive date-time (UTC), or a bare date.
    start: Option<String>,
    /// Interval end, exclusive.
    end: Option<String>,
    /// An ISO 8601 interval, or a discrete key.
    partition_key: Option<String>,
    /// The producer's idempotency key, unique per asset.
    id: Option<String>,
    /// `landed` (the default) or `retracted`.
    kind: Option<String>,
    /// A JSON object kept as given (at most 64 KiB).
    extra: Option<serde_json::Value>,
    /// When the producer made it.
    produced_at: Option<String>,
}

/// One event object or an array of them (or NDJSON lines with
/// `Content-Type: application/x-ndjson`).
#[derive(ToSchema, serde::Deserialize)]
#[serde(untagged)]
pub(crate) enum EventsBody {
    /// One event.
    One(#[schema(inline = false)] EventInput),
    /// A batch.
    Many(Vec<EventInput>),
}

/// `{"accepted": N, "duplicates": N}`.
#[derive(ToSchema)]
pub(crate) struct IngestAnswer {
    /// Events stored.
    accepted: u64,
    /// Events already stored with the same content.
    duplicates: u64,
}

/// The coverage of one range and whether it is complete under a policy.
#[derive(ToSchema)]
pub(crate) struct CheckAnswer {
    asset: String,
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    /// No gap in the range.
    covered: bool,
    /// Covered share of the range.
    covered_ratio: f64,
    /// The gaps, in order.
    missing: Vec<Interval>,
    /// The policy judged by.
    policy: String,
    /// Complete under the policy.
    complete: bool,
}

/// One grid window.
#[derive(ToSchema)]
pub(crate) struct WindowAnswer {
    /// May be before the range.
    #[schema(format = DateTime)]
    start: String,
    /// May be after the range.
    #[schema(format = DateTime)]
    end: String,
    covered_ratio: f64,
    complete: bool,
    missing: Vec<Interval>,
}

/// The grid windows that overlap a range.
#[derive(ToSchema)]
pub(crate) struct WindowsAnswer {
    asset: String,
    /// The grid, canonical (`1h`).
    every: String,
    /// The IANA time zone.
    tz: String,
    policy: String,
    windows: Vec<WindowAnswer>,
}

/// The event that provides a segment.
#[derive(ToSchema)]
pub(crate) struct EventRef {
    id: Option<String>,
    seq: i64,
}

/// One segment, clipped to the range.
#[derive(ToSchema)]
pub(crate) struct SegmentAnswer {
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    /// `landed` or `retracted`.
    kind: String,
    event: EventRef,
}

/// Which event is the latest on each part of a range.
#[derive(ToSchema)]
pub(crate) struct SegmentsAnswer {
    asset: String,
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    segments: Vec<SegmentAnswer>,
}

/// One stored event.
#[derive(ToSchema)]
pub(crate) struct EventAnswer {
    id: Option<String>,
    seq: i64,
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    kind: String,
    /// The `extra` object as given, or null.
    extra: Option<serde_json::Value>,
    #[schema(format = DateTime)]
    produced_at: Option<String>,
    #[schema(format = DateTime)]
    received_at: String,
}

/// One page of events in sequence order.
#[derive(ToSchema)]
pub(crate) struct EventsAnswer {
    asset: String,
    events: Vec<EventAnswer>,
    /// Give it as `after` for the next page; null on the last.
    next: Option<String>,
}

/// Complete up to when.
#[derive(ToSchema)]
pub(crate) struct FrontierAnswer {
    asset: String,
    #[schema(format = DateTime)]
    origin: String,
    /// The end of the covered run from the origin, or the origin.
    #[schema(format = DateTime)]
    frontier: String,
}

/// One asset of the listing.
#[derive(ToSchema)]
pub(crate) struct AssetAnswer {
    asset: String,
    /// Events stored.
    events: u64,
    #[schema(format = DateTime)]
    first_covered: Option<String>,
    #[schema(format = DateTime)]
    last_covered: Option<String>,
}

/// Every asset.
#[derive(ToSchema)]
pub(crate) struct AssetsAnswer {
    assets: Vec<AssetAnswer>,
}

/// The declaration now in force.
#[derive(ToSchema)]
pub(crate) struct DeclAnswer {
    asset: String,
    /// ISO 8601 duration of a discrete key, or null.
    key_span: Option<String>,
    tz: String,
}

/// Coverage of several assets at once.
#[derive(ToSchema)]
pub(crate) struct MultiCheckAnswer {
    assets: Vec<String>,
    #[schema(format = DateTime)]
    start: String,
    #[schema(format = DateTime)]
    end: String,
    covered: bool,
    covered_ratio: f64,
    missing: Vec<Interval>,
}

/// `/healthz`.
#[derive(ToSchema)]
pub(crate) struct Health {
    /// `ok`.
    status: String,
}
