//! The questions about one asset (`/v1/assets/{asset}/...`) and about
//! several at once (`POST /v1/coverage`).

use axum::extract::State;
use axum::Json;
use gapless_ledger::{
    params, CheckAnswer, EventsAnswer, FrontierAnswer, MultiCheckAnswer, SegmentsAnswer,
    WindowsAnswer,
};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use crate::auth::{Caller, Scope};
use crate::extract::{self, AssetPath, Query};
use crate::{ApiError, AppState};

/// `?start=&end=&policy=&tz=`
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct CoverageParams {
    /// Start of the range: RFC 3339, a naive date-time (UTC), or a bare date
    /// (midnight in `tz`).
    start: String,
    /// End of the range, exclusive.
    end: String,
    /// `full` (default), `ratio>=R` or `gap<D`.
    policy: Option<String>,
    /// IANA time zone for bare dates (default UTC).
    tz: Option<String>,
}

/// `?start=&end=&every=&tz=&policy=`
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowsParams {
    /// Start of the range.
    start: String,
    /// End of the range, exclusive.
    end: String,
    /// The grid: `Nm`, `Nh`, `Nd`, `1w`, `Nmo`, `1y`.
    every: String,
    /// IANA time zone of the grid and of bare dates (default UTC).
    tz: Option<String>,
    /// `full` (default), `ratio>=R` or `gap<D`.
    policy: Option<String>,
}

/// `?start=&end=&tz=`
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct RangeParams {
    /// Start of the range.
    start: String,
    /// End of the range, exclusive.
    end: String,
    /// IANA time zone for bare dates (default UTC).
    tz: Option<String>,
}

/// `?start=&end=&kind=&limit=&after=&tz=`
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsParams {
    /// Only events overlapping `[start, end)` (give both or neither).
    start: Option<String>,
    /// End of the range, exclusive.
    end: Option<String>,
    /// `landed` or `retracted`.
    kind: Option<String>,
    /// Page size, 1 to 10000 (default 1000).
    limit: Option<usize>,
    /// The `next` of the previous page.
    after: Option<String>,
    /// IANA time zone for bare dates (default UTC).
    tz: Option<String>,
}

/// `?origin=&tz=`
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub(crate) struct FrontierParams {
    /// Where the covered run is looked for.
    origin: String,
    /// IANA time zone for a bare date (default UTC).
    tz: Option<String>,
}

/// `POST /v1/coverage`'s body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MultiCoverageRequest {
    /// The assets; an instant counts only where every one covers it.
    assets: Vec<String>,
    /// Start of the range.
    start: String,
    /// End of the range, exclusive.
    end: String,
    /// IANA time zone for bare dates (default UTC).
    #[serde(default)]
    tz: Option<String>,
}

/// Coverage of a range (as `check`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/coverage",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), CoverageParams),
    responses(
        (status = 200, description = "The coverage; `complete` under the policy", body = crate::openapi::CheckAnswer),
        (status = 400, description = "Bad range, policy or zone", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn coverage(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(q): Query<CoverageParams>,
) -> Result<Json<CheckAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask_short(move |ledger| {
            let (zone, _) = params::time_zone(q.tz.as_deref())?;
            let range = params::range(&q.start, &q.end, Some(&zone))?;
            let policy = params::policy(q.policy.as_deref())?;
            ledger.check(&asset, range, &policy)
        })
        .await?;
    Ok(Json(answer))
}

/// The grid windows that overlap a range (as `windows`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/windows",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), WindowsParams),
    responses(
        (status = 200, description = "The windows in time order, each whole", body = crate::openapi::WindowsAnswer),
        (status = 400, description = "Bad range, grid, policy or zone", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn windows(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(q): Query<WindowsParams>,
) -> Result<Json<WindowsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask(move |ledger| {
            let (zone, tz_name) = params::time_zone(q.tz.as_deref())?;
            let range = params::range(&q.start, &q.end, Some(&zone))?;
            let grid = params::grid(&q.every)?;
            let policy = params::policy(q.policy.as_deref())?;
            ledger.windows(&asset, range, &grid, (&zone, &tz_name), &policy)
        })
        .await?;
    Ok(Json(answer))
}

/// The effective segments and the event that provides each (as `segments`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/segments",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), RangeParams),
    responses(
        (status = 200, description = "The segments, clipped to the range", body = crate::openapi::SegmentsAnswer),
        (status = 400, description = "Bad range or zone", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn segments(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(q): Query<RangeParams>,
) -> Result<Json<SegmentsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask(move |ledger| {
            let (zone, _) = params::time_zone(q.tz.as_deref())?;
            let range = params::range(&q.start, &q.end, Some(&zone))?;
            ledger.segments(&asset, range)
        })
        .await?;
    Ok(Json(answer))
}

/// One page of events in sequence order (as `events`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/events",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), EventsParams),
    responses(
        (status = 200, description = "A page; `next` is the cursor of the next one", body = crate::openapi::EventsAnswer),
        (status = 400, description = "Bad range, kind, limit or cursor", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn events(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(q): Query<EventsParams>,
) -> Result<Json<EventsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask(move |ledger| {
            let (zone, _) = params::time_zone(q.tz.as_deref())?;
            let range = match (&q.start, &q.end) {
                (Some(s), Some(e)) => Some(params::range(s, e, Some(&zone))?),
                (None, None) => None,
                _ => {
                    return Err(gapless_ledger::LedgerError::BadInput(
                        "range: give both start and end, or neither".into(),
                    ))
                }
            };
            let kind = q.kind.as_deref().map(params::kind).transpose()?;
            let after = q.after.as_deref().map(params::cursor).transpose()?;
            ledger.events(&asset, range, kind, q.limit, after)
        })
        .await?;
    Ok(Json(answer))
}

/// Complete up to when (as `frontier`).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/frontier",
    tag = "questions",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), FrontierParams),
    responses(
        (status = 200, description = "The end of the covered run from the origin", body = crate::openapi::FrontierAnswer),
        (status = 400, description = "Bad origin or zone", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn frontier(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(q): Query<FrontierParams>,
) -> Result<Json<FrontierAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask_short(move |ledger| {
            let (zone, _) = params::time_zone(q.tz.as_deref())?;
            let origin = params::instant("origin", &q.origin, Some(&zone))?;
            ledger.frontier(&asset, origin)
        })
        .await?;
    Ok(Json(answer))
}

/// Coverage of several assets at once: an instant counts only where every
/// asset covers it.
#[utoipa::path(
    post,
    path = "/v1/coverage",
    tag = "questions",
    request_body = MultiCoverageRequest,
    responses(
        (status = 200, description = "The joint coverage", body = crate::openapi::MultiCheckAnswer),
        (status = 400, description = "Bad range or no assets", body = crate::openapi::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = crate::openapi::ErrorBody),
        (status = 403, description = "No read scope", body = crate::openapi::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn coverage_all(
    State(state): State<AppState>,
    caller: Caller,
    extract::Json(body): extract::Json<MultiCoverageRequest>,
) -> Result<Json<MultiCheckAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let answer = state
        .ask(move |ledger| {
            let (zone, _) = params::time_zone(body.tz.as_deref())?;
            let range = params::range(&body.start, &body.end, Some(&zone))?;
            ledger.check_all(&body.assets, range)
        })
        .await?;
    Ok(Json(answer))
}
