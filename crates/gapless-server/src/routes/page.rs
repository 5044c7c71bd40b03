//! The web page (SPEC §11): `GET /` and its files under `/ui/`, compiled
//! into the binary so that a server needs nothing beside it and the page
//! works offline.
//!
//! These routes need no token: the page holds no data, it asks the API for
//! it with the read token the user gives it. They are not API, so they are
//! not in the OpenAPI document.

use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::AppState;

/// Only the server's own files run, style and are fetched: no inline script
/// or style, no other origin, no framing (the page shows a token field).
pub(crate) const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; \
     form-action 'self'; frame-ancestors 'none'";

/// One embedded file and the content type it is served as.
struct File {
    body: &'static [u8],
    content_type: &'static str,
}

const INDEX: File = File {
    body: include_bytes!("../../web/index.html"),
    content_type: "text/html; charset=utf-8",
};
const APP_JS: File = File {
    body: include_bytes!("../../web/app.js"),
    content_type: "text/javascript; charset=utf-8",
};
const STYLE_CSS: File = File {
    body: include_bytes!("../../web/style.css"),
    content_type: "text/css; charset=utf-8",
};
const ICON_SVG: File = File {
    body: include_bytes!("../../web/icon.svg"),
    content_type: "image/svg+xml",
};

/// The page's routes, merged into the app beside the API.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(|| async { serve(&INDEX) }))
        .route("/ui/app.js", get(|| async { serve(&APP_JS) }))
        .route("/ui/style.css", get(|| async { serve(&STYLE_CSS) }))
        .route("/ui/icon.svg", get(|| async { serve(&ICON_SVG) }))
}

fn serve(file: &File) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static(file.content_type)),
            (CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)),
            (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
            (X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (REFERRER_POLICY, HeaderValue::from_static("no-referrer")),
            // A new binary serves a new page: never keep an old one.
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        file.body,
    )
        .into_response()
}
