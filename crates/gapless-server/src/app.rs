//! The router: every route, its OpenAPI entry, and the layers around them.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Router};
use tower::ServiceBuilder;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::{DefaultMakeSpan, DefaultOnResponse, TraceLayer};
use tracing::Level;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::log_faults;
use crate::openapi::ApiDoc;
use crate::routes::{assets, events, ops, page, questions, rules};
use crate::{metrics, ApiError, AppState};

/// The routes with their OpenAPI document.
fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(events::post_events))
        .routes(routes!(assets::list))
        .routes(routes!(assets::show, assets::declare))
        .routes(routes!(questions::coverage))
        .routes(routes!(questions::windows))
        .routes(routes!(questions::segments))
        .routes(routes!(questions::buckets))
        .routes(routes!(questions::events))
        .routes(routes!(questions::frontier))
        .routes(routes!(questions::coverage_all))
        .routes(routes!(rules::list))
        .routes(routes!(rules::show, rules::put, rules::delete))
        .routes(routes!(rules::windows))
        .routes(routes!(rules::firings))
        .routes(routes!(rules::wait))
        .routes(routes!(ops::healthz))
        .routes(routes!(ops::metrics))
        .routes(routes!(ops::openapi))
}

/// The OpenAPI document of every route [`app`] serves.
pub fn openapi() -> utoipa::openapi::OpenApi {
    documented().into_openapi()
}

/// The whole service over `state`: the routes of SPEC §4, the web page of
/// §11 (outside the OpenAPI document: it is not API), JSON errors for
/// unknown routes and methods, and the layers: tokens stay out of logs,
/// tracing, faults logged with their cause, per-route metrics, the request
/// timeout and the body limit.
pub fn app(state: AppState) -> Router {
    let (router, doc) = documented().split_for_parts();
    let doc = doc.to_json().expect("the OpenAPI document serializes");
    // One stack, applied once: each `Router::layer` call wraps every route
    // in a boxed service of its own, which a request then clones and calls
    // once per layer. The first layer listed is the outermost.
    let layers = ServiceBuilder::new()
        .layer(SetSensitiveRequestHeadersLayer::new([AUTHORIZATION]))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(middleware::from_fn(log_faults))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            metrics::track,
        ))
        .layer(middleware::from_fn_with_state(state.clone(), timeout))
        .layer(middleware::from_fn_with_state(state.clone(), declared_size))
        .layer(DefaultBodyLimit::max(state.config().body_limit))
        .layer(Extension(ops::OpenApiJson(Arc::from(doc))));
    router
        .merge(page::router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(layers)
        .with_state(state)
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    let path = uri.path();
    let hint = match path.strip_prefix("/v1/assets/") {
        Some(rest) if rest.contains('/') => {
            " (percent-encode the asset name in the path: a / is %2F, a : is %3A)"
        }
        _ => "",
    };
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no such route: {method} {path}{hint}"),
    )
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method {method} is not allowed on {}", uri.path()),
    )
}

/// Answer 413 at once when a request declares a body larger than the limit,
/// before any of it is read: a client that sent `Expect: 100-continue` then
/// gets the answer instead of a connection closed under a body it is still
/// sending.
async fn declared_size(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(n) if n > state.config().body_limit as u64 => {
            ApiError::too_large(state.config().body_limit).into_response()
        }
        _ => next.run(request).await,
    }
}

/// Answer 503 when a request takes longer than the configured timeout. A
/// batch whose request timed out before its commit started is not stored.
async fn timeout(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let limit = state.config().request_timeout;
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the request took longer than the server's limit of {} s",
                limit.as_secs_f64()
            ),
        )
        .into_response(),
    }
}
