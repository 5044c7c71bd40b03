//! Rules and their firings (SPEC §7): `PUT`, `GET`, `DELETE
//! /v1/rules/{name}`, `GET /v1/rules`, `GET /v1/firings` (a long poll with
//! `wait`), and `GET /v1/assets/{asset}/wait`.
//!
//! The long polls wait on the server's own commits (they wake at once when
//! this server stores a batch or fires) and ask again every
//! [`RECHECK`] for what other replicas of a shared ledger stored; one
//! request waits at most [`MAX_HTTP_WAIT`], a longer wait asks again.

use std::time::Duration;

use axum::extract::State;
use gapless_api::params::{self, MAX_HTTP_WAIT};
use gapless_api::RulesRequest;
use gapless_api::{
    Ask, CheckAnswer, FiringsAnswer, FiringsRequest, RuleAnswer, RuleDeletedAnswer, RuleRequest,
    RuleSetAnswer, RuleSetRequest, RuleWindowsAnswer, RuleWindowsRequest, RulesAnswer, WaitRequest,
};

use crate::answer::Json;
use crate::auth::{Caller, Scope};
use crate::extract::{self, AssetPath, NamePath, Query};
use crate::{ApiError, AppState};

/// How often a long poll asks again without a commit of this server to
/// wake it: what other replicas of the ledger stored shows up within this.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

