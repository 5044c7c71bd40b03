//! One request type per question, as the user gives it: text, exactly as
//! typed on the command line, sent in a query string or a JSON body.
//!
//! The same struct is the command's flags (clap), the route's query or
//! body (serde, for the server's extractors and the client's query
//! strings) and its OpenAPI parameters (utoipa), so a new parameter is one
//! field here. The text is turned into typed values in one place, the
//! embedded ledger's [`crate::Ask`] implementation; a server does the same
//! for a client, so both give the same messages.

use std::io::Read;

use serde::{Deserialize, Serialize};

/// `gapless check` · `GET /v1/assets/{asset}/coverage`: coverage of a
/// range, complete under a policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct CoverageRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// When the range counts as complete: full (default), 'ratio>=R' or
    /// 'gap<D' (quote it in a shell); or use --min-ratio / --max-gap.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Complete when at least this share is covered (0 to 1): the policy
    /// ratio>=R without the quoting.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "max_gap"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<f64>, minimum = 0, maximum = 1))]
    pub min_ratio: Option<String>,
    /// Complete when every gap is shorter than this duration (10m, PT10M):
    /// the policy gap<D without the quoting.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "min_ratio"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<String>,
    /// IANA time zone of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless windows` · `GET /v1/assets/{asset}/windows`: the calendar
/// windows that overlap a range, each with its coverage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct WindowsRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// The grid: Nm, Nh, Nd, Nw, Nmo, Ny.
    #[cfg_attr(feature = "clap", arg(long))]
    pub every: String,
    /// IANA time zone of the calendar and of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// When a window counts as complete: full (default), 'ratio>=R' or
    /// 'gap<D' (quote it in a shell); or use --min-ratio / --max-gap.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// Complete when at least this share is covered (0 to 1): the policy
    /// ratio>=R without the quoting.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "max_gap"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<f64>, minimum = 0, maximum = 1))]
    pub min_ratio: Option<String>,
    /// Complete when every gap is shorter than this duration (10m, PT10M):
    /// the policy gap<D without the quoting.
    #[cfg_attr(feature = "clap", arg(long, conflicts_with_all = ["policy", "min_ratio"]))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<String>,
    /// Only the windows that are not complete (a backfill plan).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
    /// Each window's partition key: its start in the grid's zone, formatted
    /// with this strftime format (default %Y-%m-%dT%H:%M:%S, the default of
    /// Airflow's temporal mappers). On the command line, prints the keys
    /// alone, one a line.
    #[cfg_attr(feature = "clap", arg(long = "keys", value_name = "FORMAT", num_args = 0..=1, default_missing_value = crate::params::DEFAULT_KEY_FORMAT))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_format: Option<String>,
}

/// `gapless segments` · `GET /v1/assets/{asset}/segments`: which event
/// provides each part of a range.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct SegmentsRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// Segments per page, 1 to 10000 (default 1000). On the command line,
    /// --limit or --after asks for one page; without them every page is
    /// printed.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 10000))]
    pub limit: Option<String>,
    /// The `next` cursor of the previous page (the instant it ended at).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// IANA time zone of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless buckets` · `GET /v1/assets/{asset}/buckets`: a range cut into
/// equal parts, each with its covered, retracted and missing microseconds
/// (for a picture: never the events themselves).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct BucketsRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// How many equal parts, 1 to 10000 (default 100; one per microsecond
    /// of a shorter range).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 10000))]
    pub buckets: Option<String>,
    /// IANA time zone of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless events` · `GET /v1/assets/{asset}/events`: one page of the
/// events whose interval overlaps a range, in sequence order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct EventsRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Only events overlapping [start, end) (give both or neither).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// Only `landed` or `retracted` events.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Events per page, 1 to 10000 (default 1000).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 10000))]
    pub limit: Option<String>,
    /// The `next` cursor of the previous page.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// IANA time zone of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless frontier` · `GET /v1/assets/{asset}/frontier`: complete up to
/// when, from an origin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct FrontierRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Where the covered run starts (default: the asset's first covered
    /// instant).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// IANA time zone of a bare date (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `POST /v1/coverage`: coverage of several assets at once; an instant
/// counts only where every asset covers it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MultiCoverageRequest {
    /// The assets.
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET", required = true))]
    pub assets: Vec<String>,
    /// Start of the range: RFC 3339 (2025-06-01T10:05:00Z), a naive date-time (2025-06-01T10:05, UTC), or a bare date (2025-06-01, midnight in tz).
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the range, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// IANA time zone of bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless asset set` · `PUT /v1/assets/{asset}`: declare an asset's
/// discrete key span and time zone, creating it if needed. What is not
/// given stays as it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DeclareRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Span of a discrete partition key (ISO 8601 such as PT5M, or 5m, 1h,
    /// P1D); `none` clears it; unchanged when not given.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_span: Option<String>,
    /// IANA time zone of the asset's keys and naive instants (UTC until
    /// declared); unchanged when not given.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless prune` · `POST /v1/prune`: remove the detail of the events
