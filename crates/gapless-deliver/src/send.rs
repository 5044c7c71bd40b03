//! What one attempt to hand a firing to its target comes to, and the HTTP
//! plumbing the targets share: one agent (no redirects followed, every
//! status read as an answer), a time limit per request that never runs
//! past the claim's lease, transport errors sorted into "not sent" and
//! "maybe sent" (a TLS failure is "not sent", in the client's words:
//! `gapless_client::tls`). An `https://` target has an agent of its own
//! ([`HttpsAgent`]) with its TLS settings.

use std::time::{Duration, Instant as Clock};

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sent {
    /// The target took it.
    Delivered,
    /// The target refused it for good: retrying cannot help.
    Refused(String),
    /// Not taken this time: try again later.
    Again(String),
    /// Maybe taken (a timeout, a connection reset after the request went
    /// out): try again later, checking first where the target allows it.
    Unknown(String),
}

impl Sent {
    /// The same outcome, its message naming `target` first.
    pub(crate) fn naming(self, target: &str) -> Sent {
        match self {
            Sent::Delivered => Sent::Delivered,
            Sent::Refused(m) => Sent::Refused(format!("{target}: {m}")),
            Sent::Again(m) => Sent::Again(format!("{target}: {m}")),
            Sent::Unknown(m) => Sent::Unknown(format!("{target}: {m}")),
        }
    }
}

/// One firing on its way: its JSON answer, its identity, the instant its
/// attempt must be over by (well inside the lease).
#[derive(Debug)]
pub(crate) struct Job<'a> {
    /// `gapless_ledger::firing_answer` of the claimed firing.
    pub(crate) answer: &'a serde_json::Value,
    /// `<ledger id>:<rule>:<seq>`.
    pub(crate) identity: &'a str,
    /// The firing's rule, key and generation.
    pub(crate) rule: &'a str,
    pub(crate) key: &'a str,
    pub(crate) generation: u32,
    /// When it was recorded (events about it are not older).
    pub(crate) recorded_at: gapless_core::Instant,
    /// A previous attempt may have reached the target.
    pub(crate) unsure: bool,
    /// The end of the attempt's time.
    pub(crate) deadline: Clock,
}

impl Job<'_> {
    /// The time limit of the next request: the target's, cut to what is
    /// left before the deadline; `None` when nothing is left.
    pub(crate) fn limit(&self, timeout: Duration) -> Option<Duration> {
        let left = self.deadline.checked_duration_since(Clock::now())?;
        (left > Duration::from_millis(10)).then(|| left.min(timeout))
    }
}

/// `scheme://host[:port]` of `url`: all of a target's URL that its errors
/// show, as its userinfo, path and query may hold credentials (a
/// `?token=`), and errors are stored in the ledger where any reader sees
/// them.
pub(crate) fn site(url: &str) -> Option<String> {
    let uri: ureq::http::Uri = url.parse().ok()?;
    let host = uri.host()?;
    let scheme = uri.scheme_str()?;
    Some(match uri.port_u16() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// The agent every `http://` target shares.
pub(crate) fn agent() -> ureq::Agent {
    agent_with(None)
}

/// The agent, with `tls` for an `https://` target.
fn agent_with(tls: Option<ureq::tls::TlsConfig>) -> ureq::Agent {
    let mut config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("gapless/", env!("CARGO_PKG_VERSION")));
    if let Some(tls) = tls {
        config = config.tls_config(tls);
    }
    config.build().new_agent()
}

/// The agent of one `https://` target, with its TLS settings (trusted
/// authorities, client certificate). Its own agent rather than settings on
/// each request of the shared one: ureq keeps a connection alive for reuse
/// only for requests of its agent's own TLS settings.
#[derive(Clone)]
pub struct HttpsAgent(pub(crate) ureq::Agent);

impl HttpsAgent {
    pub(crate) fn new(tls: ureq::tls::TlsConfig) -> HttpsAgent {
        HttpsAgent(agent_with(Some(tls)))
    }
}

impl std::fmt::Debug for HttpsAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpsAgent")
    }
}

/// A transport failure: whether the request may have reached the target,
/// and what happened.
#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) maybe_sent: bool,
    pub(crate) message: String,
    /// The target refused what led up to the request (a login): retrying
    /// cannot help.
    pub(crate) refused: bool,
}

impl Transport {
    /// The attempt's outcome for this failure.
    pub(crate) fn sent(self) -> Sent {
        if self.refused {
            Sent::Refused(self.message)
        } else if self.maybe_sent {
            Sent::Unknown(self.message)
        } else {
            Sent::Again(self.message)
        }
    }

    /// Out of time before a request was made.
    pub(crate) fn out_of_time() -> Transport {
        Transport {
            maybe_sent: false,
            message: "not sent: the claim's lease is nearly over".to_string(),
            refused: false,
        }
    }
}

/// Sort a ureq error. Its words never include the request's URL: ureq's
/// own messages for some errors quote it, so only those known to hold
/// none are passed on.
pub(crate) fn transport(limit: Duration, e: ureq::Error) -> Transport {
    use ureq::Error as E;
    // A TLS failure ends the handshake, before the request is written.
    if let Some(failure) = gapless_client::tls::failure(&e) {
        let hint = match failure {
            gapless_client::tls::TlsFailure::UnknownAuthority => {
                " (trust its authority with ca_file or SSL_CERT_FILE)"
            }
            gapless_client::tls::TlsFailure::ClientCertRefused => {
                " (give one with client_cert and client_key)"
            }
            _ => "",
        };
        return Transport {
            maybe_sent: false,
            message: format!("not sent: {failure}{hint}"),
            refused: false,
        };
    }
    let (maybe_sent, message) = match &e {
        E::HostNotFound => (false, "host not found".to_string()),
        E::ConnectionFailed => (false, "connection refused".to_string()),
        E::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => {
            (false, format!("no connection within {limit:?}"))
        }
        E::Timeout(_) => (true, format!("no answer within {limit:?}")),
        E::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            (false, "connection refused".to_string())
        }
        E::BadUri(_) | E::RequireHttpsOnly(_) | E::Http(_) => {
            (false, "not sent: the URL was refused".to_string())
        }
        E::Io(_)
        | E::Protocol(_)
        | E::BodyExceedsLimit(_)
        | E::LargeResponseHeader(..)
        | E::TooManyRedirects
        | E::RedirectFailed
        | E::BodyStalled => (true, e.to_string()),
        _ => (true, "the request failed".to_string()),
    };
    Transport {
        maybe_sent,
        message,
        refused: false,
    }
}

/// An answer's status and (the start of) its body.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: String,
}

impl Answer {
    /// Read `resp` whole (up to 1 MiB), so that its connection can be
    /// reused.
    pub(crate) fn read(resp: ureq::http::Response<ureq::Body>) -> Answer {
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
            .unwrap_or_default();
        Answer { status, body }
    }

    /// `HTTP 503: <the start of the body>` for a message.
    pub(crate) fn describe(&self) -> String {
        let mut text: String = self.body.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.len() > 200 {
            let mut cut = 200;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        if text.is_empty() {
            format!("HTTP {}", self.status)
        } else {
            format!("HTTP {}: {text}", self.status)
        }
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// 408, 429 and 5xx: the target may take it later.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self.status, 408 | 429) || self.status >= 500
    }
}
