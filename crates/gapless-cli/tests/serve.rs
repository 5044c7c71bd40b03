//! `gapless serve` as a process: SIGTERM lets an in-flight batch finish or
//! fail whole, an open server refuses a non-loopback address, and tokens
//! scope what a client may do.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{Gapless, Server};

fn stored(g: &Gapless, asset: &str) -> u64 {
    let out = g.run(&["assets", "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json()["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["asset"] == asset)
        .map_or(0, |a| a["events"].as_u64().unwrap())
}

#[test]
fn sigterm_lets_an_inflight_batch_finish_or_fail_whole() {
    const N: u64 = 40_000;
    let embedded = Gapless::new();
    let mut remote = Gapless::new();
    remote.db = embedded.db.clone();
    let mut server = Server::start(&embedded);
    remote.url = Some(server.url.clone());

    let mut text = String::new();
    for i in 0..N {
        let m = i % 1440;
        text.push_str(&format!(
            "{{\"asset\":\"big\",\"id\":\"e{i}\",\"start\":\"2025-06-01T{:02}:{:02}:00Z\",\"end\":\"2025-06-01T{:02}:{:02}:30Z\"}}\n",
            m / 60,
            m % 60,
            m / 60,
            m % 60
        ));
    }
    let path = embedded.dir.path().join("big.ndjson");
    std::fs::write(&path, text).unwrap();
    let ingest = {
        let remote_url = server.url.clone();
        let mut cmd = remote.command();
        cmd.env("GAPLESS_URL", remote_url)
            .args(["ingest", path.to_str().unwrap(), "--json"]);
        std::thread::spawn(move || cmd.output().unwrap())
    };
    std::thread::sleep(Duration::from_millis(150));
    let killed = Command::new("kill")
        .args(["-TERM", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(
        server.wait_exit(Duration::from_secs(30)),
        Some(0),
        "serve did not stop cleanly on SIGTERM"
    );

    let out = ingest.join().unwrap();
    let n = stored(&embedded, "big");
    if out.status.success() {
        assert_eq!(n, N, "an acknowledged batch is not all there");
    } else {
        assert!(n == 0 || n == N, "a batch is partially stored: {n} of {N}");
    }
}

#[test]
fn an_open_server_refuses_a_non_loopback_address() {
    let g = Gapless::new();
    let out = g.run(&["serve", "--listen", "0.0.0.0:0"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("0.0.0.0") && out.stderr.contains("token"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.trim_end().lines().count(), 1, "{}", out.stderr);
}

#[test]
fn tokens_scope_what_a_client_may_do() {
    let g = Gapless::new();
    let tokens = r#"
[[token]]
secret = "reader-0123456789abcdef"
scopes = ["read"]

[[token]]
secret = "writer-0123456789abcdef"
scopes = ["read", "write"]
prefixes = ["s3://lake/orders"]
"#;
    let file = g.dir.path().join("tokens.toml");
    std::fs::write(&file, tokens).unwrap();
    let server = Server::start_with(&g, |c| {
        c.args(["--tokens-file", file.to_str().unwrap()]);
    });
    let as_token = |token: Option<&str>, args: &[&str]| {
        let mut cmd = g.command();
        cmd.env("GAPLESS_URL", &server.url)
            .env_remove("GAPLESS_TOKEN");
        if let Some(t) = token {
            cmd.env("GAPLESS_TOKEN", t);
        }
        common::run(cmd.args(args), None)
    };
    let emit = |asset: &str| {
        vec![
            "emit",
            asset,
            "--start",
            "2025-06-01T00:00:00Z",
            "--end",
            "2025-06-01T00:05:00Z",
        ]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>()
    };
    let run = |token: Option<&str>, args: &[String]| {
        as_token(token, &args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    // No token, wrong token: refused; read token cannot write.
    for token in [
        None,
        Some("wrong-0123456789abcdef"),
        Some("reader-0123456789abcdef"),
    ] {
        let out = run(token, &emit("s3://lake/orders/x"));
        assert_eq!(out.code, 2, "{token:?}: {}", out.stderr);
    }
    // The writer writes under its prefix only.
    let out = run(Some("writer-0123456789abcdef"), &emit("s3://lake/clicks"));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let out = run(Some("writer-0123456789abcdef"), &emit("s3://lake/orders/x"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    // The reader reads; only the permitted write is stored.
    let out = as_token(Some("reader-0123456789abcdef"), &["assets", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let names: Vec<String> = out.json()["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["asset"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["s3://lake/orders/x".to_string()]);
    // Tokens never reach the log or the answer.
    let out = as_token(Some("wrong-0123456789abcdef"), &["assets"]);
    assert!(
        !out.stderr.contains("wrong-0123456789abcdef"),
        "{}",
        out.stderr
    );
}
