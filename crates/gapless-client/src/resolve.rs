//! Name resolution that spawns no thread for an IP address.
//!
//! ureq's own resolver, given a timeout (the client's whole-request
//! timeout is one), resolves on a new thread so that it can give up on a
//! slow DNS server; it does so before every request, even one that reuses
//! a kept-alive connection, even for `127.0.0.1`. A thread per request
//! cost a client about as much CPU as the server spent answering. An
//! address needs no lookup: it is taken as it is, and only a host name
//! goes to ureq's resolver.
//!
//! This is ureq's `unversioned` resolver API: the lock file pins the
//! version it is written against.

use std::net::{IpAddr, SocketAddr};

use ureq::config::Config;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// The port of `http://` when the URL gives none; the client's URLs always
/// carry their port (443 written out for `https://`), so this is a last
/// resort.
const HTTP_PORT: u16 = 80;

#[derive(Debug, Default)]
pub(crate) struct AddressFirst(DefaultResolver);

/// The socket address of `uri` when its host is an IP address.
fn literal(uri: &Uri) -> Option<SocketAddr> {
    let host = uri.host()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let ip: IpAddr = host.parse().ok()?;
    Some(SocketAddr::new(ip, uri.port_u16().unwrap_or(HTTP_PORT)))
}

impl Resolver for AddressFirst {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        match literal(uri) {
            Some(addr) => {
                let mut addrs = self.empty();
                addrs.push(addr);
                Ok(addrs)
            }
            None => self.0.resolve(uri, config, timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::literal;

    #[test]
    fn addresses_are_taken_as_they_are_and_names_are_not() {
        let at = |u: &str| literal(&u.parse().unwrap()).map(|a| a.to_string());
        assert_eq!(
            at("http://127.0.0.1:8080/v1/x").as_deref(),
            Some("127.0.0.1:8080")
        );
        assert_eq!(at("http://127.0.0.1/").as_deref(), Some("127.0.0.1:80"));
        assert_eq!(at("http://[::1]:9000/").as_deref(), Some("[::1]:9000"));
        assert_eq!(at("http://localhost:8080/"), None);
        assert_eq!(at("http://gapless.internal/"), None);
    }
}
