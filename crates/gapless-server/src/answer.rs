//! The one way a route sends its answer: [`Json`], the answer serialized
//! into a plain `Vec<u8>` and sent as `application/json`.
//!
//! axum's own `Json` writes through `bytes::BufMut` into a `BytesMut` that
//! starts at 128 bytes: every small write of the serializer goes through a
//! `Writer` adapter, and a page of a hundred assets regrows and copies the
//! buffer several times. Here each write is a `Vec` extend, into a buffer
//! that starts big enough for most answers. A serialization failure is a
//! fault (500), as it is with axum's `Json`.

use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

use crate::ApiError;

/// How many bytes an answer's buffer starts with: a one-asset answer or a
/// few dozen gaps fit without regrowing, and an allocation this small
/// costs no more than a smaller one; a page of a hundred assets (tens of
/// kilobytes) regrows a few times, each a plain `Vec` reallocation.
const ANSWER_CAPACITY: usize = 4096;

/// An answer as its JSON body (`Content-Type: application/json`).
pub(crate) struct Json<T>(pub T);

impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(ANSWER_CAPACITY);
        match serde_json::to_writer(&mut body, &self.0) {
            Ok(()) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            Err(e) => ApiError::internal(e).into_response(),
        }
    }
}
