//! A blocking client of the gapless HTTP API (SPEC §4).
//!
//! [`Client`] implements [`gapless_api::Ask`]: the same requests and
//! answers as the embedded ledger. It sends each request as the user gave
//! it (the server parses the text, so errors carry the same messages) and
//! reads the answer back into the same types; an error answer becomes a
//! [`gapless_api::Error`] of the kind its status says, with the position
//! of the bad item from its `detail`.
//!
//! ```no_run
//! use gapless_api::{Ask, CoverageRequest};
//!
//! # fn main() -> Result<(), gapless_api::Error> {
//! let client = gapless_client::Client::new("http://127.0.0.1:8080")?;
//! let answer = client.coverage(&CoverageRequest {
//!     asset: "orders".into(),
//!     start: "2025-06-01".into(),
//!     end: "2025-07-01".into(),
//!     ..Default::default()
//! })?;
//! println!("{} gaps", answer.missing.len());
//! # Ok(()) }
//! ```
//!
//! HTTP/1.1 through [`ureq`], plain or over TLS (`https://`, rustls; see
//! [`tls`] for whom it trusts), connections kept alive and reused by the
//! clones of one client. Event bodies are streamed from their reader, never
//! read into memory first.
//!
//! # Layout
//!
//! - [`Client`], its [`gapless_api::Ask`] implementation (`lib.rs`).
//! - `url.rs`: the server URL and percent-encoding.
//! - `answer.rs`: reading an HTTP answer back into an answer or an error.
//! - `parts.rs`: recording a large NDJSON input in parts, each atomic.
//! - `resolve.rs`: name resolution that spawns no thread for an IP address.
//! - [`tls`]: trusted authorities, client certificates, TLS failures in
//!   words (shared with the deliverer).

mod answer;
mod parts;
mod resolve;
pub mod tls;
mod url;

use std::time::Duration;

use gapless_api::params::{self, MAX_HTTP_WAIT};
use gapless_api::{
    Ask, AssetAnswer, AssetRequest, AssetsAnswer, CheckAnswer, CoverageRequest, DeclAnswer,
    DeclareRequest, Error, EventsAnswer, EventsRequest, FrontierAnswer, FrontierRequest,
    IngestAnswer, MultiCheckAnswer, MultiCoverageRequest, PruneAnswer, PruneRequest, RecordRequest,
    Result, SegmentsAnswer, SegmentsRequest, WindowsAnswer, WindowsRequest,
};
use gapless_api::{AssetsRequest, MultiBucketsAnswer, MultiBucketsRequest, RulesRequest};
use gapless_api::{BucketsAnswer, BucketsRequest, RuleWindowsAnswer, RuleWindowsRequest};
use gapless_api::{
    FiringsAnswer, FiringsRequest, RuleAnswer, RuleDeletedAnswer, RuleRequest, RuleSetAnswer,
    RuleSetRequest, RulesAnswer, WaitRequest,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

pub use parts::{Parts, DEFAULT_PART};
pub use url::percent_encode;

/// The environment variable the command line reads a token from.
pub const TOKEN_ENV: &str = "GAPLESS_TOKEN";

/// Long enough for a large `ingest` on a busy server; a question takes
/// milliseconds.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Bodies at least this large (or of unknown size) ask `Expect:
/// 100-continue` first, so that an answer given before the body is read
/// (413, 401) comes back as that answer rather than as a broken connection.
const EXPECT_CONTINUE_FROM: u64 = 64 * 1024;

/// A client of one server.
#[derive(Clone)]
pub struct Client {
    base: url::Base,
    token: Option<String>,
    timeout: Duration,
    /// TLS settings of an `https://` server; `None` for `http://`.
    tls: Option<ureq::tls::TlsConfig>,
    agent: ureq::Agent,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The transport: no redirects followed, every status read as an answer,
/// `timeout` for a whole request, `tls` for an `https://` server.
fn agent(timeout: Duration, tls: Option<&ureq::tls::TlsConfig>) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .accept("application/json")
        .timeout_global(Some(timeout));
    if let Some(tls) = tls {
        config = config.tls_config(tls.clone());
    }
    let config = config.build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::default(),
        resolve::AddressFirst::default(),
    )
}

