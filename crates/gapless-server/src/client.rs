//! A small blocking client of the HTTP API, for the command line's client
//! mode (`--url`): the same questions as [`gapless_ledger::Ledger`], given
//! as the text the user typed (the server parses it, so errors carry the
//! same messages), answered with the same types.
//!
//! Plain HTTP/1.1 through [`ureq`], connections kept alive and reused by
//! the clones of one client; `https://` is not supported (put a
//! TLS-terminating proxy in front and reach it over loopback or a private
//! network).

use std::time::Duration;

use gapless_ledger::{
    AssetsAnswer, CheckAnswer, DeclAnswer, EventsAnswer, FrontierAnswer, IngestAnswer, LedgerError,
    MultiCheckAnswer, SegmentsAnswer, WindowsAnswer,
};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::json;

/// The environment variable the command line may read a token from.
pub const TOKEN_ENV: &str = "GAPLESS_TOKEN";

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// A client of one server.
#[derive(Clone)]
pub struct Client {
    host: String,
    port: u16,
    prefix: String,
    token: Option<String>,
    timeout: Duration,
    agent: ureq::Agent,
}

/// Bodies at least this large ask `Expect: 100-continue` first, so that an
/// answer given before the body is read (413, 401) comes back as that
/// answer rather than as a broken connection.
const EXPECT_CONTINUE_FROM: usize = 64 * 1024;

/// The transport: no redirects followed, every status read as an answer,
/// `timeout` for a whole request.
fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .accept("application/json")
        .timeout_global(Some(timeout))
        .build()
        .new_agent()
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("prefix", &self.prefix)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Percent-encode everything but unreserved characters (RFC 3986), for a
/// path segment or a query value.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn query(pairs: &[(&str, Option<&str>)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter_map(|(k, v)| v.map(|v| format!("{k}={}", percent_encode(v))))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

#[derive(Deserialize)]
struct Counts {
    accepted: u64,
    duplicates: u64,
}

#[derive(Deserialize)]
struct ErrorAnswer {
    error: String,
}

