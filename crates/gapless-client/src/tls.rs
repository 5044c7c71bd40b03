//! HTTPS: which authorities are trusted, the certificate shown when a
//! server asks for one, and TLS failures in words that say what to check.
//!
//! Shared by the client (`--cacert`, `--cert`, `--key`) and the deliverer
//! (a target's `ca_file`, `client_cert`, `client_key`), so that both trust
//! the same roots and word the same failures alike.
//!
//! Trusted: the system's root certificates (rustls-native-certs: the
//! OpenSSL locations, or only `SSL_CERT_FILE` / `SSL_CERT_DIR` when either
//! is set, as OpenSSL, curl and Python read them), plus the certificates of
//! the CA file given. rustls with the ring provider, as for PostgreSQL.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use rustls::{AlertDescription, CertificateError};
use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

/// The files of one party's TLS settings, each optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificates of authorities to trust besides the system's.
    pub ca_file: Option<PathBuf>,
    /// A PEM client certificate (its chain may follow), shown when the
    /// server asks for one.
    pub cert: Option<PathBuf>,
    /// The PEM private key of `cert`.
    pub key: Option<PathBuf>,
}

/// Which of [`TlsFiles`] a problem is with; callers name it in their own
/// words (`--cacert`, `ca_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFile {
    /// [`TlsFiles::ca_file`].
    CaFile,
    /// [`TlsFiles::cert`].
    Cert,
    /// [`TlsFiles::key`].
    Key,
    /// The root certificates of `SSL_CERT_FILE`, `SSL_CERT_DIR` or the
    /// system, which no flag names.
    Roots,
}

/// A TLS file that cannot be used: which, and why (the path included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFileError {
    /// The file at fault.
    pub file: TlsFile,
    /// One line: the path and the reason.
    pub reason: String,
}

impl TlsFiles {
    /// ureq's TLS settings for these files: the system's roots plus
    /// `ca_file`'s, the client certificate if given.
    ///
    /// # Errors
    ///
    /// A file that cannot be read or holds nothing usable; a certificate
    /// without its key or a key without its certificate; the system's
    /// store unreadable when no CA file is given.
    pub fn config(&self) -> Result<TlsConfig, TlsFileError> {
        let mut roots: Vec<Certificate<'static>> = Vec::new();
        if let Some(path) = &self.ca_file {
            roots.extend(certificates(path).map_err(|reason| TlsFileError {
                file: TlsFile::CaFile,
                reason,
            })?);
        }
        match system_roots() {
            Ok(system) => roots.extend(system.iter().cloned()),
            Err(reason) if self.ca_file.is_none() => {
                return Err(TlsFileError {
                    file: TlsFile::Roots,
                    reason,
                })
            }
            // The CA file given is enough to go on with.
            Err(_) => {}
        }
        let client_cert = match (&self.cert, &self.key) {
            (None, None) => None,
            (Some(_), None) => {
                return Err(TlsFileError {
                    file: TlsFile::Key,
                    reason: "missing: a client certificate needs its private key".into(),
                })
            }
            (None, Some(_)) => {
                return Err(TlsFileError {
                    file: TlsFile::Cert,
                    reason: "missing: a private key needs its client certificate".into(),
                })
            }
            (Some(cert), Some(key)) => {
                let chain = certificates(cert).map_err(|reason| TlsFileError {
                    file: TlsFile::Cert,
                    reason,
                })?;
                let key = private_key(key).map_err(|reason| TlsFileError {
                    file: TlsFile::Key,
                    reason,
                })?;
                Some(ClientCert::new_with_certs(&chain, key))
            }
        };
        Ok(TlsConfig::builder()
            .root_certs(RootCerts::Specific(Arc::new(roots)))
            .client_cert(client_cert)
            .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .build())
    }
}

/// The system's root certificates, read once a process (a few hundred
/// kilobytes parsed: not once a request).
fn system_roots() -> Result<&'static [Certificate<'static>], String> {
    static ROOTS: OnceLock<Result<Vec<Certificate<'static>>, String>> = OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        let found = rustls_native_certs::load_native_certs();
        if found.certs.is_empty() {
            if let Some(e) = found.errors.first() {
                return Err(format!(
                    "cannot read the root certificates (SSL_CERT_FILE, SSL_CERT_DIR or the \
                     system's): {e}"
                ));
            }
        }
        Ok(found
            .certs
            .iter()
            .map(|c| Certificate::from_der(c.as_ref()).to_owned())
            .collect())
    });
    roots.as_ref().map(Vec::as_slice).map_err(Clone::clone)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: cannot read it: {e}", path.display()))
}

/// The certificates of the PEM file at `path`, at least one.
fn certificates(path: &Path) -> Result<Vec<Certificate<'static>>, String> {
    let bytes = read(path)?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(PemItem::Certificate(c)) => certs.push(c),
            Ok(_) => {}
            Err(e) => return Err(format!("{}: not a PEM file ({e})", path.display())),
        }
    }
    if certs.is_empty() {
        return Err(format!(
            "{}: no certificate in it (a PEM file of -----BEGIN CERTIFICATE----- blocks)",
            path.display()
        ));
    }
    Ok(certs)
}

