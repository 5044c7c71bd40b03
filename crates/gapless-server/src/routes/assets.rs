//! `GET /v1/assets`, `GET` and `PUT /v1/assets/{asset}`.

use axum::extract::State;
use gapless_api::{
    Ask, AssetAnswer, AssetRequest, AssetsAnswer, AssetsRequest, DeclAnswer, DeclareRequest,
};

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::{self, AssetPath, Query};
use crate::{ApiError, AppState};

/// One page of the assets in name order, with their event counts, covered
/// extent and overview (frontier, covered share of the last day and week).
#[utoipa::path(
    get,
    path = "/v1/assets",
    tag = "assets",
    params(AssetsRequest),
    responses(
        (status = 200, description = "A page of assets, by name; `next` is the cursor of the next one", body = AssetsAnswer),
        (status = 400, description = "Bad limit or cursor, a prefix or substring with a control character, or an unknown query parameter", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<AssetsRequest>,
) -> Result<Json<AssetsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(state.ask(move |l| l.assets(&q)).await?))
}

/// One asset: its declaration, event count and covered extent (as
/// `asset show`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}",
    tag = "assets",
    params(("asset" = String, Path, description = "The asset, percent-encoded")),
    responses(
        (status = 200, description = "The asset", body = AssetAnswer),
        (status = 400, description = "An asset name that is not UTF-8, or a query parameter", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn show(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<AssetRequest>,
) -> Result<Json<AssetAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.asset(&q)).await?))
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
        (status = 200, description = "The declaration now in force", body = DeclAnswer),
        (status = 400, description = "Bad name, span or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No admin scope", body = gapless_api::ErrorBody),
        (status = 413, description = "Body over the server's limit", body = gapless_api::ErrorBody),
        (status = 415, description = "A body that is not JSON", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn declare(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<AssetPath, ApiError>,
    query: Result<Query<extract::NoParams>, ApiError>,
    body: Result<extract::Json<DeclareRequest>, ApiError>,
) -> Result<Json<DeclAnswer>, ApiError> {
    // Who may ask first, then what is asked (SPEC §4, access).
    caller.require(Scope::Admin)?;
    let (AssetPath(asset), _, extract::Json(mut q)) = (path?, query?, body?);
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.declare(&q)).await?))
}
