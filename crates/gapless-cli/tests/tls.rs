//! HTTPS end to end (SPEC §3 `--url`, §4 TLS, §7 targets), with
//! certificates made here (rcgen): the CLI against `gapless serve
//! --tls-cert` trusting the test CA by `--cacert`, `GAPLESS_CACERT` and
//! `SSL_CERT_FILE`; each TLS failure (unknown authority, wrong name,
//! expired, plain HTTP spoken to a TLS port and the reverse) one line
//! naming the URL and the reason; a client certificate shown to a TLS
//! front that requires one; a webhook target over HTTPS with a client
//! certificate; a certificate renewed on disk under a running server.

mod common;
#[path = "common/receiver.rs"]
mod receiver;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{ok, Gapless, Server};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use receiver::{Behaviour, Receiver};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

/// A certificate authority of the test.
struct Ca {
    params: CertificateParams,
    key: KeyPair,
    pem: String,
}

/// What a certificate is for, and when.
#[derive(Clone, Copy)]
enum Use {
    Server,
    Client,
    ExpiredServer,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Ca { params, key, pem }
    }

    /// A certificate for `names` (host names or IP addresses) and its key,
    /// both PEM.
    fn issue(&self, names: &[&str], what: Use) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.extended_key_usages = vec![match what {
            Use::Client => ExtendedKeyUsagePurpose::ClientAuth,
            Use::Server | Use::ExpiredServer => ExtendedKeyUsagePurpose::ServerAuth,
        }];
        if matches!(what, Use::ExpiredServer) {
            params.not_before = rcgen::date_time_ymd(2020, 1, 1);
            params.not_after = rcgen::date_time_ymd(2021, 1, 1);
        }
        let key = KeyPair::generate().unwrap();
        let issuer = Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Write `text` to `name` in `g`'s directory; its path.
fn file(g: &Gapless, name: &str, text: &str) -> PathBuf {
    let path = g.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A server certificate of `ca` for 127.0.0.1 written as `cert.pem` and
/// `key.pem` (the names a renewal writes over); their paths.
fn server_files(g: &Gapless, ca: &Ca, names: &[&str], what: Use) -> (PathBuf, PathBuf) {
    let (cert, key) = ca.issue(names, what);
    (file(g, "cert.pem", &cert), file(g, "key.pem", &key))
}

/// `gapless serve` of `g`'s ledger over TLS with these files.
fn serve_tls(g: &Gapless, cert: &Path, key: &Path) -> Server {
    Server::start_with(g, |cmd| {
        cmd.arg("--tls-cert").arg(cert).arg("--tls-key").arg(key);
    })
}

/// `gapless ARGS` with `env` set.
fn run_env(g: &Gapless, args: &[&str], env: &[(&str, &Path)]) -> common::Output {
    let mut cmd = g.command();
    cmd.env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .env_remove("GAPLESS_CACERT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::run(cmd.args(args), None)
}

/// The single line of a failed command's standard error, which must name
/// `url` and say `reason`.
fn failure(out: &common::Output, url: &str, reason: &str) -> String {
    assert_eq!(out.code, 2, "{out:?}");
    let line = out.stderr.trim_end();
    assert!(!line.contains('\n'), "one line: {line:?}");
    assert!(line.starts_with("gapless: "), "{line:?}");
    assert!(line.contains(url), "names {url}: {line:?}");
    assert!(line.contains(reason), "says {reason:?}: {line:?}");
    line.to_string()
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn roots(ca_pem: &str) -> rustls::RootCertStore {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    roots
}

/// GET `url` over HTTPS trusting `ca_pem`: status and body.
fn https_get(url: &str, ca_pem: &str) -> (u16, String) {
    let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(ca_pem.as_bytes())
        .filter_map(|i| match i.unwrap() {
            ureq::tls::PemItem::Certificate(c) => Some(c),
            _ => None,
        })
        .collect();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::new_with_certs(&certs))
        .unversioned_rustls_crypto_provider(provider())
        .build();
    // Far below the server's 30 s header timeout: an answer that waits for
    // it is a failure.
    let agent = ureq::Agent::config_builder()
        .tls_config(tls)
        .timeout_global(Some(Duration::from_secs(10)))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut resp = agent.get(url).call().unwrap();
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_to_string().unwrap())
}

/// The certificate `addr` presents in a TLS handshake for 127.0.0.1,
/// trusting `ca_pem`.
fn presented(addr: &str, ca_pem: &str) -> CertificateDer<'static> {
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots(ca_pem))
        .with_no_client_auth();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut sock = std::net::TcpStream::connect(addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    while conn.is_handshaking() {
        conn.complete_io(&mut sock).unwrap();
    }
    conn.peer_certificates().unwrap()[0].clone().into_owned()
}