/// Record a rule, or new settings of one (as `rule set`); needs the admin
/// scope.
#[utoipa::path(
    put,
    path = "/v1/rules/{name}",
    tag = "rules",
    params(("name" = String, Path, description = "The rule's name")),
    request_body = RuleSetRequest,
    responses(
        (status = 200, description = "The rule now in force, what was done, and the firings of its windows already complete", body = RuleSetAnswer),
        (status = 400, description = "A bad field", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No admin scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen", body = gapless_api::ErrorBody),
        (status = 409, description = "The rule exists with another definition (delete it first)", body = gapless_api::ErrorBody),
        (status = 413, description = "Body over the server's limit", body = gapless_api::ErrorBody),
        (status = 415, description = "A body that is not JSON", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn put(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<NamePath, ApiError>,
    body: Result<extract::Json<RuleSetRequest>, ApiError>,
) -> Result<Json<RuleSetAnswer>, ApiError> {
    // Who may ask first, then what is asked (SPEC §4, access).
    caller.require(Scope::Admin)?;
    let (NamePath(name), extract::Json(mut q)) = (path?, body?);
    q.name = name;
    let answer = state.ask(move |l| l.set_rule(&q)).await?;
    state.changed();
    Ok(Json(answer))
}

/// One page of the rules in name order (as `rules`).
#[utoipa::path(
    get,
    path = "/v1/rules",
    tag = "rules",
    params(RulesRequest),
    responses(
        (status = 200, description = "A page of rules, by name; `next` is the cursor of the next one", body = RulesAnswer),
        (status = 400, description = "Bad limit or cursor, a prefix with a control character, or an unknown query parameter", body = gapless_api::ErrorBody),
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
    Query(q): Query<RulesRequest>,
) -> Result<Json<RulesAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(state.ask(move |l| l.rules(&q)).await?))
}

/// One rule (as `rule show`).
#[utoipa::path(
    get,
    path = "/v1/rules/{name}",
    tag = "rules",
    params(("name" = String, Path, description = "The rule's name")),
    responses(
        (status = 200, description = "The rule", body = RuleAnswer),
        (status = 400, description = "A name no rule can have", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An unknown rule (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn show(
    State(state): State<AppState>,
    caller: Caller,
    NamePath(name): NamePath,
) -> Result<Json<RuleAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    Ok(Json(
        state.ask(move |l| l.rule(&RuleRequest { name })).await?,
    ))
}

/// A rule's windows that overlap a range, each judged now on the joint
/// coverage of its assets (as `rule windows`).
#[utoipa::path(
    get,
    path = "/v1/rules/{name}/windows",
    tag = "rules",
    params(("name" = String, Path, description = "The rule's name"), RuleWindowsRequest),
    responses(
        (status = 200, description = "The rule's windows in time order", body = RuleWindowsAnswer),
        (status = 400, description = "A name no rule can have, a bad range or zone, or more windows than the limit", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An unknown rule (the message names the nearest one)", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn windows(
    State(state): State<AppState>,
    caller: Caller,
    NamePath(name): NamePath,
    Query(mut q): Query<RuleWindowsRequest>,
) -> Result<Json<RuleWindowsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.name = name;
    Ok(Json(state.ask(move |l| l.rule_windows(&q)).await?))
}

/// Remove a rule and its firings (as `rule delete`); needs the admin scope.
#[utoipa::path(
    delete,
    path = "/v1/rules/{name}",
    tag = "rules",
    params(("name" = String, Path, description = "The rule's name")),
    responses(
        (status = 200, description = "Removed", body = RuleDeletedAnswer),
        (status = 400, description = "A name no rule can have", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No admin scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An unknown rule", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    path: Result<NamePath, ApiError>,
) -> Result<Json<RuleDeletedAnswer>, ApiError> {
    caller.require(Scope::Admin)?;
    let NamePath(name) = path?;
    Ok(Json(
        state
            .ask(move |l| l.delete_rule(&RuleRequest { name }))
            .await?,
    ))
}

/// Wait for what `ready` finds: ask, and until it is ready or `wait` has
/// passed, ask again on each commit of this server or every [`RECHECK`].
async fn long_poll<T, F>(
    state: &AppState,
    wait: Duration,
    ask: F,
    ready: fn(&T) -> bool,
) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: Fn(&gapless_ledger::Ledger) -> gapless_api::Result<T> + Clone + Send + 'static,
{
    let give_up = tokio::time::Instant::now() + wait.min(MAX_HTTP_WAIT);
    let mut changes = state.changes();
    loop {
        // Marked seen before asking: a commit during the question wakes
        // the next wait at once.
        changes.borrow_and_update();
        let answer = state.ask_short(ask.clone()).await?;
        let now = tokio::time::Instant::now();
        if ready(&answer) || now >= give_up {
            return Ok(answer);
        }
        let nap = (give_up - now).min(RECHECK);
        tokio::select! {
            _ = changes.changed() => {}
            () = tokio::time::sleep(nap) => {}
        }
    }
}

/// One page of firings after a cursor (as `firings`); with `wait`, a long
/// poll that answers as soon as a firing after the cursor exists, or with
/// an empty page after the wait (at most 20 s a request).
#[utoipa::path(
    get,
    path = "/v1/firings",
    tag = "rules",
    params(FiringsRequest),
    responses(
        (status = 200, description = "The firings in ledger order, and the cursor of the next page", body = FiringsAnswer),
        (status = 400, description = "A name no rule can have, a bad cursor, limit or wait", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An unknown rule", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn firings(
    State(state): State<AppState>,
    caller: Caller,
    Query(q): Query<FiringsRequest>,
) -> Result<Json<FiringsAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    let wait = match q.wait.as_deref() {
        Some(w) => params::wait("wait", w).map_err(ApiError::from)?,
        None => Duration::ZERO,
    };
    let page = FiringsRequest { wait: None, ..q };
    let ask = move |l: &gapless_ledger::Ledger| l.firings(&page);
    Ok(Json(
        long_poll(&state, wait, ask, |a: &FiringsAnswer| !a.firings.is_empty()).await?,
    ))
}

/// Wait until a range is complete under a policy (as `wait`): the check as
/// soon as it is complete, or after `timeout` (at most 20 s a request;
/// `complete` false then).
#[utoipa::path(
    get,
    path = "/v1/assets/{asset}/wait",
    tag = "rules",
    params(("asset" = String, Path, description = "The asset, percent-encoded"), WaitRequest),
    responses(
        (status = 200, description = "The last check; `complete` says whether the range completed in time", body = CheckAnswer),
        (status = 400, description = "Bad range, policy, zone or timeout", body = gapless_api::ErrorBody),
        (status = 401, description = "Missing or invalid token", body = gapless_api::ErrorBody),
        (status = 403, description = "No read scope", body = gapless_api::ErrorBody),
        (status = 404, description = "An asset the ledger has never seen", body = gapless_api::ErrorBody),
        (status = 500, description = "A fault of the server", body = gapless_api::ErrorBody),
        (status = 503, description = "The ledger is unavailable, or the request took too long", body = gapless_api::ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn wait(
    State(state): State<AppState>,
    caller: Caller,
    AssetPath(asset): AssetPath,
    Query(mut q): Query<WaitRequest>,
) -> Result<Json<CheckAnswer>, ApiError> {
    caller.require(Scope::Read)?;
    q.asset = asset;
    let timeout = match q.timeout.as_deref() {
        Some(t) => params::wait("timeout", t).map_err(ApiError::from)?,
        None => MAX_HTTP_WAIT,
    };
    // Each check answers at once; the waiting is the long poll's.
    let check = q.check();
    let ask = move |l: &gapless_ledger::Ledger| l.coverage(&check);
    Ok(Json(
        long_poll(&state, timeout, ask, |a: &CheckAnswer| a.complete).await?,
    ))
}
