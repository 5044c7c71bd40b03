//! TLS to the server, with libpq's `sslmode` and `sslrootcert` meanings, on
//! rustls (no system library).
//!
//! - `disable`: plain TCP.
//! - `prefer`: TLS when the server offers it, else plain; the certificate is
//!   not checked (unless a root certificate is given: then as `verify-ca`).
//! - `require`: TLS or no connection; the certificate is not checked (unless
//!   a root certificate is given: then as `verify-ca`).
//! - `verify-ca`: TLS, the server's certificate chain must lead to a root
//!   certificate of `sslrootcert`.
//! - `verify-full`: as `verify-ca`, and the certificate must name the host
//!   connected to.
//!
//! The root certificates are read from `sslrootcert=FILE` (PEM), else from
//! `~/.postgresql/root.crt` when that file exists, as libpq does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::task::JoinHandle;
use tokio_postgres::Error;
use tokio_postgres_rustls::MakeRustlsConnect;

use super::error::Refusal;

/// What `sslmode` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    /// The mode named `text`.
    pub(crate) fn parse(text: &str) -> Result<SslMode, Refusal> {
        Ok(match text {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => {
                return Err(Refusal::new(format!(
                    "invalid sslmode {text:?} (disable, prefer, require, verify-ca or verify-full)"
                )))
            }
        })
    }

    /// The `postgres` client's mode: whether TLS is tried, or required.
    pub(crate) fn client_mode(self) -> tokio_postgres::config::SslMode {
        match self {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }

    fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// How connections are made: plain, or TLS with a client configuration.
#[derive(Clone)]
pub(crate) enum Tls {
    Plain,
    Rustls(MakeRustlsConnect),
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Tls::Plain => "Plain",
            Tls::Rustls(_) => "Rustls",
        })
    }
}

impl Tls {
    /// Connect with `config` over this transport, the connection driven by
    /// a task of the current tokio runtime, whose handle is returned: the
    /// task ends with the connection.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub(crate) async fn connect_driven(
        &self,
        config: &tokio_postgres::Config,
    ) -> Result<(tokio_postgres::Client, JoinHandle<()>), Error> {
        // The connection's end (the server went away) shows in the client's
        // next call; the task's own result adds nothing.
        Ok(match self {
            Tls::Plain => {
                let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
                (client, tokio::spawn(async move { drop(connection.await) }))
            }
            Tls::Rustls(make) => {
                let (client, connection) = config.connect(make.clone()).await?;
                (client, tokio::spawn(async move { drop(connection.await) }))
            }
        })
    }
}

/// The default root certificate file of libpq, `~/.postgresql/root.crt`.
fn default_root_file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home).join(".postgresql").join("root.crt");
    path.is_file().then_some(path)
}

/// The transport of `mode` with the root certificates of `root_file` (else
/// libpq's default file, when it exists).
///
/// # Errors
///
/// A one-line reason: `verify-ca` or `verify-full` without root
/// certificates, a root file that cannot be read or holds no certificate
/// (caused by the error of reading or parsing it).
pub(crate) fn transport(mode: SslMode, root_file: Option<&str>) -> Result<Tls, Refusal> {
    if mode == SslMode::Disable {
        return Ok(Tls::Plain);
    }
    let root_file = root_file.map(PathBuf::from).or_else(default_root_file);
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = match &root_file {
        Some(path) => Some(Arc::new(read_roots(path)?)),
        None if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) => {
            return Err(Refusal::new(format!(
                "sslmode={} needs sslrootcert=FILE (the PEM certificates of the \
                 authorities to trust; there is no ~/.postgresql/root.crt)",
                mode.name()
            )))
        }
        None => None,
    };
    let verifier: Arc<dyn ServerCertVerifier> = match roots {
        None => Arc::new(AnyCertificate(provider.clone())),
        Some(roots) => {
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| Refusal::new(format!("sslrootcert: {e}")).caused_by(e))?;
            if mode == SslMode::VerifyFull {
                webpki
            } else {
                Arc::new(AnyName(webpki))
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Refusal::new(format!("TLS: {e}")).caused_by(e))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Tls::Rustls(MakeRustlsConnect::new(config)))
}