/// A request body: bytes in memory, or a reader streamed as it is read.
enum Body<'a> {
    None,
    Bytes(&'static str, Vec<u8>),
    Stream {
        content_type: &'static str,
        reader: &'a mut (dyn std::io::Read + Send),
        size: Option<u64>,
    },
}

impl Client {
    /// A client of the server at `url` (`http[s]://HOST[:PORT][/PREFIX]`),
    /// trusting the system's authorities for `https://`.
    ///
    /// # Errors
    ///
    /// `BadInput` for a URL that is not `http://` or `https://`, or (for
    /// `https://`) system root certificates that cannot be read.
    pub fn new(url: &str) -> Result<Client> {
        Client::with_tls_files(url, &tls::TlsFiles::default())
    }

    /// A client of the server at `url`, with these TLS files for an
    /// `https://` one (`--cacert`, `--cert`, `--key`). Files given with an
    /// `http://` URL are refused: a plain connection would ignore them.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad URL, or a TLS file that cannot be used, one
    /// line naming its flag, the file and the reason.
    pub fn with_tls_files(url: &str, files: &tls::TlsFiles) -> Result<Client> {
        let base = url::Base::parse(url)?;
        let tls = if base.https {
            Some(
                files
                    .config()
                    .map_err(|e| Error::bad_input(format!("{}: {}", tls_flag(e.file), e.reason)))?,
            )
        } else {
            let given = [
                (tls::TlsFile::CaFile, &files.ca_file),
                (tls::TlsFile::Cert, &files.cert),
                (tls::TlsFile::Key, &files.key),
            ];
            if let Some((file, _)) = given.iter().find(|(_, p)| p.is_some()) {
                return Err(Error::bad_input(format!(
                    "{}: only for an https:// server; --url is {base}",
                    tls_flag(*file)
                )));
            }
            None
        };
        Ok(Client {
            agent: agent(DEFAULT_TIMEOUT, tls.as_ref()),
            base,
            token: None,
            timeout: DEFAULT_TIMEOUT,
            tls,
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
        self.agent = agent(timeout, self.tls.as_ref());
        self
    }

    fn asset_path(asset: &str, question: &str) -> String {
        format!("/v1/assets/{}{question}", percent_encode(asset))
    }

    fn get<T: DeserializeOwned>(&self, path: &str, query: &impl Serialize) -> Result<T> {
        let query = serde_urlencoded::to_string(query)
            .map_err(|e| Error::bad_input(format!("cannot encode the query: {e}")))?;
        let path = if query.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{query}")
        };
        self.call("GET", &path, Body::None)
    }

    fn send_json<T: DeserializeOwned>(
        &self,
        method: &str,
        path: &str,
        body: &impl Serialize,
    ) -> Result<T> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Error::bad_input(format!("cannot encode the body: {e}")))?;
        self.call(method, path, Body::Bytes("application/json", bytes))
    }

    fn call<T: DeserializeOwned>(&self, method: &str, path: &str, body: Body<'_>) -> Result<T> {
        let (status, bytes) = self.exchange(method, path, body)?;
        answer::read(status, &bytes)
    }

    /// Send one request; its status and body, whatever the status.
    fn exchange(&self, method: &str, path: &str, body: Body<'_>) -> Result<(u16, Vec<u8>)> {
        let url = self.base.url(path);
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let sent = match body {
            Body::None => {
                let mut request = if method == "DELETE" {
                    self.agent.delete(&url)
                } else {
                    self.agent.get(&url)
                };
                if let Some(a) = &auth {
                    request = request.header("Authorization", a);
                }
                request.call()
            }
            body => {
                let mut request = if method == "PUT" {
                    self.agent.put(&url)
                } else {
                    self.agent.post(&url)
                };
                if let Some(a) = &auth {
                    request = request.header("Authorization", a);
                }
                match body {
                    Body::Bytes(content_type, bytes) => {
                        if bytes.len() as u64 >= EXPECT_CONTINUE_FROM {
                            request = request.header("Expect", "100-continue");
                        }
                        request.content_type(content_type).send(&bytes[..])
                    }
                    Body::Stream {
                        content_type,
                        reader,
                        size,
                    } => {
                        if size.is_none_or(|n| n >= EXPECT_CONTINUE_FROM) {
                            request = request.header("Expect", "100-continue");
                        }
                        // A known length is declared, so that a server
                        // refuses a body over its limit before reading it;
                        // an unknown one goes out chunked.
                        if let Some(n) = size {
                            request = request.header("Content-Length", n.to_string());
                        }
                        request
                            .content_type(content_type)
                            .send(ureq::SendBody::from_reader(reader))
                    }
                    Body::None => unreachable!("handled above"),
                }
            }
        };
        let mut response =
            sent.map_err(|e| answer::transport_error(&self.base, self.timeout, e))?;
        let status = response.status().as_u16();
        let bytes = response
            .body_mut()
            .with_config()
            .read_to_vec()
            .map_err(|e| answer::transport_error(&self.base, self.timeout, e))?;
        if !self.base.https && answer::is_tls_port(status, &bytes) {
            return Err(Error::bad_input(format!(
                "cannot reach the server at {}: it speaks HTTPS (TLS), not plain HTTP: use https://",
                self.base
            )));
        }
        Ok((status, bytes))
    }

    /// Record NDJSON from `body` in parts of at most `part` bytes, cut at
    /// line boundaries, each part one atomic request (SPEC §3, `ingest`
    /// over `--url`): input that fits in one part is one atomic batch as
    /// with [`Ask::record`]. A part the server refuses as too large (413)
    /// is halved and sent again; the smaller size is kept for the rest.
    /// Memory holds one part.
    ///
    /// # Errors
    ///
    /// The first failed part's error, its position counted in lines of the
    /// whole input, its message saying which part failed and which are
    /// stored (see [`Parts`]). A line alone larger than the server takes is
    /// an error naming it.
    pub fn record_in_parts(
        &self,
        body: &mut dyn std::io::BufRead,
        source: &str,
        part: usize,
    ) -> Result<Parts> {
        parts::send(body, source, part.max(1), &mut |chunk| {
            self.exchange(
                "POST",
                "/v1/events",
                Body::Bytes("application/x-ndjson", chunk.to_vec()),
            )
        })
    }
}