/// that end at or before an instant (retracted ones excepted) and of the
/// firings recorded before it (pending ones excepted); every coverage
/// answer stays as it was.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PruneRequest {
    /// Remove the events that end at or before this instant, and the
    /// firings recorded before it: RFC 3339, a naive date-time (UTC) or a
    /// bare date.
    #[cfg_attr(feature = "clap", arg(long))]
    pub before: String,
    /// Only this asset's events (its firings are the rules', kept); every
    /// asset's and the firings when not given.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asset: Option<String>,
    /// IANA time zone of a naive `before` (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless asset show` · `GET /v1/assets/{asset}`: one asset's
/// declaration, event count and covered extent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AssetRequest {
    /// The asset.
    #[serde(skip)]
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
}

/// `gapless assets` · `GET /v1/assets`: one page of the assets in name
/// order, each with its overview (frontier, covered share of the last day
/// and week).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "openapi", derive(utoipa::IntoParams))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", into_params(parameter_in = Query))]
pub struct AssetsRequest {
    /// Only assets whose name starts with this.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Only assets whose name contains this (case-sensitive; names only,
    /// never events).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// Assets per page, 1 to 1000 (default 100). On the command line,
    /// --limit or --after asks for one page; without them every page is
    /// printed.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", param(value_type = Option<u32>, minimum = 1, maximum = 1000))]
    pub limit: Option<String>,
    /// The `next` cursor of the previous page.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// One range of `POST /v1/buckets`: an asset and the range to cut.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BucketsItem {
    /// The asset.
    pub asset: String,
    /// Start of the range: RFC 3339, a naive date-time or a bare date (read in tz).
    pub start: String,
    /// End of the range, exclusive.
    pub end: String,
}

/// `POST /v1/buckets`: the `buckets` answers of several assets and ranges
/// at once (the history bars of the rows in view), in the order asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MultiBucketsRequest {
    /// The assets and ranges, 1 to 1000; items × buckets at most 200000.
    pub assets: Vec<BucketsItem>,
    /// How many equal parts each range is cut into, 1 to 10000 (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 10000))]
    pub buckets: Option<u64>,
    /// IANA time zone of naive instants and bare dates (default UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
}

/// `gapless emit`: one event given as flags; recorded as the event object
/// [`EmitRequest::to_json`] writes.
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct EmitRequest {
    /// The asset.
    #[cfg_attr(feature = "clap", arg(value_name = "ASSET"))]
    pub asset: String,
    /// Start of the interval the event covers.
    #[cfg_attr(feature = "clap", arg(long))]
    pub start: String,
    /// End of the interval, exclusive.
    #[cfg_attr(feature = "clap", arg(long))]
    pub end: String,
    /// The producer's idempotency key.
    #[cfg_attr(feature = "clap", arg(long))]
    pub id: Option<String>,
    /// Record a retraction: the interval's data is no longer valid.
    #[cfg_attr(feature = "clap", arg(long))]
    pub retract: bool,
    /// A JSON object kept with the event.
    #[cfg_attr(feature = "clap", arg(long))]
    pub extra: Option<String>,
    /// When the producer made the data.
    #[cfg_attr(feature = "clap", arg(long))]
    pub produced_at: Option<String>,
    /// IANA time zone of naive date-times and bare dates (default UTC).
    #[cfg_attr(feature = "clap", arg(long))]
    pub tz: Option<String>,
}

impl EmitRequest {
    /// The event object (SPEC §2) these flags describe. With `tz`, the
    /// instants are read in it and written as RFC 3339; without, they go as
    /// given (naive ones are UTC). `extra` is spliced in as the text given,
    /// so that it is kept byte for byte; the event parser checks that it is
    /// a JSON object.
    ///
    /// # Errors
    ///
    /// `BadInput` for an unknown zone or an instant that cannot be read in
    /// it.
    pub fn to_json(&self) -> crate::Result<String> {
        let zone = self
            .tz
            .as_deref()
            .map(|tz| crate::params::time_zone(Some(tz)))
            .transpose()?;
        let instant = |name: &str, text: &str| -> crate::Result<String> {
            Ok(match &zone {
                Some((zone, _)) => crate::params::instant(name, text, zone)?.to_string(),
                None => text.to_string(),
            })
        };
        let mut event = serde_json::Map::new();
        event.insert("asset".into(), self.asset.clone().into());
        event.insert("start".into(), instant("start", &self.start)?.into());
        event.insert("end".into(), instant("end", &self.end)?.into());
        if let Some(id) = &self.id {
            event.insert("id".into(), id.clone().into());
        }
        if self.retract {
            event.insert("kind".into(), "retracted".into());
        }
        if let Some(p) = &self.produced_at {
            event.insert("produced_at".into(), instant("produced_at", p)?.into());
        }
        let mut text = serde_json::Value::Object(event).to_string();
        if let Some(extra) = &self.extra {
            text.pop();
            text.push_str(",\"extra\":");
            text.push_str(extra);
            text.push('}');
        }
        Ok(text)
    }
}

