//! The answer to a request hyper cannot parse, in SPEC §4's words.
//!
//! hyper answers a request line or header it cannot parse (an unencoded `<`
//! in the query, a bad method, a header without a colon, a line too long)
//! itself, before any handler runs: a bare status line with
//! `content-length: 0` and no body, and then closes the connection. Our
//! handlers never answer a 400, 414 or 431 without a body, so such a head,
//! written alone, is hyper's; the connection's stream ([`crate::listen`])
//! writes [`replacement`] in its place: the same status, the JSON error
//! body every other error has, and `connection: close`.

/// The answer to write instead of `head`, when `head` is hyper's own
/// answer to a request it could not parse: the whole write is one response
/// head with an empty body.
pub(crate) fn replacement(head: &[u8]) -> Option<Vec<u8>> {
    let (status, message) = [
        (
            "400 Bad Request",
            "the request line or a header is not valid HTTP: percent-encode characters such \
             as < > \" and spaces in the query (%3C for <)",
        ),
        (
            "414 URI Too Long",
            "the request line is too long: send a shorter query (several requests, or the \
             body of POST /v1/coverage for many assets)",
        ),
        (
            "431 Request Header Fields Too Large",
            "the request's headers are too large: send fewer or shorter headers",
        ),
    ]
    .into_iter()
    .find(|(status, _)| head.starts_with(format!("HTTP/1.1 {status}\r\n").as_bytes()))?;
    let text = std::str::from_utf8(head).ok()?;
    let (fields, rest) = text.split_once("\r\n\r\n")?;
    let empty = fields
        .lines()
        .skip(1)
        .any(|l| l.eq_ignore_ascii_case("content-length: 0"));
    if !rest.is_empty() || !empty {
        return None;
    }
    let body = serde_json::json!({ "error": message, "detail": null }).to_string();
    Some(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::replacement;

    #[test]
    fn only_hypers_bodyless_heads_are_replaced() {
        let hyper = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let got = String::from_utf8(replacement(hyper).unwrap()).unwrap();
        let (head, body) = got.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(v["error"].as_str().unwrap().contains("%3C for <"));
        assert!(replacement(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n"
        )
        .is_some());
        // Ours: a body, or a head with a length.
        assert!(replacement(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 9\r\n\r\n").is_none());
        assert!(replacement(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n{}").is_none());
        assert!(replacement(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
    }
}
