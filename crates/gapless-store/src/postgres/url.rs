//! What a connection URL names: the server and login (the usual libpq-style
//! URL or `key=value` string, parsed by the `postgres` client), plus
//! gapless's own parameters `schema` and `pool_size`, the TLS parameters
//! `sslmode` and `sslrootcert` (read here, with libpq's meanings: see
//! `tls.rs`), and the URL without its password for messages.

use std::time::Duration;

use super::error::{describe_open, Refusal};
use super::schema::check_schema_name;
use super::tls::{transport, SslMode, Tls};
use crate::Result;
#[cfg(test)]
use crate::StoreError;

/// The schema used when the URL names none.
pub(crate) const DEFAULT_SCHEMA: &str = "gapless";

/// How long connecting may take unless the URL says `connect_timeout`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A ledger's place, from its URL.
#[derive(Debug)]
pub(crate) struct Target {
    /// The URL without password, for messages.
    pub(crate) location: String,
    /// How to connect (without gapless's own parameters).
    pub(crate) config: tokio_postgres::Config,
    /// The PostgreSQL schema that holds the ledger.
    pub(crate) schema: String,
    /// The `pool_size` parameter, if given.
    pub(crate) pool_size: Option<usize>,
    /// Plain or TLS, per `sslmode` and `sslrootcert`.
    pub(crate) tls: Tls,
}

/// The ledger named by `url`, in schema `schema` when given (then a
/// `schema` parameter is ignored), else its `schema` parameter or
/// [`DEFAULT_SCHEMA`].
///
/// # Errors
///
/// [`crate::StoreError::Open`] for a bad parameter, URL or schema name, and
/// for root certificates (`sslrootcert`) that cannot be read or are missing
/// where `sslmode=verify-ca` or `verify-full` needs them.
pub(crate) fn parse(url: &str, schema: Option<&str>) -> Result<Target> {
    let location = redact(url);
    let (url, own) = split_params(url).map_err(|r| r.at(&location))?;
    let schema = match schema {
        Some(s) => s.to_string(),
        None => own.schema.unwrap_or_else(|| DEFAULT_SCHEMA.to_string()),
    };
    check_schema_name(&schema).map_err(|r| r.at(&location))?;
    let mut config: tokio_postgres::Config = url.parse().map_err(|e: tokio_postgres::Error| {
        Refusal::new(format!("invalid URL: {}", describe_open(&e)))
            .caused_by(e)
            .at(&location)
    })?;
    // Without `sslmode`, plain TCP, as before TLS was supported (the
    // client's own default, `prefer`, would try TLS first). A `key=value`
    // string's `sslmode=require` is read by the client.
    let mode = own.sslmode.unwrap_or(match config.get_ssl_mode() {
        tokio_postgres::config::SslMode::Require => SslMode::Require,
        _ => SslMode::Disable,
    });
    config.ssl_mode(mode.client_mode());
    let tls = transport(mode, own.sslrootcert.as_deref()).map_err(|r| r.at(&location))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("gapless");
    }
    Ok(Target {
        location,
        config,
        schema,
        pool_size: own.pool_size,
        tls,
    })
}

