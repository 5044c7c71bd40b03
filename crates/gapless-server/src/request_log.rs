//! What the request log shows of a request: its method, version and URI,
//! the values of query parameters that carry secrets replaced by
//! `REDACTED`.
//!
//! gapless takes tokens only in the `Authorization` header (kept out of
//! the log as a sensitive header) and refuses unknown query parameters,
//! but the request line is logged whatever is in it, before it is refused:
//! a client that puts its token in the URL (`?access_token=`, as OAuth
//! allows) must not leave it in the server's log.

use std::fmt;

use axum::http::{Request, Uri};
use tracing::Span;

/// Words that make a query parameter's value a secret, in its name
/// lowercased with `-` as `_`: OAuth's `access_token`, `refresh_token`,
/// `id_token`, `client_secret`, and the names services use for keys and
/// passwords in URLs (`token`, `api_key`, `apikey`, `password`, `passwd`,
/// `signature`, `credential`). None of gapless's own parameters holds one.
const SECRET_WORDS: [&str; 8] = [
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "apikey",
    "signature",
    "credential",
];

/// What a secret value is logged as.
const REDACTED: &str = "REDACTED";

/// The span of one request, as tower-http's default makes it (`method`,
/// `uri`, `version`, at level INFO), its URI redacted.
pub(crate) fn span<B>(request: &Request<B>) -> Span {
    tracing::info_span!(
        "request",
        method = %request.method(),
        uri = %Redacted(request.uri()),
        version = ?request.version(),
    )
}

/// Whether the query parameter named `raw_name` (as sent, percent-encoded)
/// carries a secret.
fn is_secret(raw_name: &str) -> bool {
    let decoded: Vec<(String, String)> = serde_urlencoded::from_str(raw_name).unwrap_or_default();
    let name = decoded
        .first()
        .map_or(raw_name, |(n, _)| n.as_str())
        .to_ascii_lowercase()
        .replace('-', "_");
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

/// A URI as sent, with the value of each secret query parameter replaced.
struct Redacted<'a>(&'a Uri);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let uri = self.0;
        let Some(query) = uri.query() else {
            return write!(f, "{uri}");
        };
        if let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) {
            write!(f, "{scheme}://{authority}")?;
        }
        write!(f, "{}?", uri.path())?;
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                f.write_str("&")?;
            }
            match pair.split_once('=') {
                Some((name, _)) if is_secret(name) => write!(f, "{name}={REDACTED}")?,
                _ => f.write_str(pair)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Redacted;

    fn shown(uri: &str) -> String {
        Redacted(&uri.parse().unwrap()).to_string()
    }

    #[test]
    fn secret_values_are_redacted_and_the_rest_kept() {
        assert_eq!(
            shown("/v1/assets?access_token=abc&x=1"),
            "/v1/assets?access_token=REDACTED&x=1"
        );
        assert_eq!(
            shown("/v1/assets/a/coverage?start=2025-06-01&Api-Key=k&PASSWORD=p&end=2025-06-02"),
            "/v1/assets/a/coverage?start=2025-06-01&Api-Key=REDACTED&PASSWORD=REDACTED\
             &end=2025-06-02"
        );
        // A percent-encoded name is still the name.
        assert_eq!(shown("/x?access%5Ftoken=abc"), "/x?access%5Ftoken=REDACTED");
        assert_eq!(shown("/x?token"), "/x?token");
        assert_eq!(shown("/healthz"), "/healthz");
        assert_eq!(
            shown("/v1/assets/a/windows?key_format=%25Y&every=1h"),
            "/v1/assets/a/windows?key_format=%25Y&every=1h"
        );
    }
}
