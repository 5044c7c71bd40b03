//! The one error answer of the API, and the errors of starting a server.
//!
//! Every failure becomes `{"error": "<one line>", "detail": ...}` with a 4xx
//! status for the caller's mistakes (the same messages the command line
//! prints) and a 5xx status only for faults of the server, whose internals
//! travel with the response as a [`FaultCause`] for the server's middleware
//! to log ([`log_fault`]), never in the body. Conversions have no side effects.

use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Json;
use gapless_api::{Error, ErrorBody, ErrorKind};
use serde_json::{json, Value};

/// An error answer: a status, a one-line message, optional detail, and for
/// a fault the internal cause to log.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    detail: Value,
    cause: Option<String>,
}

/// The internal cause of a 5xx answer, carried in the response's
/// extensions from the handler to the logging layer.
#[derive(Debug, Clone)]
pub struct FaultCause(pub String);

/// Log `response` once, with its status, when it carries a [`FaultCause`]
/// (a fault of the server); the body the client gets says nothing of it.
/// Called by the server's one middleware for every answer.
pub(crate) fn log_fault(method: &Method, uri: &Uri, response: &Response) {
    if let Some(FaultCause(cause)) = response.extensions().get::<FaultCause>() {
        tracing::error!(status = response.status().as_u16(), %method, path = uri.path(), error = %cause, "request failed");
    }
}

impl ApiError {
    /// An error with `status` and the one-line `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            detail: Value::Null,
            cause: None,
        }
    }

    /// This error with `detail` (any JSON) added.
    #[must_use]
    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = detail;
        self
    }

    /// The detail (null when there is none).
    pub(crate) fn detail(&self) -> &Value {
        &self.detail
    }

    /// 400: the input is wrong.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 401: no or an unknown token.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    /// 403: the token may not do this.
    pub fn forbidden(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    /// 500 for a fault of the server: `internal` is logged, not sent.
    pub fn internal(internal: impl std::fmt::Display) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
            .with_cause(internal)
    }

    /// This error with an internal `cause` for the log.
    #[must_use]
    pub fn with_cause(mut self, cause: impl std::fmt::Display) -> Self {
        self.cause = Some(cause.to_string());
        self
    }

    /// 413: a body over the server's `limit` of bytes.
    pub fn too_large(limit: usize) -> Self {
        let mib = limit as f64 / (1024.0 * 1024.0);
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "request body is larger than the server's limit of {limit} bytes ({mib:.0} MiB): \
                 send the events in several requests"
            ),
        )
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The one-line message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let body = Json(ErrorBody {
            error: self.message,
            detail: self.detail,
        });
        let mut response = (self.status, body).into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(cause) = self.cause {
            response.extensions_mut().insert(FaultCause(cause));
        }
        response
    }
}

/// `e` and its causes, for the log.
fn chain(e: &Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        let detail = match e.position() {
            Some(p) => json!({ p.unit.as_str(): p.number }),
            None => Value::Null,
        };
        match e.kind() {
            ErrorKind::BadInput => ApiError::bad_request(e.to_string()).with_detail(detail),
            ErrorKind::NotFound => ApiError::new(StatusCode::NOT_FOUND, e.to_string()),
            ErrorKind::Conflict => {
                ApiError::new(StatusCode::CONFLICT, e.to_string()).with_detail(detail)
            }
            ErrorKind::Denied => ApiError::forbidden(e.to_string()),
            // The store's words for these name no connection details (it
            // logs those): "the ledger's database is unavailable", "the
            // ledger's storage is full".
            ErrorKind::Unavailable => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()).with_cause(chain(&e))
            }
            _ => ApiError::internal(chain(&e)),
        }
    }
}

macro_rules! from_rejection {
    ($($rejection:ty),*) => {$(
        impl From<$rejection> for ApiError {
            fn from(r: $rejection) -> Self {
                let status = r.status();
                if status.is_server_error() {
                    return ApiError::internal(r.body_text());
                }
                let message = r.body_text().lines().next().unwrap_or_default().to_string();
                ApiError::new(status, message)
            }
        }
    )*};
}

from_rejection!(PathRejection, QueryRejection, JsonRejection, BytesRejection);

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The configuration is unusable (e.g. a public address without tokens,
    /// a bad tokens file).
    #[error("{0}")]
    Config(String),
    /// Binding or serving failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The deliverer beside the server cannot start: its ledger cannot be
    /// read (the store's error, as it says it).
    #[error(transparent)]
    Delivery(Box<dyn std::error::Error + Send + Sync>),
}

#[cfg(test)]
mod tests {
    use gapless_api::{Position, Unit};

    use super::*;

    #[test]
    fn kinds_become_statuses_and_positions_the_detail() {
        let e = ApiError::from(Error::bad_input("bad").at(Position {
            unit: Unit::Line,
            number: 12,
        }));
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(e.message(), "line 12: bad");
        assert_eq!(e.detail, json!({"line": 12}));
        let e = ApiError::from(Error::conflict("conflict: x").at(Position {
            unit: Unit::Event,
            number: 2,
        }));
        assert_eq!(
            (e.status(), e.detail.clone()),
            (StatusCode::CONFLICT, json!({"event": 2}))
        );
        let e = ApiError::from(Error::bad_input("start: invalid"));
        assert_eq!(e.detail, Value::Null);
    }

    #[test]
    fn faults_keep_their_cause_out_of_the_body() {
        let e = ApiError::from(Error::fault(
            "storage failure: disk I/O error at /secret/path",
        ));
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(e.message(), "internal server error");
        let response = e.into_response();
        let cause = response.extensions().get::<FaultCause>().expect("a cause");
        assert!(cause.0.contains("/secret/path"));
        let e = ApiError::from(Error::unavailable("the ledger's storage is full"));
        assert_eq!(e.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(e.message(), "the ledger's storage is full");
    }
}