/// `url` without its password (in the authority or as a parameter).
pub(crate) fn redact(url: &str) -> String {
    let mut out = url.to_string();
    if let Some(scheme_end) = out.find("://") {
        let rest = scheme_end + 3;
        let authority_end = out[rest..].find(['/', '?']).map_or(out.len(), |i| rest + i);
        if let Some(at) = out[rest..authority_end].rfind('@') {
            let userinfo = &out[rest..rest + at];
            if let Some(colon) = userinfo.find(':') {
                out.replace_range(rest + colon..rest + at, "");
            }
        }
        if let Some(q) = out.find('?') {
            let kept: Vec<&str> = out[q + 1..]
                .split('&')
                .filter(|kv| !kv.starts_with("password="))
                .collect();
            out = if kept.is_empty() {
                out[..q].to_string()
            } else {
                format!("{}?{}", &out[..q], kept.join("&"))
            };
        }
        out
    } else {
        // key=value form
        out.split_whitespace()
            .filter(|kv| !kv.starts_with("password="))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Percent-decode a URL component.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The URL parameters that gapless reads itself (PostgreSQL does not know
/// them).
#[derive(Debug, Default, PartialEq, Eq)]
struct OwnParams {
    schema: Option<String>,
    pool_size: Option<usize>,
    /// Read here: the client knows neither `verify-ca` nor `verify-full`.
    sslmode: Option<SslMode>,
    sslrootcert: Option<String>,
}

/// Take the parameters gapless reads itself (`schema`, `pool_size`,
/// `sslmode`, `sslrootcert`) out of a URL.
fn split_params(url: &str) -> Result<(String, OwnParams), Refusal> {
    let mut own = OwnParams::default();
    let Some(q) = url.find('?') else {
        return Ok((url.to_string(), own));
    };
    let mut kept = Vec::new();
    for kv in url[q + 1..].split('&') {
        if let Some(v) = kv.strip_prefix("schema=") {
            own.schema = Some(
                percent_decode(v)
                    .ok_or_else(|| Refusal::new(format!("invalid schema parameter {v:?}")))?,
            );
        } else if let Some(v) = kv.strip_prefix("pool_size=") {
            own.pool_size = Some(
                v.parse()
                    .ok()
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or_else(|| Refusal::new(format!("invalid pool_size {v:?} (1 to 1000)")))?,
            );
        } else if let Some(v) = kv.strip_prefix("sslmode=") {
            own.sslmode = Some(SslMode::parse(v)?);
        } else if let Some(v) = kv.strip_prefix("sslrootcert=") {
            own.sslrootcert = Some(
                percent_decode(v)
                    .ok_or_else(|| Refusal::new(format!("invalid sslrootcert parameter {v:?}")))?,
            );
        } else {
            kept.push(kv);
        }
    }
    let base = &url[..q];
    let rebuilt = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rebuilt, own))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redact_drops_passwords() {
        assert_eq!(
            redact("postgres://u:secret@h:5432/db?sslmode=disable"),
            "postgres://u@h:5432/db?sslmode=disable"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact("postgresql://h/db?password=x&user=u"),
            "postgresql://h/db?user=u"
        );
        assert_eq!(redact("postgres://h/db?password=x"), "postgres://h/db");
        assert_eq!(redact("host=h password=x user=u"), "host=h user=u");
        assert_eq!(redact("postgres://u:p@ss@h/db"), "postgres://u@h/db");
    }

    #[test]
    fn own_parameters_are_taken_out() {
        let own = |schema: Option<&str>, pool_size| OwnParams {
            schema: schema.map(str::to_string),
            pool_size,
            ..OwnParams::default()
        };
        assert_eq!(
            split_params("postgres://h/db?schema=a%20b&user=u&pool_size=4").unwrap(),
            (
                "postgres://h/db?user=u".to_string(),
                own(Some("a b"), Some(4))
            )
        );
        assert_eq!(
            split_params("postgres://h/db?schema=x").unwrap(),
            ("postgres://h/db".to_string(), own(Some("x"), None))
        );
        assert_eq!(
            split_params("postgres://h/db").unwrap(),
            ("postgres://h/db".to_string(), own(None, None))
        );
        assert!(split_params("postgres://h/db?schema=%zz").is_err());
        assert!(split_params("postgres://h/db?pool_size=0").is_err());
        assert!(split_params("postgres://h/db?pool_size=x").is_err());
        let (rest, params) =
            split_params("postgres://h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&user=u")
                .unwrap();
        assert_eq!(rest, "postgres://h/db?user=u");
        assert_eq!(params.sslmode, Some(SslMode::VerifyFull));
        assert_eq!(params.sslrootcert.as_deref(), Some("/tmp/ca.pem"));
        let e = split_params("postgres://h/db?sslmode=allow")
            .unwrap_err()
            .to_string();
        assert!(e.contains("invalid sslmode \"allow\""), "{e}");
    }

    #[test]
    fn a_target_is_parsed_with_defaults() {
        let t = parse("postgres://u:pw@h:5/db?schema=s&pool_size=3", None).unwrap();
        assert_eq!(t.location, "postgres://u@h:5/db?schema=s&pool_size=3");
        assert_eq!((t.schema.as_str(), t.pool_size), ("s", Some(3)));
        assert_eq!(t.config.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        assert_eq!(t.config.get_application_name(), Some("gapless"));
        let t = parse("postgres://h/db?schema=s", Some("other")).unwrap();
        assert_eq!(t.schema, "other");
        assert_eq!(
            parse("postgres://h/db", None).unwrap().schema,
            DEFAULT_SCHEMA
        );
        use tokio_postgres::config::SslMode as Client;
        for (url, mode, tls) in [
            ("postgres://h/db", Client::Disable, false),
            ("postgres://h/db?sslmode=disable", Client::Disable, false),
            ("postgres://h/db?sslmode=prefer", Client::Prefer, true),
            ("postgres://h/db?sslmode=require", Client::Require, true),
        ] {
            let t = parse(url, None).unwrap();
            assert_eq!(t.config.get_ssl_mode(), mode, "{url}");
            assert_eq!(matches!(t.tls, Tls::Rustls(_)), tls, "{url}");
        }
        for bad in [
            "postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
            "postgres://h/db?sslmode=bogus",
            "postgres://h/db?nonsense=1",
            "postgres://h/db?pool_size=0",
        ] {
            assert!(
                matches!(parse(bad, None), Err(StoreError::Open { .. })),
                "{bad}"
            );
        }
        assert!(matches!(
            parse("postgres://h/db", Some("")),
            Err(StoreError::Open { .. })
        ));
    }
}
