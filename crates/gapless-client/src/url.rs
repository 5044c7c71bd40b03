//! The server's URL, and percent-encoding of asset names in paths.

use gapless_api::{Error, Result};

/// `http[s]://HOST:PORT/PREFIX`, parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Base {
    /// `https://`: TLS to the server.
    pub(crate) https: bool,
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) prefix: String,
}

impl Base {
    /// Parse `http[s]://HOST[:PORT][/PREFIX]`.
    pub(crate) fn parse(url: &str) -> Result<Base> {
        let bad = |why: &str| Error::bad_input(format!("--url: invalid server URL {url:?}: {why}"));
        let (https, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => return Err(bad("use http://HOST:PORT or https://HOST:PORT")),
        };
        let (authority, prefix) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(bad("credentials in the URL are not supported; use a token"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !p.contains(']') => (h, p.parse::<u16>().map_err(|_| bad("bad port"))?),
            _ => (authority, if https { 443 } else { 80 }),
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        Ok(Base {
            https,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            prefix: prefix.to_string(),
        })
    }

    /// The URL of `path` (which starts with `/`) on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{host}:{}{}{path}", self.port, self.prefix)
    }
}

impl std::fmt::Display for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url(""))
    }
}

/// Percent-encode everything but unreserved characters (RFC 3986), for a
/// path segment.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let b = Base::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (b.host.as_str(), b.port, b.prefix.as_str()),
            ("127.0.0.1", 8080, "")
        );
        let b = Base::parse("http://example.test/gapless/").unwrap();
        assert_eq!(
            (b.host.as_str(), b.port, b.prefix.as_str()),
            ("example.test", 80, "/gapless")
        );
        assert_eq!(
            b.url("/v1/assets"),
            "http://example.test:80/gapless/v1/assets"
        );
        let b = Base::parse("https://example.test/g").unwrap();
        assert!(b.https);
        assert_eq!(b.url("/v1"), "https://example.test:443/g/v1");
        let b = Base::parse("https://127.0.0.1:8443").unwrap();
        assert_eq!((b.port, b.url("")), (8443, "https://127.0.0.1:8443".into()));
        let b = Base::parse("http://[::1]:9000").unwrap();
        assert_eq!((b.host.as_str(), b.port), ("::1", 9000));
        assert_eq!(b.url("/x"), "http://[::1]:9000/x");
        for bad in [
            "ftp://x",
            "https://:443",
            "http://:80",
            "http://u:p@x",
            "http://x:port",
        ] {
            let e = Base::parse(bad).unwrap_err();
            assert_eq!(e.kind(), gapless_api::ErrorKind::BadInput, "{bad}");
            assert!(e.message().starts_with("--url: invalid server URL"), "{e}");
        }
    }

    #[test]
    fn encoding() {
        assert_eq!(
            percent_encode("s3://lake/ü x"),
            "s3%3A%2F%2Flake%2F%C3%BC%20x"
        );
    }
}
