//! `POST /v1/prune`: removing the detail of old events and firings
//! (SPEC §3, `prune`).

use axum::extract::State;
use gapless_api::{Ask, PruneAnswer, PruneRequest};

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::{self, Query};
use crate::{ApiError, AppState};

/// Remove the events that end at or before `before` (retracted ones
/// excepted; of `asset`, or of every asset) and the firings recorded before
/// it whose delivery is not pending (none when `asset` is given), in
/// transactions of at most 5,000 rows; every coverage answer stays as it
/// was. Needs the admin scope.
#[utoipa::path(
    post,
    path = "/v1/prune",
    tag = "assets",
    request_body = PruneRequest,
    responses(
        (status = 200, description = "What was removed", body = PruneAnswer),
        (status = 400, description = "Bad instant, zone or asset name", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No admin scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 413, description = "Body over the server's limit", body = gapless_api::ErrorBody),
        (status = 415, description = "A body that is not JSON", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long (the prune goes on; sending it again is safe)", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn prune(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<extract::NoParams>, ApiError>,
    body: Result<extract::Json<PruneRequest>, ApiError>,
) -> Result<Json<PruneAnswer>, ApiError> {
    // Who may ask first, then what is asked (SPEC §4, access).
    caller.require(Scope::Admin)?;
    let (_, extract::Json(q)) = (query?, body?);
    let answer = state.ask(move |l| l.prune(&q)).await?;
    tracing::info!(
        before = %answer.before,
        asset = answer.asset.as_deref().unwrap_or("*"),
        events_removed = answer.events_removed,
        firings_removed = answer.firings_removed,
        assets_touched = answer.assets_touched,
        "pruned"
    );
    Ok(Json(answer))
}
