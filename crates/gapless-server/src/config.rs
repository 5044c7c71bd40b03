//! How a server is set up: address, tokens, limits, log format.

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
    /// How [`run`](crate::run) writes its log to standard error.
    pub log_format: LogFormat,
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
        }
    }
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