fn der_of(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

/// A TLS front on a loopback port of its own, forwarding each connection
/// to `backend` (a plain HTTP server), requiring a client certificate of
/// `client_ca_pem`: a TLS-terminating proxy as deployments put in front.
/// Its address, and the count of the TLS connections it has accepted.
fn tls_front(
    backend: SocketAddr,
    server: &(String, String),
    client_ca_pem: &str,
) -> (SocketAddr, Arc<AtomicUsize>) {
    let chain: Vec<_> = CertificateDer::pem_slice_iter(server.0.as_bytes())
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_slice(server.1.as_bytes()).unwrap();
    let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
        Arc::new(roots(client_ca_pem)),
        provider(),
    )
    .build()
    .unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, counted) = (acceptor.clone(), counted.clone());
                tokio::spawn(async move {
                    let Ok(mut tls) = acceptor.accept(stream).await else {
                        return;
                    };
                    counted.fetch_add(1, Ordering::SeqCst);
                    let Ok(mut plain) = tokio::net::TcpStream::connect(backend).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
    });
    (addr, accepted)
}

/// The port of `url` (`http[s]://127.0.0.1:PORT`).
fn addr_of(url: &str) -> SocketAddr {
    url.split("://").nth(1).unwrap().parse().unwrap()
}

const EMIT: [&str; 6] = [
    "emit",
    "orders",
    "--start",
    "2025-06-14T10:00Z",
    "--end",
    "2025-06-14T11:00Z",
];

const CHECK: [&str; 7] = [
    "check",
    "orders",
    "--start",
    "2025-06-14T10:00Z",
    "--end",
    "2025-06-14T11:00Z",
    "--json",
];

/// Every command works over `https://` trusting the test CA by
/// `--cacert` (before or after the command), `GAPLESS_CACERT` or
/// `SSL_CERT_FILE`; `/healthz` and the page are served over TLS.
#[test]
fn cli_over_https_trusts_cacert_and_ssl_cert_file() {
    let g = Gapless::new();
    let ca = Ca::new("gapless test CA");
    let ca_file = file(&g, "ca.pem", &ca.pem);
    let (cert, key) = server_files(&g, &ca, &["127.0.0.1", "localhost"], Use::Server);
    let server = serve_tls(&g, &cert, &key);
    assert!(
        server.url.starts_with("https://127.0.0.1:"),
        "{}",
        server.url
    );
    let url = server.url.as_str();
    let ca_arg = ca_file.to_str().unwrap();

    let mut emit = vec!["--url", url, "--cacert", ca_arg];
    emit.extend(EMIT);
    ok(&run_env(&g, &emit, &[]));
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", url, "--cacert", ca_arg]);
    let by_flag = ok(&run_env(&g, &check, &[]));
    assert_eq!(by_flag["complete"], true, "{by_flag}");

    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", url]);
    let by_env = ok(&run_env(&g, &check, &[("GAPLESS_CACERT", &ca_file)]));
    let by_bundle = ok(&run_env(&g, &check, &[("SSL_CERT_FILE", &ca_file)]));
    assert_eq!(by_env, by_flag);
    assert_eq!(by_bundle, by_flag);
    // A name in the certificate, resolved rather than an address.
    let by_name = url.replace("127.0.0.1", "localhost");
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &by_name, "--cacert", ca_arg]);
    assert_eq!(ok(&run_env(&g, &check, &[])), by_flag);

    let (status, body) = https_get(&format!("{url}/healthz"), &ca.pem);
    assert_eq!(status, 200, "{body}");
    let (status, page) = https_get(&format!("{url}/"), &ca.pem);
    assert_eq!(status, 200);
    assert!(
        page.contains("<html") || page.contains("<!doctype"),
        "{page}"
    );

    // TLS files with a plain URL are refused, naming the flag.
    let plain = url.replace("https://", "http://");
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &plain, "--cacert", ca_arg]);
    let out = run_env(&g, &check, &[]);
    let line = failure(&out, &plain, "--cacert: only for an https:// server");
    assert!(!line.contains("unknown authority"), "{line}");
}

