//! The router: every route, its OpenAPI entry, and the layers around them.

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower::ServiceBuilder;
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};
use tracing::Level;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::log_fault;
use crate::openapi::ApiDoc;
use crate::routes::{assets, events, lineage, ops, page, questions, retention, rules};
use crate::{metrics, ApiError, AppState};

/// The routes with their OpenAPI document.
fn documented() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(events::post_events))
        .routes(routes!(lineage::post_lineage))
        .routes(routes!(assets::list))
        .routes(routes!(assets::show, assets::declare))
        .routes(routes!(questions::coverage))
        .routes(routes!(questions::windows))
        .routes(routes!(questions::segments))
        .routes(routes!(questions::buckets))
        .routes(routes!(questions::events))
        .routes(routes!(questions::frontier))
        .routes(routes!(questions::coverage_all))
        .routes(routes!(questions::buckets_many))
        .routes(routes!(retention::prune))
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
/// unknown routes and methods, and the layers: tokens stay out of logs
/// (the header, and secret query values: `request_log.rs`), tracing, then [`guard`] (the declared size, the request timeout,
/// per-route metrics, faults logged with their cause), and the body limit.
pub fn app(state: AppState) -> Router {
    let (router, _) = documented().split_for_parts();
    // One stack, applied once: each `Router::layer` call wraps every route
    // in a boxed service of its own, which a request then clones and calls
    // once per layer. The first layer listed is the outermost.
    let layers = ServiceBuilder::new()
        .layer(SetSensitiveRequestHeadersLayer::new([AUTHORIZATION]))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(crate::request_log::span)
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        )
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(DefaultBodyLimit::max(state.config().body_limit));
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

/// Middleware, the server's own around every request, in this order: a
/// request that declares a body larger than the limit is answered 413 at
/// once, before any of it is read (a client that sent `Expect:
/// 100-continue` then gets the answer instead of a connection closed under
/// a body it is still sending); any other is answered within the request
/// timeout or with a 503 (a batch whose request timed out before its
/// commit started is not stored); every answer, those two included, is
/// timed by route for the metrics, and logged when it is a fault.
///
/// One function, not a layer for each step: every `from_fn` layer boxes the
/// request's future and clones the service below it, a cost callgrind
/// shows on every request, even `GET /healthz`.
async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    // A URI clone shares its bytes; the path as a String would be an
    // allocation on every request, for the rare fault.
    let uri = request.uri().clone();
    let timer = metrics::RouteTimer::start(&request);
    let config = state.config();
    let response = if declares_more_than(&request, config.body_limit) {
        ApiError::too_large(config.body_limit).into_response()
    } else {
        let limit = config.request_timeout;
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
    };
    timer.observe(state.metrics(), &response);
    log_fault(&method, &uri, &response);
    response
}

/// Whether `request`'s `Content-Length` is above `limit` bytes.
fn declares_more_than(request: &Request, limit: usize) -> bool {
    request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > limit as u64)
}
