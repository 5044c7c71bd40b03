//! `GET /v1/assets` and `PUT /v1/assets/{asset}`.

use axum::extract::State;
use axum::Json;
use gapless_ledger::{AssetsAnswer, DeclAnswer};
use serde::Deserialize;
use utoipa::ToSchema;

use crate::auth::{Caller, Scope};
use crate::extract::{self, AssetPath};
use crate::{ApiError, AppState};

/// `PUT /v1/assets/{asset}`'s body: what the asset declares.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeclareRequest {
    /// The span of a discrete `partition_key` (an ISO 8601 duration such as
    /// `PT5M`, or a grid-style `5m`), or null for none.
    #[serde(default)]
    key_span: Option<String>,
    /// The IANA time zone of the asset's keys and bare dates (default UTC).
    #[serde(default)]
    tz: Option<String>,
}

/// The assets with their event counts and covered extent.
#[utoipa::path(
    get,
    path = "/v1/assets",
    tag = "assets",
    responses(
        (status = 200, description = "Every asset, by name", body = crate::openapi::AssetsAnswer),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<AssetsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(state.ask(|ledger| ledger.assets()).await?))
}

/// Declare an asset's discrete key span and time zone (as `asset set`);
/// needs the admin scope.
#[utoipa::path(
    put,
    path = "/v1/assets/{asset}",
    tag = "assets",
    params(("asset" = String, Path, description = "The asset, percent-encoded")),
    request_body = DeclareRequest,
    responses(
        (status = 200, description = "The declaration now in force", body = crate::openapi::DeclAnswer),
        (status = 400, description = "Bad name, span or zone", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No admin scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn declare(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    extract::Json(body): extract::Json<DeclareRequest>,
) -> Result<Json<DeclAnswer>, ApiError> {
    caller.require(Scope::Admin)?;
    let answer = state
        .ask(move |ledger| ledger.declare(&asset, body.key_span.as_deref(), body.tz.as_deref()))
        .await?;
    Ok(Json(answer))
}