/// How a body of events is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    /// One JSON event object, or an array of them.
    Json,
    /// One event object a line (blank lines are skipped, but counted).
    Ndjson,
}

impl BodyFormat {
    /// The format a `Content-Type` names (parameters such as `charset`
    /// ignored); JSON when there is none.
    ///
    /// # Errors
    ///
    /// [`UnsupportedContentType`] naming the type for anything else (HTTP
    /// 415).
    pub fn from_content_type(value: Option<&str>) -> Result<BodyFormat, UnsupportedContentType> {
        let essence = value
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/x-ndjson"
            | "application/ndjson"
            | "application/jsonl"
            | "application/x-jsonlines" => Ok(BodyFormat::Ndjson),
            "application/json" | "" => Ok(BodyFormat::Json),
            s if s.ends_with("+json") => Ok(BodyFormat::Json),
            other => Err(UnsupportedContentType(other.to_string())),
        }
    }

    /// The `Content-Type` to send it with.
    pub fn content_type(self) -> &'static str {
        match self {
            BodyFormat::Json => "application/json",
            BodyFormat::Ndjson => "application/x-ndjson",
        }
    }
}

/// A `Content-Type` that names neither JSON nor NDJSON (its essence,
/// lowercase): a body the server refuses with 415, not a bad event (400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedContentType(pub String);

impl std::fmt::Display for UnsupportedContentType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unsupported content type {:?}: send application/json or application/x-ndjson",
            self.0
        )
    }
}

impl std::error::Error for UnsupportedContentType {}

/// `gapless ingest`, `gapless emit` · `POST /v1/events`: events to record
/// as one atomic batch, read from `body` as it is streamed.
pub struct RecordRequest<'a> {
    /// The events, read once, to the end.
    pub body: &'a mut (dyn Read + Send),
    /// How they are laid out.
    pub format: BodyFormat,
    /// What to call the input in messages (`events.ndjson`, `standard
    /// input`).
    pub source: &'a str,
    /// Its size in bytes, when known (a file).
    pub size: Option<u64>,
}

impl std::fmt::Debug for RecordRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordRequest")
            .field("format", &self.format)
            .field("source", &self.source)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_flags_make_one_event_object_with_extra_kept_as_given() {
        let e = EmitRequest {
            asset: "orders".into(),
            start: "2025-06-01".into(),
            end: "2025-06-02".into(),
            id: Some("b1".into()),
            retract: true,
            extra: Some(r#"{"b": 1,  "a": 2}"#.into()),
            produced_at: None,
            tz: None,
        };
        assert_eq!(
            e.to_json().unwrap(),
            r#"{"asset":"orders","end":"2025-06-02","id":"b1","kind":"retracted","start":"2025-06-01","extra":{"b": 1,  "a": 2}}"#
        );
    }

    #[test]
    fn emit_reads_naive_instants_in_its_zone() {
        let e = EmitRequest {
            asset: "orders".into(),
            start: "2025-10-26".into(),
            end: "2025-10-26T12:00".into(),
            tz: Some("Europe/Berlin".into()),
            ..Default::default()
        };
        let event: serde_json::Value = serde_json::from_str(&e.to_json().unwrap()).unwrap();
        assert_eq!(event["start"], "2025-10-25T22:00:00Z");
        assert_eq!(event["end"], "2025-10-26T11:00:00Z");
        let bad = EmitRequest {
            tz: Some("Mars/Olympus".into()),
            ..e
        };
        assert!(bad.to_json().unwrap_err().message().starts_with("tz: "));
    }

    #[test]
    fn content_types() {
        assert_eq!(
            BodyFormat::from_content_type(Some("application/x-ndjson; charset=utf-8")),
            Ok(BodyFormat::Ndjson)
        );
        assert_eq!(BodyFormat::from_content_type(None), Ok(BodyFormat::Json));
        assert_eq!(
            BodyFormat::from_content_type(Some("application/vnd.x+json")),
            Ok(BodyFormat::Json)
        );
        let e = BodyFormat::from_content_type(Some("Text/CSV; charset=utf-8")).unwrap_err();
        assert_eq!(e, UnsupportedContentType("text/csv".into()));
        assert_eq!(
            e.to_string(),
            "unsupported content type \"text/csv\": send application/json or application/x-ndjson"
        );
    }
}
