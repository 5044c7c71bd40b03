//! Reading an HTTP answer: the answer type on 2xx, otherwise the error the
//! status and the `{"error", "detail"}` body describe.

use std::time::Duration;

use gapless_api::{Error, ErrorBody, ErrorKind, Position, Result, Unit};
use serde::de::DeserializeOwned;

use crate::url::Base;

/// The answer of `status` with body `bytes`.
pub(crate) fn read<T: DeserializeOwned>(status: u16, bytes: &[u8]) -> Result<T> {
    if (200..300).contains(&status) {
        return serde_json::from_slice(bytes).map_err(|e| {
            Error::fault(format!("the server's answer is not what was expected: {e}"))
        });
    }
    let kind = match status {
        401 | 403 => ErrorKind::Denied,
        404 => ErrorKind::NotFound,
        409 => ErrorKind::Conflict,
        400..=499 => ErrorKind::BadInput,
        503 | 507 => ErrorKind::Unavailable,
        _ => ErrorKind::Fault,
    };
    let Ok(body) = serde_json::from_slice::<ErrorBody>(bytes) else {
        return Err(Error::new(kind, format!("the server answered {status}")));
    };
    let position = [Unit::Line, Unit::Event].into_iter().find_map(|unit| {
        let number = body.detail.get(unit.as_str())?.as_u64()?;
        Some(Position {
            unit,
            number: usize::try_from(number).ok()?,
        })
    });
    let error = match position {
        // The message says where already; keep it once, as the error's
        // position.
        Some(p) => {
            let prefix = format!("{p}: ");
            let message = body.error.strip_prefix(&prefix).unwrap_or(&body.error);
            Error::new(kind, message).at(p)
        }
        None if kind.is_client_error() => Error::new(kind, body.error),
        None => Error::new(kind, format!("server: {}", body.error)),
    };
    Err(error)
}

/// Whether `status` and `bytes` are a gapless server's answer to plain
/// HTTP on its TLS port (SPEC §4, TLS): 400 with `detail.https` true.
pub(crate) fn is_tls_port(status: u16, bytes: &[u8]) -> bool {
    status == 400
        && serde_json::from_slice::<ErrorBody>(bytes)
            .is_ok_and(|b| b.detail.get("https").and_then(|v| v.as_bool()) == Some(true))
}

/// A request that got no HTTP answer.
pub(crate) fn transport_error(base: &Base, timeout: Duration, e: ureq::Error) -> Error {
    if let Some(failure) = crate::tls::failure(&e) {
        let hint = match failure {
            crate::tls::TlsFailure::UnknownAuthority => {
                " (trust its authority with --cacert FILE or SSL_CERT_FILE)"
            }
            crate::tls::TlsFailure::ClientCertRefused => " (give one with --cert and --key)",
            _ => "",
        };
        return Error::unavailable(format!(
            "cannot reach the server at {base}: {failure}{hint}"
        ));
    }
    // A TLS server takes a plain request for a broken hello: it answers
    // with an alert, or closes the connection.
    let plain_to_tls = if base.https {
        ""
    } else {
        " (an HTTPS server? use https://)"
    };
    let why = match e {
        ureq::Error::Io(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::ConnectionReset
            ) =>
        {
            format!("{e}{plain_to_tls}")
        }
        ureq::Error::Io(e) => e.to_string(),
        ureq::Error::Timeout(_) => format!("no answer within {timeout:?}"),
        ureq::Error::Protocol(e) => format!("not an HTTP answer: {e}{plain_to_tls}"),
        e => e.to_string(),
    };
    Error::unavailable(format!("cannot reach the server at {base}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_answers_keep_kind_message_and_position() {
        let e = read::<serde_json::Value>(
            400,
            br#"{"error": "line 3: missing field \"asset\"", "detail": {"line": 3}}"#,
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadInput);
        assert_eq!(
            e.position(),
            Some(Position {
                unit: Unit::Line,
                number: 3
            })
        );
        assert_eq!(e.to_string(), "line 3: missing field \"asset\"");

        let e = read::<serde_json::Value>(
            409,
            br#"{"error": "event 2: conflict", "detail": {"event": 2}}"#,
        )
        .unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (ErrorKind::Conflict, "event 2: conflict")
        );

        let e = read::<serde_json::Value>(
            503,
            br#"{"error": "the ledger is unavailable", "detail": null}"#,
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert_eq!(e.to_string(), "server: the ledger is unavailable");

        let e = read::<serde_json::Value>(502, b"<html>bad gateway</html>").unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (ErrorKind::Fault, "the server answered 502")
        );
        let e = read::<serde_json::Value>(403, br#"{"error": "no write scope", "detail": null}"#)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Denied);
    }
}