/// Each TLS failure is one line naming the URL and the reason, exit 2.
#[test]
fn tls_failures_name_the_url_and_the_reason() {
    let g = Gapless::new();
    let ca = Ca::new("the server's CA");
    let other_ca = Ca::new("another CA");
    let other_file = file(&g, "other-ca.pem", &other_ca.pem);
    let ca_file = file(&g, "ca.pem", &ca.pem);
    let ca_arg = ca_file.to_str().unwrap();

    // Unknown authority: trusting another CA only (SSL_CERT_FILE replaces
    // the system's store).
    let (cert, key) = server_files(&g, &ca, &["127.0.0.1"], Use::Server);
    let server = serve_tls(&g, &cert, &key);
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &server.url]);
    let out = run_env(&g, &check, &[("SSL_CERT_FILE", &other_file)]);
    failure(
        &out,
        &server.url,
        "certificate is signed by an unknown authority",
    );
    assert!(out.stderr.contains("--cacert"), "says what to do: {out:?}");

    // TLS spoken to... plain HTTP on the TLS port.
    let plain = server.url.replace("https://", "http://");
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &plain]);
    let out = run_env(&g, &check, &[]);
    failure(&out, &plain, "speaks HTTPS (TLS), not plain HTTP");
    drop(server);

    // The certificate of another name.
    let (cert, key) = server_files(&g, &ca, &["other.test"], Use::Server);
    let server = serve_tls(&g, &cert, &key);
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &server.url, "--cacert", ca_arg]);
    let out = run_env(&g, &check, &[]);
    failure(
        &out,
        &server.url,
        "not valid for the host name 127.0.0.1 (it is for other.test)",
    );
    drop(server);

    // An expired certificate.
    let (cert, key) = server_files(&g, &ca, &["127.0.0.1"], Use::ExpiredServer);
    let server = serve_tls(&g, &cert, &key);
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &server.url, "--cacert", ca_arg]);
    let out = run_env(&g, &check, &[]);
    failure(&out, &server.url, "certificate has expired");
    drop(server);

    // https:// to a plain server.
    let server = Server::start(&g);
    let tls_url = server.url.replace("http://", "https://");
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &tls_url, "--cacert", ca_arg]);
    let out = run_env(&g, &check, &[]);
    failure(&out, &tls_url, "answered in plain HTTP, not TLS");
    // The environment's TLS files are for https:// URLs only: a plain URL
    // still works with them set.
    let listed = run_env(
        &g,
        &["assets", "--json", "--url", &server.url],
        &[("GAPLESS_CACERT", &not_pem_yet(&g))],
    );
    assert!(ok(&listed)["assets"].is_array(), "{listed:?}");

    // SSL_CERT_FILE naming no file: the roots cannot be read, said as such.
    let nowhere = g.dir.path().join("nowhere.pem");
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &tls_url]);
    let out = run_env(&g, &check, &[("SSL_CERT_FILE", &nowhere)]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .starts_with("gapless: --url: cannot read the root certificates")
            && out.stderr.contains("nowhere.pem"),
        "{out:?}"
    );

    // A CA file that is not one, named by its flag.
    let not_pem = not_pem_yet(&g);
    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &tls_url, "--cacert", not_pem.to_str().unwrap()]);
    let out = run_env(&g, &check, &[]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.starts_with("gapless: --cacert: ") && out.stderr.contains("no certificate"),
        "{out:?}"
    );
}

/// A file that is no PEM file.
fn not_pem_yet(g: &Gapless) -> PathBuf {
    file(g, "not.pem", "hello\n")
}

/// A server (here a TLS front before a plain `gapless serve`) that
/// requires a client certificate refuses a client without one, in words,
/// and serves one with `--cert` and `--key`.
#[test]
fn client_certificate_when_the_server_requires_one() {
    let g = Gapless::new();
    let ca = Ca::new("front CA");
    let clients = Ca::new("clients CA");
    let backend = Server::start(&g);
    let (front, _) = tls_front(
        addr_of(&backend.url),
        &ca.issue(&["127.0.0.1"], Use::Server),
        &clients.pem,
    );
    let url = format!("https://{front}");
    let ca_file = file(&g, "ca.pem", &ca.pem);
    let (cert, key) = clients.issue(&["client.test"], Use::Client);
    let cert = file(&g, "client.pem", &cert);
    let key = file(&g, "client.key", &key);
    let (ca_arg, cert_arg, key_arg) = (
        ca_file.to_str().unwrap(),
        cert.to_str().unwrap(),
        key.to_str().unwrap(),
    );

    let mut check: Vec<&str> = CHECK.to_vec();
    check.extend(["--url", &url, "--cacert", ca_arg]);
    let out = run_env(&g, &check, &[]);
    failure(&out, &url, "wants a client certificate");

    let mut emit = vec!["--url", url.as_str(), "--cacert", ca_arg];
    emit.extend(["--cert", cert_arg, "--key", key_arg]);
    emit.extend(EMIT);
    ok(&run_env(&g, &emit, &[]));
    check.extend(["--cert", cert_arg, "--key", key_arg]);
    assert_eq!(ok(&run_env(&g, &check, &[]))["complete"], true);

    // A certificate without its key.
    let mut half: Vec<&str> = CHECK.to_vec();
    half.extend(["--url", &url, "--cacert", ca_arg, "--cert", cert_arg]);
    let out = run_env(&g, &half, &[]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.starts_with("gapless: --key: missing"), "{out:?}");
}