/// The flag of `file`, as errors name it.
fn tls_flag(file: tls::TlsFile) -> &'static str {
    match file {
        tls::TlsFile::CaFile => "--cacert",
        tls::TlsFile::Cert => "--cert",
        tls::TlsFile::Key => "--key",
        tls::TlsFile::Roots => "--url",
    }
}

impl Ask for Client {
    fn record(&self, request: RecordRequest<'_>) -> Result<IngestAnswer> {
        self.call(
            "POST",
            "/v1/events",
            Body::Stream {
                content_type: request.format.content_type(),
                reader: request.body,
                size: request.size,
            },
        )
    }

    fn coverage(&self, request: &CoverageRequest) -> Result<CheckAnswer> {
        self.get(&Self::asset_path(&request.asset, "/coverage"), request)
    }

    fn coverage_all(&self, request: &MultiCoverageRequest) -> Result<MultiCheckAnswer> {
        self.send_json("POST", "/v1/coverage", request)
    }

    fn windows(&self, request: &WindowsRequest) -> Result<WindowsAnswer> {
        self.get(&Self::asset_path(&request.asset, "/windows"), request)
    }

    fn segments(&self, request: &SegmentsRequest) -> Result<SegmentsAnswer> {
        self.get(&Self::asset_path(&request.asset, "/segments"), request)
    }

    fn buckets(&self, request: &BucketsRequest) -> Result<BucketsAnswer> {
        self.get(&Self::asset_path(&request.asset, "/buckets"), request)
    }