/// The first private key of the PEM file at `path`.
fn private_key(path: &Path) -> Result<PrivateKey<'static>, String> {
    let bytes = read(path)?;
    for item in ureq::tls::parse_pem(&bytes) {
        match item {
            Ok(PemItem::PrivateKey(k)) => return Ok(k),
            Ok(_) => {}
            Err(e) => return Err(format!("{}: not a PEM file ({e})", path.display())),
        }
    }
    Err(format!(
        "{}: no private key in it (a PEM file with a -----BEGIN PRIVATE KEY----- block)",
        path.display()
    ))
}

/// A TLS failure, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsFailure {
    /// The chain leads to no trusted root.
    UnknownAuthority,
    /// The certificate is not for the host connected to.
    WrongName {
        /// The host name connected to.
        expected: String,
        /// The names the certificate is for.
        presented: Vec<String>,
    },
    /// The certificate's time is over.
    Expired,
    /// The certificate's time has not begun.
    NotYetValid,
    /// The answer to the TLS hello was not TLS: a plain HTTP server.
    NotTls,
    /// The server wanted a client certificate, and none (or one it does not
    /// trust) was shown.
    ClientCertRefused,
    /// Anything else, in rustls's words.
    Other(String),
}

impl std::fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TlsFailure::UnknownAuthority => {
                f.write_str("TLS: the server's certificate is signed by an unknown authority")
            }
            TlsFailure::WrongName {
                expected,
                presented,
            } if presented.is_empty() => write!(
                f,
                "TLS: the server's certificate is not valid for the host name {expected}"
            ),
            TlsFailure::WrongName {
                expected,
                presented,
            } => write!(
                f,
                "TLS: the server's certificate is not valid for the host name {expected} (it is \
                 for {})",
                presented.join(", ")
            ),
            TlsFailure::Expired => f.write_str("TLS: the server's certificate has expired"),
            TlsFailure::NotYetValid => {
                f.write_str("TLS: the server's certificate is not valid yet")
            }
            TlsFailure::NotTls => f.write_str(
                "TLS: the server answered in plain HTTP, not TLS (is it an http:// server?)",
            ),
            TlsFailure::ClientCertRefused => f.write_str(
                "TLS: the server refused the connection: it wants a client certificate it trusts",
            ),
            TlsFailure::Other(words) => write!(f, "TLS: {words}"),
        }
    }
}

/// The TLS failure behind `e`, if it is one.
pub fn failure(e: &ureq::Error) -> Option<TlsFailure> {
    let tls = match e {
        ureq::Error::Rustls(tls) => tls,
        ureq::Error::Io(io) => io.get_ref()?.downcast_ref::<rustls::Error>()?,
        ureq::Error::Tls(words) => return Some(TlsFailure::Other((*words).to_string())),
        _ => return None,
    };
    Some(match tls {
        rustls::Error::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => TlsFailure::UnknownAuthority,
            CertificateError::NotValidForName => TlsFailure::WrongName {
                expected: String::new(),
                presented: Vec::new(),
            },
            CertificateError::NotValidForNameContext {
                expected,
                presented,
            } => TlsFailure::WrongName {
                expected: expected.to_str().into_owned(),
                presented: presented.iter().map(|p| bare_name(p).to_string()).collect(),
            },
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                TlsFailure::Expired
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsFailure::NotYetValid
            }
            other => TlsFailure::Other(format!("the server's certificate is invalid: {other:?}")),
        },
        rustls::Error::InvalidMessage(_) => TlsFailure::NotTls,
        rustls::Error::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown,
        ) => TlsFailure::ClientCertRefused,
        other => TlsFailure::Other(other.to_string()),
    })
}

/// `localhost` of rustls's `DnsName("localhost")`.
fn bare_name(presented: &str) -> &str {
    match (presented.find('"'), presented.rfind('"')) {
        (Some(a), Some(b)) if a < b => &presented[a + 1..b],
        _ => presented,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_cannot_be_used_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let e = TlsFiles {
            ca_file: Some(missing.clone()),
            ..TlsFiles::default()
        }
        .config()
        .unwrap_err();
        assert_eq!(e.file, TlsFile::CaFile);
        assert!(
            e.reason.contains("nope.pem") && e.reason.contains("cannot read"),
            "{e:?}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing here\n").unwrap();
        let e = TlsFiles {
            ca_file: Some(empty.clone()),
            ..TlsFiles::default()
        }
        .config()
        .unwrap_err();
        assert!(e.reason.contains("no certificate"), "{e:?}");
        let e = TlsFiles {
            cert: Some(empty.clone()),
            ..TlsFiles::default()
        }
        .config()
        .unwrap_err();
        assert_eq!(e.file, TlsFile::Key);
        assert!(e.reason.starts_with("missing"), "{e:?}");
    }

    #[test]
    fn presented_names_are_bare() {
        assert_eq!(bare_name("DnsName(\"localhost\")"), "localhost");
        assert_eq!(bare_name("10.0.0.1"), "10.0.0.1");
    }
}
