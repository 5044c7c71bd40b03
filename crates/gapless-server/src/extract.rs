//! axum's extractors with their rejections answered as [`ApiError`] JSON.

use axum::extract::{FromRequest, FromRequestParts};
use axum::http::request::Parts;

use crate::ApiError;

/// The `{asset}` of a path, percent-decoded (so `s3:%2F%2Flake%2Forders` is
/// `s3://lake/orders`).
#[derive(Debug)]
pub(crate) struct AssetPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for AssetPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(asset) =
            axum::extract::Path::<String>::from_request_parts(parts, state).await?;
        Ok(AssetPath(asset))
    }
}

/// The query string as `T`.
#[derive(Debug, FromRequestParts)]
#[from_request(via(axum::extract::Query), rejection(ApiError))]
pub(crate) struct Query<T>(pub T);

/// A JSON body as `T`.
#[derive(Debug, FromRequest)]
#[from_request(via(axum::Json), rejection(ApiError))]
pub(crate) struct Json<T>(pub T);