    fn buckets_many(&self, request: &MultiBucketsRequest) -> Result<MultiBucketsAnswer> {
        self.send_json("POST", "/v1/buckets", request)
    }

    fn events(&self, request: &EventsRequest) -> Result<EventsAnswer> {
        self.get(&Self::asset_path(&request.asset, "/events"), request)
    }

    fn frontier(&self, request: &FrontierRequest) -> Result<FrontierAnswer> {
        self.get(&Self::asset_path(&request.asset, "/frontier"), request)
    }

    fn assets(&self, request: &AssetsRequest) -> Result<AssetsAnswer> {
        self.get("/v1/assets", request)
    }

    fn asset(&self, request: &AssetRequest) -> Result<AssetAnswer> {
        self.get(&Self::asset_path(&request.asset, ""), request)
    }

    fn declare(&self, request: &DeclareRequest) -> Result<DeclAnswer> {
        self.send_json("PUT", &Self::asset_path(&request.asset, ""), request)
    }

    fn prune(&self, request: &PruneRequest) -> Result<PruneAnswer> {
        self.send_json("POST", "/v1/prune", request)
    }

    fn set_rule(&self, request: &RuleSetRequest) -> Result<RuleSetAnswer> {
        self.send_json("PUT", &Self::rule_path(&request.name), request)
    }

    fn rule(&self, request: &RuleRequest) -> Result<RuleAnswer> {
        self.get(&Self::rule_path(&request.name), &())
    }

    fn rules(&self, request: &RulesRequest) -> Result<RulesAnswer> {
        self.get("/v1/rules", request)
    }

    fn rule_windows(&self, request: &RuleWindowsRequest) -> Result<RuleWindowsAnswer> {
        let path = format!("{}/windows", Self::rule_path(&request.name));
        self.get(&path, request)
    }

    fn delete_rule(&self, request: &RuleRequest) -> Result<RuleDeletedAnswer> {
        self.call("DELETE", &Self::rule_path(&request.name), Body::None)
    }

    /// A wait longer than a server holds one request ([`MAX_HTTP_WAIT`]) is
    /// several requests, each waiting what is left (at most that).
    fn firings(&self, request: &FiringsRequest) -> Result<FiringsAnswer> {
        let wait = request
            .wait
            .as_deref()
            .map(|w| params::wait("wait", w))
            .transpose()?
            .unwrap_or_default();
        let give_up = std::time::Instant::now() + wait;
        loop {
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            let page: FiringsAnswer = self.get(
                "/v1/firings",
                &FiringsRequest {
                    wait: (!left.is_zero()).then(|| wait_text(left)),
                    ..request.clone()
                },
            )?;
            if !page.firings.is_empty() || left <= MAX_HTTP_WAIT {
                return Ok(page);
            }
        }
    }

    /// As [`Client::firings`]: a long timeout is several requests.
    fn wait(&self, request: &WaitRequest) -> Result<CheckAnswer> {
        let timeout = match &request.timeout {
            Some(t) => params::wait("timeout", t)?,
            None => params::DEFAULT_WAIT_TIMEOUT,
        };
        let give_up = std::time::Instant::now() + timeout;
        loop {
            let left = give_up.saturating_duration_since(std::time::Instant::now());
            let answer: CheckAnswer = self.get(
                &Self::asset_path(&request.asset, "/wait"),
                &WaitRequest {
                    timeout: Some(wait_text(left)),
                    ..request.clone()
                },
            )?;
            if answer.complete || left <= MAX_HTTP_WAIT {
                return Ok(answer);
            }
        }
    }
}

/// A wait as a server reads it: whole milliseconds, at most
/// [`MAX_HTTP_WAIT`].
fn wait_text(d: Duration) -> String {
    let d = d.clamp(Duration::from_millis(1), MAX_HTTP_WAIT);
    format!("PT{:.3}S", d.as_secs_f64())
}

impl Client {
    fn rule_path(name: &str) -> String {
        format!("/v1/rules/{}", percent_encode(name))
    }
}
