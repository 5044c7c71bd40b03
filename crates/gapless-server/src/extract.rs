//! The request extractors, answering every malformed request with the
//! command line's wording rather than the framework's: the query string and
//! JSON bodies are checked against the request type's own OpenAPI
//! description (the fields it has, which are required, their JSON types)
//! before serde reads them, so a client learns which parameter or field is
//! wrong and what to send instead.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;
use serde_json::Value;
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{ArrayItems, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::openapi::Required;
use utoipa::{IntoParams, ToSchema};

use crate::{ApiError, AppState};

/// The `{asset}` of a path, percent-decoded (so `s3:%2F%2Flake%2Forders` is
/// `s3://lake/orders`).
#[derive(Debug)]
pub(crate) struct AssetPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for AssetPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match axum::extract::Path::<String>::from_request_parts(parts, state).await {
            Ok(axum::extract::Path(asset)) => Ok(AssetPath(asset)),
            // In the command line's words, not the framework's ("Invalid
            // URL: Invalid UTF-8 in `asset`"): the one way a routed
            // `{asset}` fails is percent-encoding that is not UTF-8.
            Err(r) if r.status().is_client_error() => Err(ApiError::bad_request(
                "invalid asset name in the path: it is not UTF-8 once percent-decoded; \
                 percent-encode the name's UTF-8 bytes (a / is %2F)",
            )),
            Err(r) => Err(ApiError::from(r)),
        }
    }
}

/// The `{name}` of a rule's path.
#[derive(Debug)]
pub(crate) struct NamePath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for NamePath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(name) =
            axum::extract::Path::<String>::from_request_parts(parts, state).await?;
        Ok(NamePath(name))
    }
}

/// The query string as `T`: every parameter one `T` names, at most once,
/// the required ones present.
#[derive(Debug)]
pub(crate) struct Query<T>(pub T);

/// What a query string may hold for one request type, read once from its
/// OpenAPI parameters (building those allocates a whole description, too
/// much for every request).
#[derive(Debug)]
struct QueryShape {
    names: Vec<String>,
    /// The required parameters, each with the first sentence of its
    /// description as the hint.
    required: Vec<(String, String)>,
    booleans: Vec<String>,
}

impl QueryShape {
    fn of<T: IntoParams + 'static>() -> Arc<QueryShape> {
        static SHAPES: OnceLock<RwLock<HashMap<TypeId, Arc<QueryShape>>>> = OnceLock::new();
        let shapes = SHAPES.get_or_init(Default::default);
        let id = TypeId::of::<T>();
        if let Some(shape) = shapes.read().expect("not poisoned").get(&id) {
            return shape.clone();
        }
        let params = T::into_params(|| Some(ParameterIn::Query));
        let shape = Arc::new(QueryShape {
            names: params.iter().map(|p| p.name.clone()).collect(),
            required: params
                .iter()
                .filter(|p| p.required == Required::True)
                .map(|p| {
                    let about = p.description.as_deref().unwrap_or_default();
                    (p.name.clone(), first_sentence(about))
                })
                .collect(),
            booleans: params
                .iter()
                .filter(|p| {
                    matches!(&p.schema, Some(RefOr::T(Schema::Object(o))) if o.schema_type == SchemaType::Type(Type::Boolean))
                })
                .map(|p| p.name.clone())
                .collect(),
        });
        shapes
            .write()
            .expect("not poisoned")
            .insert(id, shape.clone());
        shape
    }
}

impl<S: Send + Sync, T: DeserializeOwned + IntoParams + 'static> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        query(parts.uri.query().unwrap_or_default()).map(Query)
    }
}

/// The query string `raw` as `T`.
fn query<T: DeserializeOwned + IntoParams + 'static>(raw: &str) -> Result<T, ApiError> {
    // Every request type refuses unknown and repeated fields and needs its
    // required ones, so a query serde reads is one the checks of
    // [`refusal`] pass: they run only to word a refusal, and a question's
    // query is decoded once.
    T::deserialize(serde_urlencoded::Deserializer::new(form_urlencoded::parse(
        raw.as_bytes(),
    )))
    .map_err(|e| {
        refusal::<T>(raw).unwrap_or_else(|| ApiError::bad_request(format!("invalid query: {e}")))
    })
}

