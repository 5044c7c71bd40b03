//! The one way a route sends its answer: [`Json`], the answer serialized
//! into a plain `Vec<u8>` and sent as `application/json`.
//!
//! axum's own `Json` writes through `bytes::BufMut` into a `BytesMut` that
//! starts at 128 bytes: every small write of the serializer goes through a
//! `Writer` adapter, and a page of a hundred assets regrows and copies the
//! buffer several times. Here the answer is written into a buffer kept by
//! the thread from one answer to the next, already as big as the thread's
//! answers have been, and then copied once into a body of its exact size.
//! A serialization failure is a fault (500), as it is with axum's `Json`.

use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};

use crate::ApiError;

/// How many bytes a thread's answer buffer starts with: a one-asset answer
/// or a few dozen gaps fit without regrowing.
const ANSWER_CAPACITY: usize = 4096;

/// The largest buffer a thread keeps after an answer: a page of a hundred
/// assets or rules (tens of kilobytes) is written without regrowing, while
/// one rare answer of many megabytes (a page of 10,000 events) does not
/// stay allocated by every thread that ever wrote one.
const KEPT_CAPACITY: usize = 1 << 20;

thread_local! {
    static BUFFER: std::cell::RefCell<Vec<u8>> =
        std::cell::RefCell::new(Vec::with_capacity(ANSWER_CAPACITY));
}

/// An answer as its JSON body (`Content-Type: application/json`).
pub(crate) struct Json<T>(pub T);

impl<T: serde::Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        let written = BUFFER.with_borrow_mut(|buffer| {
            buffer.clear();
            let written = serde_json::to_writer(&mut *buffer, &self.0).map(|()| buffer.to_vec());
            if buffer.capacity() > KEPT_CAPACITY {
                *buffer = Vec::with_capacity(ANSWER_CAPACITY);
            }
            written
        });
        match written {
            Ok(body) => (
                [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                body,
            )
                .into_response(),
            Err(e) => ApiError::internal(e).into_response(),
        }
    }
}
