//! `/healthz`, `/metrics`, `/openapi.json`.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::{metrics, ApiError, AppState};

/// Liveness: answers while the server runs. Needs no token.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "operations",
    responses((status = 200, description = "Alive", body = Health))
)]
pub(crate) async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// `/healthz`'s answer.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct Health {
    /// `ok`.
    status: &'static str,
}

/// Prometheus metrics (OpenMetrics text): events accepted and duplicate,
/// conflicts, commits and their sizes, request latency per route; per asset
/// the events stored and the end of the last covered run (from the ledger),
/// when this server last stored an event and the retractions it stored.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses(
        (status = 200, description = "The metrics", body = String, content_type = "application/openmetrics-text"),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn metrics(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<impl IntoResponse, ApiError> {
    caller.require(Scope::Read)?;
    let assets = state.ask(|l| l.asset_list()).await?;
    let text = state
        .metrics()
        .render(&assets)
        .map_err(ApiError::internal)?;
    Ok(([(CONTENT_TYPE, metrics::CONTENT_TYPE)], text))
}

/// This document.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "operations",
    responses(
        (status = 200, description = "The OpenAPI document", body = Object),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn openapi(caller: Caller) -> Result<impl IntoResponse, ApiError> {
    caller.require(Scope::Read)?;
    Ok(([(CONTENT_TYPE, "application/json")], document()))
}

/// The document, rendered on its first request: it is the same for every
/// server of this build, and a request that does not ask for it carries
/// nothing of it (an extension would be inserted into every request).
fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        crate::app::openapi()
            .to_json()
            .expect("the OpenAPI document serializes")
    })
}
