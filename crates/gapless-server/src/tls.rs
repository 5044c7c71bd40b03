//! TLS on the listening socket (`gapless serve --tls-cert FILE --tls-key
//! FILE`, SPEC §4 TLS): rustls with the ring provider, HTTP/1.1 inside.
//!
//! - **Renewal**: the certificate and key are read again when either
//!   file's modification time, size or inode changes (cert-manager and
//!   certbot replace them in place or swap a symlink), looked at with a
//!   `stat` at most once every [`RECHECK`] on a handshake. A renewed pair
//!   that cannot be used (half written, a key of another certificate) is
//!   logged once and the one in use is kept; the next change is tried
//!   again.
//! - **Plain HTTP on the TLS port**: a connection whose first byte is not
//!   a TLS handshake record is answered `400` in plain HTTP with SPEC §4's
//!   JSON error (`detail.https` true) and closed, so that `curl
//!   http://...` and the client say what is wrong instead of a broken
//!   connection.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use crate::ServerError;

/// How often, at most, the files are looked at for a renewal: a `stat` of
/// two files per second costs nothing, and a renewed certificate is served
/// within a second of being written.
pub const RECHECK: Duration = Duration::from_secs(1);

/// The first byte of a TLS record carrying a handshake message (RFC 8446
/// §5.1, content type 22): every TLS connection starts with one.
const TLS_HANDSHAKE: u8 = 22;

/// The most of a plain request read before it is answered `400`: a
/// request head; the rest is not waited for.
const PLAIN_HEAD_MAX: usize = 16 * 1024;

/// How long a plain request's head is read, and the answer's reading
/// waited for, before the connection is closed.
const PLAIN_GRACE: Duration = Duration::from_secs(1);

/// The PEM files of the server's certificate (its chain following) and its
/// private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, the server's own first.
    pub cert: PathBuf,
    /// Its private key (PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// What identifies one version of a file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode,
    })
}

/// The certified key of `files`, checked: a chain, a key of the ring
/// provider's kinds, the key the certificate's.
fn load(files: &TlsFiles) -> Result<CertifiedKey, String> {
    let cert_path = files.cert.display();
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("--tls-cert {cert_path}: {}", pem_reason(&e)))?;
    if chain.is_empty() {
        return Err(format!(
            "--tls-cert {cert_path}: no certificate in it (a PEM file of -----BEGIN \
             CERTIFICATE----- blocks, the server's first)"
        ));
    }
    let key_path = files.key.display();
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("--tls-key {key_path}: {}", pem_reason(&e)))?;
    let provider = rustls::crypto::ring::default_provider();
    CertifiedKey::from_der(chain, key, &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => {
            format!("--tls-key {key_path}: not the key of the certificate in {cert_path}")
        }
        e => format!("--tls-key {key_path}: not a usable private key: {e}"),
    })
}

fn pem_reason(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => format!("cannot read it: {io}"),
        rustls::pki_types::pem::Error::NoItemsFound => {
            "nothing of that kind in it (a PEM file is expected)".into()
        }
        other => format!("not a PEM file ({other:?})"),
    }
}

/// The certificate in use, read again when its files change.
#[derive(Debug)]
struct Reloading {
    files: TlsFiles,
    state: Mutex<Current>,
}

#[derive(Debug)]
struct Current {
    key: Arc<CertifiedKey>,
    /// The files' stamps when last read (or last found unusable).
    stamps: (Option<Stamp>, Option<Stamp>),
    checked: Instant,
}

impl Reloading {
    fn new(files: TlsFiles) -> Result<Reloading, String> {
        let stamps = (stamp(&files.cert), stamp(&files.key));
        let key = Arc::new(load(&files)?);
        Ok(Reloading {
            files,
            state: Mutex::new(Current {
                key,
                stamps,
                checked: Instant::now(),
            }),
        })
    }

    /// The certified key to serve now, read again first if the files
    /// changed since they were last looked at.
    fn current(&self) -> Arc<CertifiedKey> {
        let mut current = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if current.checked.elapsed() < RECHECK {
            return current.key.clone();
        }
        current.checked = Instant::now();
        let stamps = (stamp(&self.files.cert), stamp(&self.files.key));
        if stamps != current.stamps {
            current.stamps = stamps;
            match load(&self.files) {
                Ok(key) => {
                    tracing::info!(cert = %self.files.cert.display(), "TLS certificate renewed");
                    current.key = Arc::new(key);
                }
                Err(why) => {
                    tracing::warn!("TLS certificate not renewed, the one in use is kept: {why}")
                }
            }
        }
        current.key.clone()
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// The TLS side of the listener.
#[derive(Clone)]
pub(crate) struct Tls {
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// TLS with the certificate of `files`.
    ///
    /// # Errors
    ///
    /// [`ServerError::Config`] naming the flag, the file and the reason.
    pub(crate) fn load(files: &TlsFiles) -> Result<Tls, ServerError> {
        let resolver = Reloading::new(files.clone()).map_err(ServerError::Config)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ServerError::Config(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(resolver));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }

    /// The TLS stream of `stream` once its handshake is done within
    /// `timeout`; `None` (the connection closed) when it fails, takes
    /// longer, or is plain HTTP (answered `400` first).
    pub(crate) async fn accept(
        &self,
        stream: TcpStream,
        timeout: Duration,
    ) -> Option<TlsStream<TcpStream>> {
        let mut first = [0u8; 1];
        match tokio::time::timeout(timeout, stream.peek(&mut first)).await {
            Ok(Ok(1)) if first[0] == TLS_HANDSHAKE => {}
            Ok(Ok(1)) => {
                refuse_plain(stream).await;
                return None;
            }
            _ => return None,
        }
        match tokio::time::timeout(timeout, self.acceptor.accept(stream)).await {
            Ok(Ok(tls)) => Some(tls),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "TLS handshake failed");
                None
            }
            Err(_) => None,
        }
    }
}

/// Answer a plain HTTP request on the TLS port: its head read (so that
/// closing does not reset the connection under the answer), `400` with
/// SPEC §4's error, the connection closed once the client has read it.
async fn refuse_plain(mut stream: TcpStream) {
    let body = serde_json::json!({
        "error": "this server speaks HTTPS (TLS), not plain HTTP: use an https:// URL",
        "detail": {"https": true},
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(PLAIN_GRACE, async {
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while head.len() < PLAIN_HEAD_MAX && !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
        let _ = stream.shutdown().await;
        // Wait for the client to close after reading: closing with its
        // body unread would reset the connection.
        while matches!(stream.read(&mut buf).await, Ok(n) if n > 0) {}
    })
    .await;
}