/// Why the query string `raw` does not fit `T`'s parameters, in the
/// command line's words: an unknown or repeated parameter, a boolean that
/// is neither true nor false, a required one missing; `None` when it fits
/// them (a value serde could not read is then what is wrong).
fn refusal<T: IntoParams + 'static>(raw: &str) -> Option<ApiError> {
    let pairs: Vec<_> = form_urlencoded::parse(raw.as_bytes()).collect();
    let shape = QueryShape::of::<T>();
    for (i, (name, value)) in pairs.iter().enumerate() {
        if !shape.names.iter().any(|n| n == name) {
            let takes = if shape.names.is_empty() {
                "no query parameters".to_string()
            } else {
                shape.names.join(", ")
            };
            return Some(ApiError::bad_request(format!(
                "unknown query parameter {name:?}: this question takes {takes}"
            )));
        }
        if pairs[..i].iter().any(|(n, _)| n == name) {
            return Some(ApiError::bad_request(format!(
                "query parameter {name:?} is given more than once"
            )));
        }
        if shape.booleans.iter().any(|n| n == name) && value != "true" && value != "false" {
            return Some(ApiError::bad_request(format!(
                "query parameter {name:?}: give true or false, not {value:?}"
            )));
        }
    }
    shape.required.iter().find_map(|(name, hint)| {
        (!pairs.iter().any(|(n, _)| n == name))
            .then(|| ApiError::bad_request(format!("missing query parameter {name:?}: {hint}")))
    })
}

/// The query of a route that takes no parameters: with `Query`, any
/// parameter is refused as unknown (SPEC §4), not ignored.
#[derive(Debug, serde::Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(crate) struct NoParams {}

/// A JSON object body as `T`: sent as `application/json`, an object, only
/// the fields `T` has, each of its type, the required ones present.
#[derive(Debug)]
pub(crate) struct Json<T>(pub T);

impl<T: DeserializeOwned + ToSchema> FromRequest<AppState> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, ApiError> {
        let content_type = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            });
        match content_type.as_deref() {
            Some("application/json") => {}
            Some(t) if t.ends_with("+json") => {}
            other => {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!(
                        "unsupported content type {:?}: send the body as application/json",
                        other.unwrap_or("none")
                    ),
                ))
            }
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|r| body_error(r, state))?;
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::bad_request(format!("the body is not JSON: {e}")))?;
        check_object::<T>(&value)?;
        serde_json::from_value(value)
            .map(Json)
            .map_err(|e| ApiError::bad_request(format!("invalid body: {e}")))
    }
}

/// A body that could not be read: over the limit (413, saying the limit),
/// or cut off.
pub(crate) fn body_error(
    r: axum::extract::rejection::BytesRejection,
    state: &AppState,
) -> ApiError {
    if r.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::too_large(state.config().body_limit)
    } else {
        ApiError::from(r)
    }
}

/// `value` against `T`'s schema: an object with known fields of the right
/// JSON types and every required field.
fn check_object<T: ToSchema>(value: &Value) -> Result<(), ApiError> {
    let RefOr::T(Schema::Object(schema)) = T::schema() else {
        return Ok(());
    };
    let fields: Vec<&str> = schema.properties.keys().map(String::as_str).collect();
    let Value::Object(object) = value else {
        return Err(ApiError::bad_request(format!(
            "the body must be a JSON object with the fields {}, found {}",
            fields.join(", "),
            json_type(value)
        )));
    };
    for (name, field) in object {
        let Some(property) = schema.properties.get(name) else {
            return Err(ApiError::bad_request(format!(
                "unknown field {name:?}: the body takes {}",
                fields.join(", ")
            )));
        };
        if let Some(expected) = mismatch(property, field) {
            return Err(ApiError::bad_request(format!(
                "field {name:?}: expected {expected}, found {}",
                json_type(field)
            )));
        }
    }
    for name in &schema.required {
        if !object.contains_key(name) {
            let about = match schema.properties.get(name) {
                Some(RefOr::T(Schema::Object(o))) => o.description.clone(),
                Some(RefOr::T(Schema::Array(a))) => a.description.clone(),
                _ => None,
            };
            return Err(ApiError::bad_request(format!(
                "missing field {name:?}: {}",
                first_sentence(about.as_deref().unwrap_or_default())
            )));
        }
    }
    Ok(())
}