/// A webhook target with an `https://` URL, `ca_file`, `client_cert` and
/// `client_key` receives a rule's firings through a TLS front requiring the
/// client certificate, over one kept-alive connection; the same target
/// trusting the wrong CA keeps the firings pending with the TLS reason as
/// their error.
#[test]
fn webhook_target_over_https_receives_a_firing() {
    let g = Gapless::new();
    let ca = Ca::new("hook CA");
    let clients = Ca::new("clients CA");
    let rx = Receiver::start(None, Behaviour::default());
    let (front, connections) = tls_front(
        addr_of(&rx.url),
        &ca.issue(&["127.0.0.1"], Use::Server),
        &clients.pem,
    );
    let ca_file = file(&g, "ca.pem", &ca.pem);
    let other_ca = file(&g, "other-ca.pem", &Ca::new("another CA").pem);
    let (cert, key) = clients.issue(&["gapless.test"], Use::Client);
    let cert = file(&g, "client.pem", &cert);
    let key = file(&g, "client.key", &key);
    let target = |ca: &Path| {
        format!(
            "[[target]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"https://{front}/hook\"\n\
             ca_file = \"{}\"\nclient_cert = \"{}\"\nclient_key = \"{}\"\n\
             backoff = {{ base = \"100ms\", max = \"100ms\" }}\n",
            ca.display(),
            cert.display(),
            key.display()
        )
    };
    g.hourly_rule("orders_hourly", "orders", "hook");
    ok(&g.run(&EMIT, None));
    let mut next_hour = EMIT;
    (next_hour[3], next_hour[5]) = ("2025-06-14T11:00Z", "2025-06-14T12:00Z");
    ok(&g.run(&next_hour, None));

    let wrong = file(&g, "wrong.toml", &target(&other_ca));
    let out = g.run(
        &[
            "deliver",
            "--once",
            "--targets-file",
            wrong.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let f = ok(&g.run(&["firings", "--json"], None))["firings"][0].clone();
    assert_eq!(f["delivery"]["state"], "pending", "{f}");
    let error = f["delivery"]["last_error"].as_str().unwrap();
    assert!(
        error.contains("unknown authority") && error.contains("ca_file"),
        "{error}"
    );
    assert!(rx.received().is_empty());
    // Past the failed attempt's backoff.
    std::thread::sleep(Duration::from_millis(300));

    let right = file(&g, "right.toml", &target(&ca_file));
    let out = g.run(
        &[
            "deliver",
            "--once",
            "--targets-file",
            right.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let got = rx.wait_for(Duration::from_secs(10), |r| r.len() >= 2);
    assert_eq!(got.len(), 2, "{got:?}");
    for r in &got {
        assert_eq!(r.path, "/hook");
        assert_eq!(r.body["rule"], "orders_hourly");
    }
    for f in ok(&g.run(&["firings", "--json"], None))["firings"]
        .as_array()
        .unwrap()
    {
        assert_eq!(f["delivery"]["state"], "delivered", "{f}");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        1,
        "one kept-alive connection"
    );
}

/// A certificate renewed on disk is served by the next connection without
/// a restart; a renewal that cannot be used keeps the one in use and is
/// logged once.
#[test]
fn renewed_certificate_is_served_without_restart() {
    let g = Gapless::new();
    let ca = Ca::new("renewing CA");
    let (first_pem, first_key) = ca.issue(&["127.0.0.1"], Use::Server);
    let cert = file(&g, "cert.pem", &first_pem);
    let key = file(&g, "key.pem", &first_key);
    let server = serve_tls(&g, &cert, &key);
    let addr = server.url.trim_start_matches("https://").to_string();
    assert_eq!(presented(&addr, &ca.pem), der_of(&first_pem));

    // Renewed in place, a new key with it: the key first, as a renewal
    // tool may, then the certificate.
    let (second_pem, second_key) = ca.issue(&["127.0.0.1"], Use::Server);
    std::fs::write(&key, &second_key).unwrap();
    std::fs::write(&cert, &second_pem).unwrap();
    let renewed = wait_presented(&addr, &ca.pem, &der_of(&second_pem));
    assert!(renewed, "the renewed certificate was not served");
    let (status, _) = https_get(&format!("{}/healthz", server.url), &ca.pem);
    assert_eq!(status, 200);

    // A broken renewal: the certificate in use stays, one line says why
    // (a line logged between the two writes above, the key new and the
    // certificate not yet, is not counted).
    let before = server.log().len();
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nbroken\n").unwrap();
    for _ in 0..3 {
        std::thread::sleep(gapless_server::TLS_RECHECK + Duration::from_millis(200));
        assert_eq!(presented(&addr, &ca.pem), der_of(&second_pem));
    }
    let log = server.log();
    let warned: Vec<_> = log[before..]
        .iter()
        .filter(|l| l.contains("not renewed"))
        .collect();
    assert_eq!(warned.len(), 1, "{log:#?}");
    assert!(warned[0].contains("cert.pem"), "{}", warned[0]);
}

/// Whether `addr` presents `want` within a few of the server's rechecks.
fn wait_presented(addr: &str, ca_pem: &str, want: &CertificateDer<'_>) -> bool {
    let until = std::time::Instant::now() + 5 * gapless_server::TLS_RECHECK;
    while std::time::Instant::now() < until {
        if presented(addr, ca_pem) == *want {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}

/// Certificate files that cannot be used are refused at start, before the
/// address is announced: one line naming the flag, the file and why.
#[test]
fn serve_refuses_certificate_files_it_cannot_use() {
    let g = Gapless::new();
    let ca = Ca::new("refusing CA");
    let (cert, _) = server_files(&g, &ca, &["127.0.0.1"], Use::Server);
    let (_, other_key) = ca.issue(&["127.0.0.1"], Use::Server);
    let other_key = file(&g, "other.key", &other_key);
    let missing = g.dir.path().join("missing.pem");
    for (cert, key, says, why) in [
        (
            &cert,
            &other_key,
            "--tls-key ",
            "not the key of the certificate in",
        ),
        (
            &missing,
            &other_key,
            "--tls-cert ",
            "missing.pem: cannot read it",
        ),
        (
            &cert,
            &cert,
            "--tls-key ",
            "cert.pem: nothing of that kind in it",
        ),
    ] {
        let out = common::run(
            g.command()
                .args(["serve", "--listen", "127.0.0.1:0", "--tls-cert"])
                .arg(cert)
                .arg("--tls-key")
                .arg(key),
            None,
        );
        assert_eq!(out.code, 2, "{out:?}");
        assert!(!out.stderr.contains("listening on"), "{out:?}");
        let line = out.stderr.trim_end();
        assert!(!line.contains('\n'), "{line:?}");
        assert!(line.starts_with(&format!("gapless: {says}")), "{line:?}");
        assert!(line.contains(why), "{line:?}");
    }
    let out = common::run(g.command().args(["serve", "--tls-cert"]).arg(&cert), None);
    assert_eq!(out.code, 2);
    assert_eq!(
        out.stderr.trim_end(),
        "gapless: --tls-key: required, not given"
    );
}

/// At the connection limit, a connection silent in its TLS handshake makes
/// room for a new one once past its grace, as a silent plain one does:
/// `/healthz` is answered over TLS.
#[test]
fn a_silent_handshake_makes_room_at_the_connection_limit() {
    let g = Gapless::new();
    let ca = Ca::new("limit CA");
    let (cert, key) = server_files(&g, &ca, &["127.0.0.1"], Use::Server);
    let server = Server::start_with(&g, |cmd| {
        cmd.args(["--max-connections", "1", "--tls-cert"])
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key);
    });
    let silent = std::net::TcpStream::connect(addr_of(&server.url)).unwrap();
    // Past the fresh connection's grace (2 s).
    std::thread::sleep(Duration::from_millis(2500));
    let (status, body) = https_get(&format!("{}/healthz", server.url), &ca.pem);
    assert_eq!(status, 200, "{body}");
    drop(silent);
}