impl Client {
    /// A client of the server at `url` (`http://HOST[:PORT][/PREFIX]`).
    ///
    /// # Errors
    ///
    /// `BadInput` for a URL that is not `http://`.
    pub fn new(url: &str) -> Result<Client, LedgerError> {
        let bad =
            |why: &str| LedgerError::BadInput(format!("--url: invalid server URL {url:?}: {why}"));
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            bad(if url.starts_with("https://") {
                "https is not supported"
            } else {
                "use http://HOST:PORT"
            })
        })?;
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("credentials in the URL are not supported; use a token"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().map_err(|_| bad("bad port"))?),
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        Ok(Client {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            prefix: prefix.to_string(),
            token: None,
            timeout: DEFAULT_TIMEOUT,
            agent: agent(DEFAULT_TIMEOUT),
        })
    }

    /// Send `token` as `Authorization: Bearer` with every request.
    #[must_use]
    pub fn with_token(mut self, token: Option<String>) -> Client {
        self.token = token.filter(|t| !t.is_empty());
        self
    }

    /// Give up on a request after `timeout` (default 300 s).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Client {
        self.timeout = timeout;
        self.agent = agent(timeout);
        self
    }

    /// `POST /v1/events` with NDJSON lines (`ingest`): one atomic batch.
    ///
    /// # Errors
    ///
    /// The server's error, e.g. `BadInput("line 3: ...")`.
    pub fn ingest_ndjson(&self, ndjson: &str) -> Result<IngestAnswer, LedgerError> {
        self.post_events(ndjson, "application/x-ndjson")
    }

    /// `POST /v1/events` with one event object or an array as JSON text
    /// (`emit`).
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn emit_json(&self, json: &str) -> Result<IngestAnswer, LedgerError> {
        self.post_events(json, "application/json")
    }

    fn post_events(&self, body: &str, content_type: &str) -> Result<IngestAnswer, LedgerError> {
        let c: Counts = self.call("POST", "/v1/events", Some((content_type, body.as_bytes())))?;
        Ok(IngestAnswer {
            accepted: c.accepted,
            duplicates: c.duplicates,
        })
    }

    /// `check`.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn check(
        &self,
        asset: &str,
        start: &str,
        end: &str,
        policy: Option<&str>,
        tz: Option<&str>,
    ) -> Result<CheckAnswer, LedgerError> {
        let q = query(&[
            ("start", Some(start)),
            ("end", Some(end)),
            ("policy", policy),
            ("tz", tz),
        ]);
        self.get(&format!("{}/coverage{q}", self.asset_path(asset)))
    }

    /// `windows`.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn windows(
        &self,
        asset: &str,
        start: &str,
        end: &str,
        every: &str,
        tz: Option<&str>,
        policy: Option<&str>,
    ) -> Result<WindowsAnswer, LedgerError> {
        let q = query(&[
            ("start", Some(start)),
            ("end", Some(end)),
            ("every", Some(every)),
            ("tz", tz),
            ("policy", policy),
        ]);
        self.get(&format!("{}/windows{q}", self.asset_path(asset)))
    }

    /// `segments`.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn segments(
        &self,
        asset: &str,
        start: &str,
        end: &str,
        tz: Option<&str>,
    ) -> Result<SegmentsAnswer, LedgerError> {
        let q = query(&[("start", Some(start)), ("end", Some(end)), ("tz", tz)]);
        self.get(&format!("{}/segments{q}", self.asset_path(asset)))
    }

    /// `events`: one page.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn events(
        &self,
        asset: &str,
        range: Option<(&str, &str)>,
        kind: Option<&str>,
        limit: Option<usize>,
        after: Option<&str>,
        tz: Option<&str>,
    ) -> Result<EventsAnswer, LedgerError> {
        let limit = limit.map(|l| l.to_string());
        let q = query(&[
            ("start", range.map(|r| r.0)),
            ("end", range.map(|r| r.1)),
            ("kind", kind),
            ("limit", limit.as_deref()),
            ("after", after),
            ("tz", tz),
        ]);
        self.get(&format!("{}/events{q}", self.asset_path(asset)))
    }

    /// `frontier`.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn frontier(
        &self,
        asset: &str,
        origin: &str,
        tz: Option<&str>,
    ) -> Result<FrontierAnswer, LedgerError> {
        let q = query(&[("origin", Some(origin)), ("tz", tz)]);
        self.get(&format!("{}/frontier{q}", self.asset_path(asset)))
    }

    /// `assets`.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn assets(&self) -> Result<AssetsAnswer, LedgerError> {
        self.get("/v1/assets")
    }

    /// `asset set`: declare a key span and time zone (needs an admin token).
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn declare(
        &self,
        asset: &str,
        key_span: Option<&str>,
        tz: Option<&str>,
    ) -> Result<DeclAnswer, LedgerError> {
        let body = json!({"key_span": key_span, "tz": tz}).to_string();
        self.call(
            "PUT",
            &self.asset_path(asset),
            Some(("application/json", body.as_bytes())),
        )
    }

    /// Coverage of several assets at once.
    ///
    /// # Errors
    ///
    /// The server's error.
    pub fn check_all(
        &self,
        assets: &[String],
        start: &str,
        end: &str,
        tz: Option<&str>,
    ) -> Result<MultiCheckAnswer, LedgerError> {
        let body = json!({"assets": assets, "start": start, "end": end, "tz": tz}).to_string();
        self.call(
            "POST",
            "/v1/coverage",
            Some(("application/json", body.as_bytes())),
        )
    }

    fn asset_path(&self, asset: &str) -> String {
        format!("/v1/assets/{}", percent_encode(asset))
    }

    fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, LedgerError> {
        self.call("GET", path, None)
    }

    fn unreachable(&self, e: impl std::fmt::Display) -> LedgerError {
        LedgerError::Unavailable(format!(
            "cannot reach the server at http://{}:{}: {e}",
            self.host, self.port
        ))
    }

    fn transport_error(&self, e: ureq::Error) -> LedgerError {
        match e {
            ureq::Error::Io(e) => self.unreachable(e),
            ureq::Error::Timeout(_) => {
                self.unreachable(format!("no answer within {:?}", self.timeout))
            }
            ureq::Error::Protocol(e) => self.unreachable(format!("not an HTTP answer: {e}")),
            e => self.unreachable(e),
        }
    }

    fn call<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, &[u8])>,
    ) -> Result<T, LedgerError> {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let url = format!("http://{host}:{}{}{path}", self.port, self.prefix);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let sent = match (method, body) {
            ("GET", None) => {
                let mut request = self.agent.get(&url);
                if let Some(a) = &auth {
                    request = request.header("Authorization", a);
                }
                request.call()
            }
            (_, body) => {
                let (content_type, bytes) = body.unwrap_or(("application/json", b""));
                let mut request = if method == "PUT" {
                    self.agent.put(&url)
                } else {
                    self.agent.post(&url)
                };
                if let Some(a) = &auth {
                    request = request.header("Authorization", a);
                }
                if bytes.len() >= EXPECT_CONTINUE_FROM {
                    request = request.header("Expect", "100-continue");
                }
                request.content_type(content_type).send(bytes)
            }
        };
        let mut response = sent.map_err(|e| self.transport_error(e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .read_to_vec()
            .map_err(|e| self.transport_error(e))?;
        if (200..300).contains(&status) {
            return serde_json::from_slice(&body).map_err(|e| {
                LedgerError::Fault(format!("the server's answer is not what was expected: {e}"))
            });
        }
        let message = serde_json::from_slice::<ErrorAnswer>(&body)
            .map(|e| e.error)
            .unwrap_or_else(|_| format!("the server answered {status}"));
        Err(match status {
            409 => LedgerError::Conflict(message),
            400..=499 => LedgerError::BadInput(message),
            503 => LedgerError::Unavailable(format!("server: {message}")),
            _ => LedgerError::Fault(format!("server: {message}")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let c = Client::new("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.prefix.as_str()),
            ("127.0.0.1", 8080, "")
        );
        let c = Client::new("http://example.test/gapless/").unwrap();
        assert_eq!(
            (c.host.as_str(), c.port, c.prefix.as_str()),
            ("example.test", 80, "/gapless")
        );
        let c = Client::new("http://[::1]:9000").unwrap();
        assert_eq!((c.host.as_str(), c.port), ("::1", 9000));
        for bad in [
            "https://x",
            "ftp://x",
            "http://:80",
            "http://u:p@x",
            "http://x:port",
        ] {
            assert!(
                matches!(Client::new(bad), Err(LedgerError::BadInput(_))),
                "{bad}"
            );
        }
        assert!(!format!(
            "{:?}",
            Client::new("http://x")
                .unwrap()
                .with_token(Some("s3cr3t".into()))
        )
        .contains("s3cr3t"));
    }

    #[test]
    fn encoding() {
        assert_eq!(
            percent_encode("s3://lake/ü x"),
            "s3%3A%2F%2Flake%2F%C3%BC%20x"
        );
        assert_eq!(
            query(&[("a", Some("ratio>=0.9")), ("b", None)]),
            "?a=ratio%3E%3D0.9"
        );
    }
}
