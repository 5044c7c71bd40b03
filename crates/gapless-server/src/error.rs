//! The one error answer of the API, and the errors of starting a server.
//!
//! Every failure becomes `{"error": "<one line>", "detail": ...}` with a 4xx
//! status for the caller's mistakes (the same messages the command line
//! prints) and a 5xx status only for faults of the server, whose internals
//! are logged, never sent.

use axum::extract::rejection::{BytesRejection, JsonRejection, PathRejection, QueryRejection};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use gapless_ledger::LedgerError;
use serde_json::{json, Value};

/// An error answer: a status, a one-line message and optional detail.
#[derive(Debug, Clone)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    detail: Value,
}

impl ApiError {
    /// An error with `status` and the one-line `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            detail: Value::Null,
        }
    }

    /// This error with `detail` (any JSON) added.
    #[must_use]
    pub fn with_detail(mut self, detail: Value) -> Self {
        self.detail = detail;
        self
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
        tracing::error!(error = %internal, "internal error");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
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
        let body = Json(json!({"error": self.message, "detail": self.detail}));
        let mut response = (self.status, body).into_response();
        if unauthorized {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}

/// `line 3: ...` or `event 3: ...` names a position: put it in the detail too.
fn position_detail(message: &str) -> Value {
    for unit in ["line", "event"] {
        if let Some(rest) = message.strip_prefix(unit).and_then(|r| r.strip_prefix(' ')) {
            if let Some((n, _)) = rest.split_once(':') {
                if let Ok(n) = n.parse::<u64>() {
                    return json!({ unit: n });
                }
            }
        }
    }
    Value::Null
}

impl From<LedgerError> for ApiError {
    fn from(e: LedgerError) -> Self {
        match e {
            LedgerError::BadInput(m) => {
                let detail = position_detail(&m);
                ApiError::bad_request(m).with_detail(detail)
            }
            LedgerError::Conflict(m) => {
                let detail = position_detail(&m);
                ApiError::new(StatusCode::CONFLICT, m).with_detail(detail)
            }
            LedgerError::Unavailable(m) => {
                tracing::error!(error = %m, "ledger unavailable");
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "the ledger is unavailable")
            }
            LedgerError::Fault(m) => ApiError::internal(m),
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
                let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    "request body is larger than the server's limit".to_string()
                } else {
                    r.body_text().lines().next().unwrap_or_default().to_string()
                };
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_put_in_the_detail() {
        assert_eq!(position_detail("line 12: bad"), json!({"line": 12}));
        assert_eq!(position_detail("event 2: conflict: x"), json!({"event": 2}));
        assert_eq!(position_detail("start: invalid"), Value::Null);
        assert_eq!(position_detail("lines 2: x"), Value::Null);
    }
}
