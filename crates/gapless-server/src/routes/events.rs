//! `POST /v1/events`: record one event, a JSON array, or NDJSON, atomically.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use gapless_api::{BodyFormat, IngestAnswer};
use gapless_ledger::ingest::Batch;
use gapless_ledger::Ledger;
use serde_json::json;

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
        .map_err(|m| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, m))
}

/// Refuse the whole batch when any event is outside what the token may write.
fn authorize(caller: &Caller, batch: &Batch) -> Result<(), ApiError> {
    for (index, event) in batch.events().iter().enumerate() {
        if let Err(refused) = caller.require_write(&event.asset) {
            let message = refused.to_string();
            let (message, detail) = match batch.position(index) {
                Some(p) => (
                    format!("{p}: {message}"),
                    json!({p.unit.as_str(): p.number, "asset": event.asset}),
                ),
                None => (message, json!({"asset": event.asset})),
            };
            return Err(ApiError::forbidden(message).with_detail(detail));
        }
    }
    Ok(())
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
    Query(_): Query<crate::extract::NoParams>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<IngestAnswer>, ApiError> {
    caller.require(Scope::Write)?;
    let format = format_of(&headers)?;
    let body = body.map_err(|r| crate::extract::body_error(r, &state))?;
    // A small body is parsed right here: a hop to a blocking thread costs
    // more than parsing it. Only events that need their asset's declaration
    // (a store read) go to a blocking thread for it, as a large body does.
    let inline = (body.len() <= INLINE_PARSE_BYTES)
        .then(|| Ledger::parse_body_without_store(format, &body))
        .flatten();
    let batch = match inline {
        Some(parsed) => parsed?,
        None => {
            state
                .ask(move |ledger| ledger.parse_body(format, &body))
                .await?
        }
    };
    authorize(&caller, &batch)?;
    if batch.is_empty() {
        return Ok(Json(IngestAnswer::default()));
    }
    let answer = state.writer().append(batch).await?;
    if answer.accepted > 0 {
        state.changed();
    }
    Ok(Json(answer))
}