/// The certificates of the PEM file at `path`.
fn read_roots(path: &Path) -> Result<RootCertStore, Refusal> {
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| {
        Refusal::new(format!(
            "sslrootcert {shown}: cannot read it: {}",
            pem_reason(&e)
        ))
        .caused_by(e)
    })?;
    let mut roots = RootCertStore::empty();
    for cert in certs {
        let cert = cert.map_err(|e| {
            Refusal::new(format!("sslrootcert {shown}: {}", pem_reason(&e))).caused_by(e)
        })?;
        roots.add(cert).map_err(|e| {
            Refusal::new(format!(
                "sslrootcert {shown}: not a usable certificate: {e}"
            ))
            .caused_by(e)
        })?;
    }
    if roots.is_empty() {
        return Err(Refusal::new(format!(
            "sslrootcert {shown}: no certificate in it (a PEM file of \
             -----BEGIN CERTIFICATE----- blocks)"
        )));
    }
    Ok(roots)
}

fn pem_reason(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        other => format!("not a PEM file ({other:?})"),
    }
}

/// `require` and `prefer` without root certificates: encrypted, the
/// server's certificate taken as it is (but its handshake signatures still
/// checked).
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root, whatever host names
/// the certificate is for.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // The name is checked last, after the chain: a wrong name means
        // the chain was good.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// The TLS failure among the causes of `e`, if any, in words that say what
/// to check.
pub(crate) fn tls_failure(e: &Error) -> Option<String> {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        let found = s.downcast_ref::<rustls::Error>().or_else(|| {
            s.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(tls) = found {
            return Some(match tls {
                rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                    "TLS: the server's certificate is not signed by an authority of \
                     sslrootcert (invalid peer certificate: UnknownIssuer)"
                        .to_string()
                }
                rustls::Error::InvalidCertificate(CertificateError::NotValidForNameContext {
                    expected,
                    presented,
                }) => format!(
                    "TLS: the server's certificate is not valid for the host name {} \
                     connected to (it is for {}; sslmode=verify-full)",
                    expected.to_str(),
                    presented
                        .iter()
                        .map(|p| bare_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                rustls::Error::InvalidCertificate(CertificateError::NotValidForName) => {
                    "TLS: the server's certificate is not valid for the host name \
                     connected to (sslmode=verify-full)"
                        .to_string()
                }
                other => format!("TLS: {other}"),
            });
        }
        src = s.source();
    }
    // The client's own words for a server that answers it has no TLS.
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = src {
        if s.to_string().contains("server does not support TLS") {
            return Some(
                "TLS: the server does not support TLS (the sslmode needs a server with ssl=on)"
                    .to_string(),
            );
        }
        src = s.source();
    }
    None
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
    fn modes_are_libpq_s() {
        for (text, mode) in [
            ("disable", SslMode::Disable),
            ("prefer", SslMode::Prefer),
            ("require", SslMode::Require),
            ("verify-ca", SslMode::VerifyCa),
            ("verify-full", SslMode::VerifyFull),
        ] {
            assert_eq!(SslMode::parse(text).unwrap(), mode);
            assert_eq!(mode.name(), text);
        }
        let e = SslMode::parse("allow").unwrap_err().to_string();
        assert!(e.contains("\"allow\"") && e.contains("verify-full"), "{e}");
    }

    #[test]
    fn presented_names_are_bare() {
        assert_eq!(bare_name("DnsName(\"localhost\")"), "localhost");
        assert_eq!(bare_name("10.0.0.1"), "10.0.0.1");
    }

    #[test]
    fn verification_needs_root_certificates_that_can_be_read() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nope.pem");
        let e = transport(SslMode::VerifyFull, Some(missing.to_str().unwrap())).unwrap_err();
        let cause = std::error::Error::source(&e).expect("the error of reading the file");
        assert!(cause.is::<rustls::pki_types::pem::Error>(), "{cause:?}");
        let e = e.to_string();
        assert!(
            e.starts_with("sslrootcert ") && e.contains("nope.pem"),
            "{e}"
        );
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing here\n").unwrap();
        let e = transport(SslMode::VerifyCa, Some(empty.to_str().unwrap()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no certificate"), "{e}");
        assert!(matches!(transport(SslMode::Disable, None), Ok(Tls::Plain)));
        assert!(matches!(
            transport(SslMode::Require, None),
            Ok(Tls::Rustls(_))
        ));
    }
}
