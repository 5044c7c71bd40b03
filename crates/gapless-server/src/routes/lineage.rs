//! `POST /api/v1/lineage`: OpenLineage run events, as the HTTP transport
//! of OpenLineage's clients sends them (its default path, `api_key` auth as
//! `Authorization: Bearer`, gzip when `compression` is set), recorded as
//! SPEC §10 maps them.
//!
//! An emitter must never fail because gapless cannot use one of its events:
//! whatever says nothing gapless can place in time, names an asset the
//! token may not write, is refused by the ledger (a discrete key of an
//! asset without a key span) or conflicts with what the ledger holds, is
//! left out and counted by reason, and the rest is recorded as one atomic
//! batch through the same durable path as `POST /v1/events`. Only a body
//! that is not JSON is an error.

use std::io::Read;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::header::CONTENT_ENCODING;
use axum::http::{HeaderMap, StatusCode};
use gapless_api::{Error, ErrorKind, LineageAnswer, SkippedReason, Unit};
use gapless_core::{convert, Converted, ProducerFormat, ProducerOptions};
use gapless_ledger::ingest::Batch;
use gapless_ledger::Ledger;

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::Query;
use crate::{ApiError, AppState};

/// The body as sent, or inflated when `Content-Encoding: gzip` says it is
/// compressed (what the transport's `compression: gzip` sends), at most
/// `limit` bytes once inflated, as a plain body is.
fn decoded(headers: &HeaderMap, body: Bytes, limit: usize) -> Result<Bytes, ApiError> {
    let encoding = headers
        .get(CONTENT_ENCODING)
        .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
    match encoding.as_deref() {
        None | Some("" | "identity") => Ok(body),
        Some("gzip" | "x-gzip") => {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(&body[..])
                .take(limit as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| {
                    ApiError::bad_request(format!(
                        "the body is not valid gzip (Content-Encoding: gzip): {e}"
                    ))
                })?;
            if out.len() > limit {
                return Err(ApiError::too_large(limit));
            }
            Ok(Bytes::from(out))
        }
        Some(other) => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Encoding {other} is not supported: send the body as it is, or gzip"),
        )),
    }
}

/// The mapped events of a body (SPEC §2 objects as JSON), with what the
/// mapping left out counted by reason.
///
/// # Errors
///
/// 400 for a body that is empty, not UTF-8 or not JSON, naming what is wrong.
fn mapped(body: &[u8]) -> Result<Converted, ApiError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| ApiError::bad_request(format!("the body is not UTF-8: {e}")))?;
    if text.trim().is_empty() {
        return Err(ApiError::bad_request(
            "the body is empty: send an OpenLineage run event, an array of them, or NDJSON",
        ));
    }
    convert(
        ProducerFormat::OpenLineage,
        text,
        "the body",
        &ProducerOptions::default(),
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// `items` as one batch; the items the ledger refuses (by index, with the
/// reason) are left out of it. Positions in the batch are the items'
/// (`event N` is `items[N - 1]`), so a conflict names its item.
///
/// # Errors
///
/// A fault of the store (reading a declaration); bad input is never one.
fn build(ledger: &Ledger, items: &[String]) -> Result<(Batch, Vec<(usize, String)>), Error> {
    let mut builder = ledger.batch(Some(Unit::Event));
    let mut refused = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match builder.push(item) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::BadInput => {
                refused.push((i, format!("refused by the ledger: {}", e.message())));
            }
            Err(e) => return Err(e),
        }
    }
    Ok((builder.finish(), refused))
}

/// Record OpenLineage run events.
///
/// The body is one run event, a JSON array of them, or several one after
/// the other (NDJSON, the file transport's form), whatever its
/// `Content-Type`; `Content-Encoding: gzip` is inflated. A `COMPLETE` event
/// records its run's interval (the `nominalTime` facet, else an Airflow
/// partition key) on each output dataset, as the asset
/// `<namespace>/<name>`, with the id `openlineage:<runId>`; everything else
/// records nothing and is counted in `skipped_reasons`. What is recorded
/// is one atomic batch, answered once durable.
#[utoipa::path(
    post,
    path = "/api/v1/lineage",
    tag = "events",
    request_body(content(
        (serde_json::Value = "application/json"),
        (String = "application/x-ndjson"),
    )),
    responses(
        (status = 200, description = "Recorded; what records nothing is counted by reason", body = LineageAnswer),
        (status = 400, description = "The body is empty, not UTF-8, not JSON, or not valid gzip", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "The token has no write scope", body = gapless_api::ErrorBody),
        (status = 413, description = "Body too large (inflated, for gzip)", body = gapless_api::ErrorBody),
        (status = 415, description = "A Content-Encoding other than gzip", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn post_lineage(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<crate::extract::NoParams>, ApiError>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<LineageAnswer>, ApiError> {
    // Who may ask first, then what is asked (SPEC §4, access).
    caller.require(Scope::Write)?;
    query?;
    let body = body.map_err(|r| crate::extract::body_error(r, &state))?;
    let limit = state.config().body_limit;
    // Inflating and mapping a large body is CPU work: off the runtime's
    // threads, as `POST /v1/events` parses a large body.
    let mut converted =
        tokio::task::spawn_blocking(move || mapped(&decoded(&headers, body, limit)?))
            .await
            .map_err(ApiError::internal)??;
    let events = std::mem::take(&mut converted.events);
    let mut items = Vec::with_capacity(events.len());
    for event in events {
        let asset = event["asset"].as_str().unwrap_or_default();
        if caller.require_write(asset).is_err() {
            converted.skip("an asset outside the token's write prefixes");
            continue;
        }
        items.push(event.to_string());
    }
    let mut answer = gapless_api::IngestAnswer::default();
    // Each pass stores the batch or finds one conflicting item, which the
    // next leaves out: at most one pass per item, and in practice one.
    while !items.is_empty() {
        let owned = std::mem::take(&mut items);
        let (batch, refused, owned) = state
            .ask(move |ledger| {
                let (batch, refused) = build(ledger, &owned)?;
                Ok((batch, refused, owned))
            })
            .await?;
        let mut left_out: Vec<usize> = Vec::with_capacity(refused.len());
        for (i, reason) in refused {
            converted.skip(reason);
            left_out.push(i);
        }
        if batch.is_empty() {
            break;
        }
        match state.writer().append(batch).await {
            Ok(stored) => {
                answer = stored;
                break;
            }
            Err(e) if e.status() == StatusCode::CONFLICT => {
                let Some(at) = e.detail()["event"].as_u64().and_then(|n| n.checked_sub(1)) else {
                    return Err(e);
                };
                tracing::info!(error = e.message(), "OpenLineage event left out: conflict");
                converted.skip(
                    "a conflict: the run's event of this dataset is recorded with other content",
                );
                left_out.push(at as usize);
                items = owned
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| !left_out.contains(i))
                    .map(|(_, item)| item)
                    .collect();
            }
            Err(e) => return Err(e),
        }
    }
    if answer.accepted > 0 {
        state.changed();
    }
    Ok(Json(LineageAnswer {
        accepted: answer.accepted,
        duplicates: answer.duplicates,
        skipped: converted.skipped_count() as u64,
        skipped_reasons: converted
            .skipped
            .into_iter()
            .map(|(reason, count)| SkippedReason {
                reason,
                count: count as u64,
            })
            .collect(),
    }))
}
