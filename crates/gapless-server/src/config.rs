//! How a server is set up: address, tokens, limits, log format, the
//! targets of its deliverer.

use std::net::SocketAddr;
use std::time::Duration;

use crate::{ServerError, Tokens};

/// The address `gapless serve` listens on unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// A server's settings. `ServerConfig::default()` listens on
/// [`DEFAULT_LISTEN`], open (no tokens), with the limits below.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen (`run` only; `serve` takes a bound listener).
    pub listen: SocketAddr,
    /// The tokens; `None` leaves everything open and allows only a loopback
    /// address.
    pub tokens: Option<Tokens>,
    /// The largest request body, in bytes (default 64 MiB); larger ones are
    /// answered 413.
    pub body_limit: usize,
    /// The longest a request may take (default 30 s); slower ones are
    /// answered 503.
    pub request_timeout: Duration,
    /// The most events one group commit takes (default 4096); one request
    /// with more is committed on its own.
    pub max_group_events: usize,
    /// The longest a request's line and headers may take to arrive (default
    /// 30 s, like the request timeout), counted from when the server starts
    /// waiting for them: the accept for a connection's first request, the
    /// end of the previous answer for the next one. The connection is then
    /// closed without an answer.
    pub header_timeout: Duration,
    /// The longest a connection may stay silent, no byte moving either way,
    /// while none of its requests is being handled (default 30 s); it is
    /// then closed. This bounds idle keep-alive connections, and clients
    /// that stop reading an answer.
    pub idle_timeout: Duration,
    /// The most connections served at once (default
    /// [`default_max_connections`]). At the limit the connection idle the
    /// longest is closed to make room for a new one, so `/healthz` is still
    /// answered.
    pub max_connections: usize,
    /// How [`run`](crate::run) writes its log to standard error.
    pub log_format: LogFormat,
    /// The counts of a deliverer running beside the server, for
    /// `/metrics` (default none; [`run`](crate::run) sets them when it
    /// delivers).
    pub deliveries: Option<crate::DeliveryMetrics>,
    /// The targets of the firings that [`run`](crate::run) delivers on a
    /// thread beside the server (`gapless serve --targets-file`); none, the
    /// default, delivers nothing. `run` only, as `listen`: an embedder of
    /// [`serve`](crate::serve) delivers on its own.
    pub targets: Option<gapless_deliver::Targets>,
    /// How long event detail is kept (`gapless serve --retain`): the
    /// server prunes what is older when it starts and every hour; none,
    /// the default, keeps everything.
    pub retain: Option<Duration>,
    /// Serve HTTPS with this certificate and key (`gapless serve
    /// --tls-cert --tls-key`), read again when renewed on disk; none, the
    /// default, serves plain HTTP.
    pub tls: Option<crate::TlsFiles>,
}

/// How [`run`](crate::run) writes its log to standard error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Readable lines; coloured only when standard error is a terminal.
    #[default]
    Text,
    /// One JSON object a line (`timestamp`, `level`, `fields`, `target`,
    /// spans), for a log collector.
    Json,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: DEFAULT_LISTEN.parse().expect("a valid address"),
            tokens: None,
            body_limit: 64 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
            max_group_events: 4096,
            log_format: LogFormat::Text,
            header_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            max_connections: default_max_connections(),
            deliveries: None,
            targets: None,
            retain: None,
            tls: None,
        }
    }
}

/// Descriptors kept free of connections: standard streams, the listener,
/// the runtime's own, the store's files or sockets (a SQLite file with its
/// journal and idle readers, or a PostgreSQL pool of 16) and whatever a
/// request opens while it runs.
const DESCRIPTOR_HEADROOM: u64 = 64;

/// The most connections by default on any machine: past that, the memory
/// of their buffers matters more than descriptors.
const MAX_DEFAULT_CONNECTIONS: u64 = 10_000;

/// The default [`ServerConfig::max_connections`]: the process's soft limit
/// on open descriptors (`RLIMIT_NOFILE`, read when called) less 64 for
/// everything that is not a connection, at most 10,000 and at least 1. A
/// server that hit the descriptor limit could no longer accept at all,
/// not even `/healthz`; below it, the limit makes room instead.
pub fn default_max_connections() -> usize {
    let soft = descriptor_limit().unwrap_or(MAX_DEFAULT_CONNECTIONS + DESCRIPTOR_HEADROOM);
    let n = soft
        .saturating_sub(DESCRIPTOR_HEADROOM)
        .clamp(1, MAX_DEFAULT_CONNECTIONS);
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The soft limit on open descriptors, `None` when unlimited or unknown.
#[cfg(unix)]
#[allow(unsafe_code)] // getrlimit: no safe wrapper in the dependencies.
fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given, which lives
    // for the whole call.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    #[allow(clippy::useless_conversion)] // rlim_t is u32 on some targets.
    (rc == 0 && limit.rlim_cur != libc::RLIM_INFINITY).then(|| u64::from(limit.rlim_cur))
}

#[cfg(not(unix))]
fn descriptor_limit() -> Option<u64> {
    None
}

/// Refuse to serve an open ledger (no tokens) on anything but loopback.
///
/// # Errors
///
/// [`ServerError::Config`] explaining how to fix it.
pub fn check_exposure(addr: SocketAddr, tokens: Option<&Tokens>) -> Result<(), ServerError> {
    if tokens.is_none() && !addr.ip().is_loopback() {
        return Err(ServerError::Config(format!(
            "refusing to listen on {addr} without access tokens: anyone who can reach it could \
             write the ledger; configure tokens ({} or {}) or listen on a loopback address such as \
             127.0.0.1",
            crate::auth::TOKENS_ENV,
            crate::auth::TOKENS_FILE_ENV
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_connection_limit_stays_below_the_descriptor_limit() {
        let n = default_max_connections() as u64;
        assert!((1..=MAX_DEFAULT_CONNECTIONS).contains(&n), "{n}");
        if let Some(soft) = descriptor_limit().filter(|&s| s > DESCRIPTOR_HEADROOM) {
            assert!(n + DESCRIPTOR_HEADROOM <= soft, "{n} of {soft}");
        }
    }

    #[test]
    fn only_loopback_is_open() {
        for ok in ["127.0.0.1:0", "127.0.0.2:80", "[::1]:8080"] {
            check_exposure(ok.parse().unwrap(), None).unwrap();
        }
        for bad in ["0.0.0.0:8080", "[::]:8080", "192.0.2.1:80"] {
            let e = check_exposure(bad.parse().unwrap(), None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("without access tokens"), "{e}");
        }
        let tokens =
            Tokens::parse(r#"[{"secret": "0123456789abcdef", "scopes": ["read"]}]"#).unwrap();
        check_exposure("0.0.0.0:8080".parse().unwrap(), Some(&tokens)).unwrap();
    }
}
