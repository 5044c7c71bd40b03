//! `POST /v1/events`: record one event, a JSON array, or NDJSON, atomically.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use gapless_ledger::ingest::{Batch, Unit};
use gapless_ledger::{IngestAnswer, Ledger, LedgerError};
use serde_json::json;
use serde_json::value::RawValue;

use crate::auth::{Caller, Scope};
use crate::{ApiError, AppState};

/// How the body is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// One JSON object, or an array of them.
    Json,
    /// One event object per line.
    Ndjson,
}

fn format_of(headers: &HeaderMap) -> Result<Format, ApiError> {
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return Ok(Format::Json);
    };
    let essence = value
        .to_str()
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
        | "application/x-jsonlines" => Ok(Format::Ndjson),
        "application/json" | "" => Ok(Format::Json),
        s if s.ends_with("+json") => Ok(Format::Json),
        other => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "unsupported content type {other:?}: send application/json or application/x-ndjson"
            ),
        )),
    }
}

fn parse(ledger: &Ledger, format: Format, body: &[u8]) -> Result<Batch, LedgerError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| LedgerError::BadInput(format!("the body is not UTF-8: {e}")))?;
    match format {
        Format::Ndjson => {
            let lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
            ledger.parse(Unit::Line, lines)
        }
        Format::Json if text.trim_start().starts_with('[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(|e| {
                LedgerError::BadInput(format!("events: not a JSON array of event objects: {e}"))
            })?;
            ledger.parse(Unit::Event, items.iter().map(|r| r.get()))
        }
        Format::Json => ledger.parse(Unit::Single, [text]),
    }
}

/// Refuse the whole batch when any event is outside what the token may write.
fn authorize(caller: &Caller, batch: &Batch) -> Result<(), ApiError> {
    for (index, event) in batch.events().iter().enumerate() {
        if let Err(message) = caller.require_write(&event.asset) {
            let detail = match batch.position(index) {
                Some((Unit::Line, n)) => json!({"line": n, "asset": event.asset}),
                Some((Unit::Event, n)) => json!({"event": n, "asset": event.asset}),
                _ => json!({"asset": event.asset}),
            };
            return Err(ApiError::forbidden(batch.at(index, message)).with_detail(detail));
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
        (crate::openapi::EventsBody = "application/json"),
        (String = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "Recorded (or all duplicates)", body = crate::openapi::IngestAnswer),
        (status = 400, description = "A bad event, named by position", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "An event outside the token's write prefixes; nothing stored", body = crate::openapi::ErrorBody),
        (status = 409, description = "An event id recorded with other content; nothing stored", body = crate::openapi::ErrorBody),
        (status = 413, description = "Body too large", body = crate::openapi::ErrorBody),
        (status = 415, description = "Unsupported content type", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn post_events(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<IngestAnswer>, ApiError> {
    caller.require(Scope::Write)?;
    let format = format_of(&headers)?;
    let body = body?;
    let batch = state
        .ask(move |ledger| parse(ledger, format, &body))
        .await?;
    authorize(&caller, &batch)?;
    if batch.is_empty() {
        return Ok(Json(IngestAnswer::default()));
    }
    let answer = state.writer().append(batch).await?;
    Ok(Json(answer))
}