/// What `property` expects when `value` is not of its JSON type.
fn mismatch(property: &RefOr<Schema>, value: &Value) -> Option<&'static str> {
    let accepts = |types: &SchemaType, v: &Value| match types {
        SchemaType::Type(t) => is(t, v),
        SchemaType::Array(ts) => ts.iter().any(|t| is(t, v)),
        SchemaType::AnyValue => true,
    };
    match property {
        RefOr::T(Schema::Object(o)) => {
            (!accepts(&o.schema_type, value)).then_some(match &o.schema_type {
                SchemaType::Type(Type::String) => "a string",
                SchemaType::Array(ts) if ts.contains(&Type::String) => "a string or null",
                SchemaType::Type(Type::Number) => "a number",
                SchemaType::Array(ts) if ts.contains(&Type::Number) => "a number or null",
                _ => "another type",
            })
        }
        RefOr::T(Schema::Array(a)) => {
            let Value::Array(items) = value else {
                return (!accepts(&a.schema_type, value)).then_some("an array");
            };
            let item_is_string = matches!(
                &a.items,
                ArrayItems::RefOrSchema(s) if matches!(s.as_ref(), RefOr::T(Schema::Object(o)) if o.schema_type == SchemaType::Type(Type::String))
            );
            (item_is_string && items.iter().any(|i| !i.is_string()))
                .then_some("an array of strings")
        }
        _ => None,
    }
}

fn is(t: &Type, v: &Value) -> bool {
    match t {
        Type::Null => v.is_null(),
        Type::String => v.is_string(),
        Type::Boolean => v.is_boolean(),
        Type::Integer => v.is_i64() || v.is_u64(),
        Type::Number => v.is_number(),
        Type::Array => v.is_array(),
        Type::Object => v.is_object(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The first sentence of a field's description, as the hint of what to send.
fn first_sentence(text: &str) -> String {
    let one_line = text.replace('\n', " ");
    match one_line.find(". ") {
        Some(i) => one_line[..i].to_string(),
        None => one_line.trim_end_matches('.').to_string(),
    }
}

#[cfg(test)]
mod tests {
    use gapless_api::*;

    use super::*;

    /// A value serde reads for parameter `name`: `true` for a boolean,
    /// `x` for any other.
    fn value(shape: &QueryShape, name: &String) -> &'static str {
        if shape.booleans.contains(name) {
            "true"
        } else {
            "x"
        }
    }

    /// `T`'s required parameters as a query serde reads.
    fn fitting<T: IntoParams + 'static>() -> String {
        let shape = QueryShape::of::<T>();
        shape
            .required
            .iter()
            .map(|(name, _)| format!("{name}={}", value(&shape, name)))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn refused<T: DeserializeOwned + IntoParams + 'static>(raw: &str) -> String {
        match query::<T>(raw) {
            Ok(_) => panic!("{raw:?} was read as {}", std::any::type_name::<T>()),
            Err(e) => e.message().to_string(),
        }
    }

    /// What the checks would refuse, serde refuses too, so a query read
    /// without them never skips one; and the refusal is the checks'.
    fn refuses_what_the_checks_do<T: DeserializeOwned + IntoParams + 'static>() {
        let shape = QueryShape::of::<T>();
        let ok = fitting::<T>();
        assert!(query::<T>(&ok).is_ok(), "{ok:?}");
        let and = if ok.is_empty() { "" } else { "&" };
        let unknown = refused::<T>(&format!("{ok}{and}zzz=1"));
        assert!(
            unknown.starts_with("unknown query parameter \"zzz\""),
            "{unknown}"
        );
        for name in &shape.names {
            let value = value(&shape, name);
            let twice = format!("{ok}{and}{name}={value}&{name}={value}");
            let message = refused::<T>(&twice);
            assert!(message.contains("more than once"), "{twice}: {message}");
            if shape.booleans.contains(name) {
                let message = refused::<T>(&format!("{ok}{and}{name}=yes"));
                assert!(message.contains("give true or false"), "{message}");
            }
        }
        for (name, _) in &shape.required {
            let without: Vec<_> = ok
                .split('&')
                .filter(|p| !p.starts_with(&format!("{name}=")))
                .collect();
            let message = refused::<T>(&without.join("&"));
            assert!(
                message.starts_with(&format!("missing query parameter {name:?}")),
                "{message}"
            );
        }
    }

    #[test]
    fn every_query_type_refuses_what_the_checks_do() {
        refuses_what_the_checks_do::<NoParams>();
        refuses_what_the_checks_do::<AssetRequest>();
        refuses_what_the_checks_do::<AssetsRequest>();
        refuses_what_the_checks_do::<BucketsRequest>();
        refuses_what_the_checks_do::<CoverageRequest>();
        refuses_what_the_checks_do::<EventsRequest>();
        refuses_what_the_checks_do::<FiringsRequest>();
        refuses_what_the_checks_do::<FrontierRequest>();
        refuses_what_the_checks_do::<RuleWindowsRequest>();
        refuses_what_the_checks_do::<RulesRequest>();
        refuses_what_the_checks_do::<SegmentsRequest>();
        refuses_what_the_checks_do::<WaitRequest>();
        refuses_what_the_checks_do::<WindowsRequest>();
    }
}
