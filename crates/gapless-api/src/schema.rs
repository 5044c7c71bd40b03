//! OpenAPI schemas of what has no Rust type of its own on the wire: an
//! interval as JSON, the error body, and the event object forms that the
//! core's parser reads (SPEC §2). All but [`ErrorBody`], which the client
//! reads too, exist only for the OpenAPI document (feature `openapi`).

use serde::{Deserialize, Serialize};

/// A half-open interval `[start, end)`: the OpenAPI description of
/// [`gapless_core::Interval`]'s JSON.
#[cfg(feature = "openapi")]
#[derive(Debug, utoipa::ToSchema)]
#[schema(as = Interval)]
pub struct IntervalSchema {
    /// RFC 3339 UTC.
    #[schema(format = DateTime)]
    pub start: String,
    /// RFC 3339 UTC, exclusive.
    #[schema(format = DateTime)]
    pub end: String,
}

/// Every error answer: one line naming the input and the reason (the
/// message the command line prints), and more about it or null.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    /// The message, e.g. `line 3: invalid instant "2025-13-01": …`.
    pub error: String,
    /// E.g. `{"line": 3}` for the third NDJSON line, `{"event": 2}` for the
    /// second item of an array; or null.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub detail: serde_json::Value,
}

/// One event object in any form of SPEC §2: `start`/`end` columns,
/// `extra.interval_start`/`interval_end`, an ISO 8601 interval
/// `partition_key`, or a discrete `partition_key` of an asset with a key span.
/// (The OpenAPI description of what [`gapless_core::RawEvent`] reads.)
#[cfg(feature = "openapi")]
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(as = EventInput)]
pub struct EventInputSchema {
    /// The asset (1 to 512 bytes of UTF-8, no control characters).
    pub asset: String,
    /// Interval start: RFC 3339, naive date-time, or a bare date.
    pub start: Option<String>,
    /// Interval end, exclusive.
    pub end: Option<String>,
    /// An ISO 8601 interval, or a discrete key.
    pub partition_key: Option<String>,
    /// The producer's idempotency key, unique per asset (1 to 512 bytes).
    pub id: Option<String>,
    /// `landed` (the default) or `retracted`.
    pub kind: Option<String>,
    /// A JSON object kept as given (at most 64 KiB).
    pub extra: Option<serde_json::Value>,
    /// When the producer made it.
    #[schema(format = DateTime)]
    pub produced_at: Option<String>,
}

/// One event object or an array of them (or NDJSON lines with
/// `Content-Type: application/x-ndjson`): the OpenAPI description of a
/// `POST /v1/events` body.
///
/// Untagged: the body is the object or the array itself (`Deserialize` is
/// derived only so that utoipa reads `#[serde(untagged)]`; an externally
/// tagged `{"One": {...}}` is what the server refuses).
#[cfg(feature = "openapi")]
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
#[schema(as = EventsBody)]
pub enum EventsBodySchema {
    /// One event.
    One(#[schema(inline = false)] EventInputSchema),
    /// A batch.
    Many(Vec<EventInputSchema>),
}
