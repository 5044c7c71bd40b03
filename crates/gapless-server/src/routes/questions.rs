//! The questions about one asset (`/v1/assets/{asset}/...`) and about
//! several at once (`POST /v1/coverage`): each route extracts its request
//! type, puts the asset of the path in, and asks the ledger.

use axum::extract::State;
use gapless_api::{
    Ask, CheckAnswer, CoverageRequest, EventsAnswer, EventsRequest, FrontierAnswer,
    FrontierRequest, MultiCheckAnswer, MultiCoverageRequest, SegmentsAnswer, SegmentsRequest,
    WindowsAnswer, WindowsRequest,
};
use gapless_api::{BucketsAnswer, BucketsRequest, MultiBucketsAnswer, MultiBucketsRequest};

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::{self, AssetPath, Query};
use crate::{ApiError, AppState};

/// Coverage of a range (as `check`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/coverage",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), CoverageRequest),
    responses(
        (status = 200, description = "The coverage; `complete` under the policy", body = CheckAnswer),
        (status = 400, description = "Bad range, policy or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn coverage(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<CoverageRequest>,
) -> Result<Json<CheckAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    if let Some(answer) = state.ledger().coverage_nonblocking(&q).await? {
        return Ok(Json(answer));
    }
    Ok(Json(state.ask_short(move |l| l.coverage(&q)).await?))
}

/// The grid windows that overlap a range (as `windows`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/windows",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), WindowsRequest),
    responses(
        (status = 200, description = "The windows in time order, each whole", body = WindowsAnswer),
        (status = 400, description = "Bad range, grid, policy or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn windows(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<WindowsRequest>,
) -> Result<Json<WindowsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.windows(&q)).await?))
}

/// The effective segments and the event that provides each (as `segments`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/segments",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), SegmentsRequest),
    responses(
        (status = 200, description = "The segments, clipped to the range", body = SegmentsAnswer),
        (status = 400, description = "Bad range or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn segments(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<SegmentsRequest>,
) -> Result<Json<SegmentsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.segments(&q)).await?))
}

/// A range cut into equal parts, each with its covered, retracted and
/// missing microseconds (as `buckets`): what a picture draws, read from the
/// coverage runs and the retractions, never the events.
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/buckets",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), BucketsRequest),
    responses(
        (status = 200, description = "The parts in time order, and their sums", body = BucketsAnswer),
        (status = 400, description = "Bad range, count or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn buckets(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<BucketsRequest>,
) -> Result<Json<BucketsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.buckets(&q)).await?))
}

/// One page of events in sequence order (as `events`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/events",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), EventsRequest),
    responses(
        (status = 200, description = "A page; `next` is the cursor of the next one", body = EventsAnswer),
        (status = 400, description = "Bad range, kind, limit or cursor", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn events(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<EventsRequest>,
) -> Result<Json<EventsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    Ok(Json(state.ask(move |l| l.events(&q)).await?))
}

/// Complete up to when (as `frontier`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/frontier",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), FrontierRequest),
    responses(
        (status = 200, description = "The end of the covered run from the origin", body = FrontierAnswer),
        (status = 400, description = "Bad origin or zone", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn frontier(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<FrontierRequest>,
) -> Result<Json<FrontierAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    if let Some(answer) = state.ledger().frontier_nonblocking(&q).await? {
        return Ok(Json(answer));
    }
    Ok(Json(state.ask_short(move |l| l.frontier(&q)).await?))
}

/// Coverage of several assets at once: an instant counts only where every
/// asset covers it.
#[utoipa::path(
    post,
    path = "/v1/coverage",
    tag = "questions",
    request_body = MultiCoverageRequest,
    responses(
        (status = 200, description = "The joint coverage", body = MultiCheckAnswer),
        (status = 400, description = "Bad range or no assets", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 413, description = "Body over the server's limit", body = gapless_api::ErrorBody),
        (status = 415, description = "A body that is not JSON", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn coverage_all(
    State(state): State<AppState>,
    caller: Caller,
    Query(_): Query<extract::NoParams>,
    extract::Json(q): extract::Json<MultiCoverageRequest>,
) -> Result<Json<MultiCheckAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(state.ask(move |l| l.coverage_all(&q)).await?))
}

/// The `buckets` answers of several assets and ranges at once, in the
/// order asked: the history bars of a page's rows in one request.
#[utoipa::path(
    post,
    path = "/v1/buckets",
    tag = "questions",
    request_body = MultiBucketsRequest,
    responses(
        (status = 200, description = "Each item's buckets, as GET /v1/assets/{asset}/buckets answers it", body = MultiBucketsAnswer),
        (status = 400, description = "A bad item, count or zone; no items, more than 1000, or more than 200000 parts in all", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 413, description = "Body over the server's limit", body = gapless_api::ErrorBody),
        (status = 415, description = "A body that is not JSON", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn buckets_many(
    State(state): State<AppState>,
    caller: Caller,
    Query(_): Query<extract::NoParams>,
    extract::Json(q): extract::Json<MultiBucketsRequest>,
) -> Result<Json<MultiBucketsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(state.ask(move |l| l.buckets_many(&q)).await?))
}
