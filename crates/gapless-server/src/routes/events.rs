//! `POST /v1/events`: record one event, a JSON array, or NDJSON, atomically.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use gapless_api::{BodyFormat, IngestAnswer, Position};
use gapless_ledger::Ledger;
use serde_json::json;

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::Query;
use crate::{ApiError, AppState};

/// The largest body parsed on the request's own thread: a hundred-odd
/// events, short enough to parse that the other requests of its runtime
/// thread are not held up.
const INLINE_PARSE_BYTES: usize = 16 * 1024;

fn format_of(headers: &HeaderMap) -> Result<BodyFormat, ApiError> {
    let value = headers
        .get(CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or_default());
    BodyFormat::from_content_type(value)
        .map_err(|e| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, e.to_string()))
}

/// Refuse the whole body when any event names an asset the token may not
/// write. Asked before the body is read any further, so that the answer
/// about such an asset is always 403: a token learns nothing of the assets
/// outside its prefixes, not even whether one declares a key span.
fn authorize(caller: &Caller, format: BodyFormat, body: &[u8]) -> Result<(), ApiError> {
    gapless_ledger::ingest::each_asset(format, body, |asset, at| refuse(caller, asset, at))
}

/// 403 for an event at `at` (none: a single event) whose asset `caller`
/// may not write.
fn refuse(caller: &Caller, asset: &str, at: Option<Position>) -> Result<(), ApiError> {
    caller.require_write(asset).map_err(|refused| {
        let (message, detail) = match at {
            Some(p) => (
                format!("{p}: {refused}"),
                json!({p.unit.as_str(): p.number, "asset": asset}),
            ),
            None => (refused.to_string(), json!({"asset": asset})),
        };
        ApiError::forbidden(message).with_detail(detail)
    })
}

/// Record events.
///
/// The body is one event object, a JSON array of them, or NDJSON (one
/// object a line) with `Content-Type: application/x-ndjson`. The batch is
/// atomic: every event is stored or none, and an error names the first bad
/// event (`event N` in an array, `line N` in NDJSON). An event whose id is
/// already recorded with the same content is a duplicate (counted, not
/// stored again); with other content it is a conflict (409). Answered once
/// the events are durable.
#[utoipa::path(
    post,
    path = "/v1/events",
    tag = "events",
    request_body(content(
        (gapless_api::EventsBodySchema = "application/json"),
        (String = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "Recorded (or all duplicates)", body = IngestAnswer),
        (status = 400, description = "A bad event, named by position", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "An event outside the token's write prefixes; nothing stored", body = gapless_api::ErrorBody),
        (status = 409, description = "An event id recorded with other content; nothing stored", body = gapless_api::ErrorBody),
        (status = 413, description = "Body too large", body = gapless_api::ErrorBody),
        (status = 415, description = "Unsupported content type", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn post_events(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<crate::extract::NoParams>, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<IngestAnswer>, ApiError> {
    // Who may ask first, then what is asked (SPEC §4, access).
    caller.require(Scope::Write)?;
    query?;
    let format = format_of(&headers)?;
    let body = body.map_err(|r| crate::extract::body_error(r, &state))?;
    // Only a token with prefixes may be refused an asset; the check reads
    // the body once more, on the thread that parses it.
    let limited = caller.writes_some_assets_only();
    let inline = body.len() <= INLINE_PARSE_BYTES;
    if inline && limited {
        authorize(&caller, format, &body)?;
    }
    // A small body is parsed right here: a hop to a blocking thread costs
    // more than parsing it. Only events that need their asset's declaration
    // (a store read) go to a blocking thread for it, as a large body does.
    let parsed = inline
        .then(|| Ledger::parse_body_without_store(format, &body))
        .flatten();
    let batch = match parsed {
        Some(parsed) => parsed?,
        None => {
            let caller = (limited && !inline).then(|| caller.clone());
            state
                .ask(move |ledger| {
                    if let Some(Err(refused)) = caller.map(|c| authorize(&c, format, &body)) {
                        return Ok(Err(refused));
                    }
                    ledger.parse_body(format, &body).map(Ok)
                })
                .await??
        }
    };
    if limited {
        // The assets as parsed are the ones stored: asked again, so that no
        // reading of an event that the check above skipped writes past it.
        for (i, event) in batch.events().iter().enumerate() {
            refuse(&caller, &event.asset, batch.position(i))?;
        }
    }
    if batch.is_empty() {
        return Ok(Json(IngestAnswer::default()));
    }
    let answer = state.writer().append(batch).await?;
    if answer.accepted > 0 {
        state.changed();
    }
    Ok(Json(answer))
}
