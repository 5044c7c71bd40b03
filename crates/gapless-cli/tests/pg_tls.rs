//! A PostgreSQL ledger over TLS: a private cluster with a certificate made
//! here (for `localhost` only, signed by an authority made here) that takes
//! TCP connections only over TLS. `sslmode` and `sslrootcert` as libpq
//! reads them; each failure is exit 2 with one line saying why, naming no
//! password.

mod common;
#[path = "common/pg_cluster.rs"]
mod pg_cluster;

use common::{Gapless, Server};
use pg_cluster::PgCluster;

/// `emit` one event then `check` it, on the ledger at `db`; the outputs.
fn round_trip(g: &Gapless, db: &str, asset: &str) -> (common::Output, common::Output) {
    let emit = g.run(
        &[
            "--db",
            db,
            "emit",
            asset,
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
            "--id",
            "day-1",
        ],
        None,
    );
    let check = g.run(
        &[
            "--db",
            db,
            "check",
            asset,
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
        ],
        None,
    );
    (emit, check)
}

fn assert_round_trip(g: &Gapless, db: &str, asset: &str) {
    let (emit, check) = round_trip(g, db, asset);
    assert_eq!(emit.code, 0, "emit over {db}: {}", emit.stderr);
    assert_eq!(check.code, 0, "check over {db}: {}", check.stderr);
}

/// A failure to open: exit 2, one line, naming `says` and no password.
fn assert_refused(g: &Gapless, db: &str, says: &[&str]) -> String {
    let (emit, _) = round_trip(g, db, "refused");
    assert_eq!(emit.code, 2, "emit over {db}: {emit:?}");
    let line = emit.stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "not one line: {line:?}");
    for s in says {
        assert!(line.contains(s), "{db}: {line:?} does not say {s:?}");
    }
    assert!(!line.contains("s3cret"), "the password is shown: {line}");
    line.to_string()
}

#[test]
fn tls_modes_connect_verify_and_refuse_as_libpq_does() {
    let (cluster, files) = PgCluster::start_tls_only();
    let g = Gapless::new();
    let ca = files.ca.display().to_string();
    let wrong = files.wrong_ca.display().to_string();
    let at = |host: &str, params: &str| {
        format!(
            "postgres://postgres:s3cret@{host}:{}/postgres?schema=tls&{params}",
            cluster.port
        )
    };

    // Encrypted, the certificate not checked.
    assert_round_trip(&g, &at("127.0.0.1", "sslmode=require"), "require");
    assert_round_trip(&g, &at("127.0.0.1", "sslmode=prefer"), "prefer");
    // The chain checked, not the name (the certificate is for localhost).
    assert_round_trip(
        &g,
        &at("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")),
        "verify-ca",
    );
    // Chain and name.
    let full = at(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    );
    assert_round_trip(&g, &full, "verify-full");

    // An authority that did not sign the server's certificate.
    let line = assert_refused(
        &g,
        &at(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={wrong}"),
        ),
        &["cannot open ledger", "TLS", "sslrootcert", "not signed"],
    );
    eprintln!("wrong CA: {line}");
    assert_refused(
        &g,
        &at(
            "localhost",
            &format!("sslmode=verify-ca&sslrootcert={wrong}"),
        ),
        &["TLS", "not signed"],
    );
    // The right authority, but a host the certificate is not for.
    let line = assert_refused(
        &g,
        &at(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        &[
            "TLS",
            "not valid for the host name 127.0.0.1",
            "it is for localhost",
        ],
    );
    eprintln!("wrong host: {line}");
    // Verification without root certificates, or with a file that is not
    // there.
    assert_refused(
        &g,
        &at("localhost", "sslmode=verify-full"),
        &["sslmode=verify-full needs sslrootcert=FILE"],
    );
    assert_refused(
        &g,
        &at(
            "localhost",
            "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
        ),
        &["sslrootcert /nonexistent/ca.pem", "cannot read"],
    );
    assert_refused(&g, &at("localhost", "sslmode=allow"), &["invalid sslmode"]);
    // Plain TCP (sslmode=disable, and the default) is refused by the server.
    for params in ["sslmode=disable", ""] {
        let line = assert_refused(
            &g,
            &at("127.0.0.1", params),
            &["no pg_hba.conf entry", "takes only TLS", "sslmode=require"],
        );
        eprintln!("plain: {line}");
    }

    // A server over TLS: a write and a question over HTTP.
    let mut served = Gapless::new();
    served.db = full.clone().into();
    let server = Server::start(&served);
    let mut client = Gapless::new();
    client.url = Some(server.url.clone());
    let out = client.run(
        &[
            "emit",
            "served",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
        ],
        None,
    );
    assert_eq!(out.code, 0, "emit through the server: {}", out.stderr);
    let out = client.run(
        &[
            "check",
            "served",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
        ],
        None,
    );
    assert_eq!(out.code, 0, "check through the server: {}", out.stderr);
    drop(server);
    // Every one of those connections was TLS: the server takes no other.
    drop(cluster);
}
