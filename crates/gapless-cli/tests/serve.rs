//! `gapless serve` as a process: SIGTERM lets an in-flight batch finish or
//! fail whole, an open server refuses a non-loopback address, a bad tokens
//! configuration is named in one line, tokens scope what a client may do,
//! and the log is JSON or plain text without colour codes when piped.

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
fn a_bad_tokens_configuration_is_named_in_one_line() {
    let g = Gapless::new();
    std::fs::write(
        g.dir.path().join("tokens.toml"),
        "[[token]]\nsecret = \"reader-0123456789abcdef\"\nscopes = [\"read\"]\n\n\
         [[token]]\nname = \"orders-producer\"\nsecret = \"writer-0123456789abcdef\"\n\
         scope = [\"write\"]\n",
    )
    .unwrap();
    let serve = |args: &[&str], tokens: Option<&str>| {
        let mut cmd = g.command();
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("GAPLESS_TOKENS")
            .env_remove("GAPLESS_TOKENS_FILE");
        if let Some(text) = tokens {
            cmd.env("GAPLESS_TOKENS", text);
        }
        common::run(&mut cmd, None)
    };
    for (out, expected) in [
        (
            serve(&["--tokens-file", "tokens.toml"], None),
            r#"gapless: tokens.toml: token 2 ("orders-producer"): unknown field "scope": the fields are name, secret, scopes, prefixes"#,
        ),
        (
            serve(&[], Some("")),
            "gapless: GAPLESS_TOKENS is empty: give [[token]] entries or unset it",
        ),
    ] {
        assert_eq!(out.code, 2, "{}", out.stderr);
        assert_eq!(out.stderr, format!("{expected}\n"));
    }
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

/// The log lines `gapless serve` writes to a pipe after `listening on`,
/// around one request, until SIGTERM stops it.
fn log_after_one_request(g: &Gapless, configure: impl FnOnce(&mut Command)) -> Vec<String> {
    use gapless_api::Ask;
    use std::io::BufRead;
    use std::process::Stdio;

    let mut cmd = g.command();
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "info")
        .env_remove("GAPLESS_LOG_FORMAT")
        .env_remove("GAPLESS_TOKENS")
        .env_remove("GAPLESS_TOKENS_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    configure(&mut cmd);
    let mut child = cmd.spawn().expect("spawn gapless serve");
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("gapless serve exited before listening")
            .unwrap();
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.trim().to_string();
        }
    };
    let assets = gapless_client::Client::new(&url)
        .unwrap()
        .assets(&Default::default());
    assert!(assets.is_ok(), "{assets:?}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let log: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success(), "{log:#?}");
    log
}

#[test]
fn the_log_is_json_lines_or_text_without_colour_codes() {
    let g = Gapless::new();
    let json = |log: &[String]| {
        assert!(
            log.iter().any(|l| l.contains("/v1/assets")),
            "the request is not in the log: {log:#?}"
        );
        for line in log {
            let v: serde_json::Value =
                serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"));
            assert!(v["level"].is_string(), "no level: {line}");
        }
    };
    json(&log_after_one_request(&g, |c| {
        c.args(["--log-format", "json"]);
    }));
    json(&log_after_one_request(&g, |c| {
        c.env("GAPLESS_LOG_FORMAT", "json");
    }));
    for configure in [
        (|c: &mut Command| {
            c.args(["--log-format", "text"]);
        }) as fn(&mut Command),
        |_| {},
    ] {
        let log = log_after_one_request(&g, configure);
        assert!(
            log.iter()
                .any(|l| l.contains("INFO") && l.contains("/v1/assets")),
            "{log:#?}"
        );
        assert!(
            !log.iter().any(|l| l.contains("\x1b[")),
            "colour codes in a piped log: {log:#?}"
        );
    }
    let out = g.run(&["serve", "--log-format", "yaml"], None);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("text, json"), "{}", out.stderr);
}

#[test]
fn every_event_acknowledged_before_a_sigkill_of_the_server_is_kept() {
    use gapless_api::{Ask, BodyFormat, RecordRequest};
    use gapless_client::Client;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    let g = Gapless::new();
    let mut server = Server::start(&g);
    let acknowledged = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let producers: Vec<_> = (0..8)
        .map(|p| {
            let client = Client::new(&server.url).unwrap();
            let (acknowledged, stop) = (acknowledged.clone(), stop.clone());
            std::thread::spawn(move || {
                for i in 0.. {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let id = format!("p{p}-{i}");
                    let minute = i % 1440;
                    let event = format!(
                        "{{\"asset\":\"orders\",\"id\":\"{id}\",\"start\":\"2025-06-01T{:02}:{:02}:00Z\",\"end\":\"2025-06-01T{:02}:{:02}:30Z\"}}",
                        minute / 60,
                        minute % 60,
                        minute / 60,
                        minute % 60
                    );
                    let sent = client.record(RecordRequest {
                        body: &mut event.as_bytes(),
                        format: BodyFormat::Json,
                        source: "the event",
                        size: Some(event.len() as u64),
                    });
                    match sent {
                        Ok(a) if a.accepted == 1 => acknowledged.lock().unwrap().push(id),
                        Ok(a) => panic!("{id}: unexpected answer {a:?}"),
                        Err(_) => break, // the server is gone
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(600));
    server.kill();
    stop.store(true, Ordering::Relaxed);
    for p in producers {
        p.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 20,
        "too few writes before the kill to test anything: {}",
        acknowledged.len()
    );

    let out = g.run(&["events", "orders", "--limit", "10000", "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let stored: std::collections::HashSet<String> = out.json()["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let lost: Vec<&String> = acknowledged
        .iter()
        .filter(|id| !stored.contains(*id))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged events lost, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
}

/// A token sent in the URL (`?access_token=`, as OAuth allows; gapless
/// refuses the parameter) stays out of the request log, in both log
/// formats: the value of a query parameter with a secret's name is logged
/// as `REDACTED`, the rest of the URI as sent.
#[test]
fn secret_query_values_stay_out_of_the_log() {
    let g = Gapless::new();
    for format in ["text", "json"] {
        let server = Server::start_with(&g, |c| {
            c.env("RUST_LOG", "info").args(["--log-format", format]);
        });
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        let asked = [
            "/v1/assets?access_token=sEcReT-aaaa1111&limit=1",
            "/healthz?Api-Key=sEcReT-bbbb2222",
            "/v1/assets/orders/coverage?start=2025-06-01&end=2025-06-02&password=sEcReT-cccc3333",
        ];
        for path in asked {
            let status = agent
                .get(format!("{}{path}", server.url))
                .call()
                .unwrap()
                .status();
            assert!(status.is_client_error() || status.is_success(), "{status}");
        }
        // Each request's line is logged once it is answered (in JSON, its
        // URI twice: the span's and the spans').
        let logged = [
            "access_token=REDACTED&limit=1",
            "Api-Key=REDACTED",
            "start=2025-06-01&end=2025-06-02&password=REDACTED",
        ];
        let until = std::time::Instant::now() + Duration::from_secs(10);
        let log = loop {
            let log = server.log().join("\n");
            if logged.iter().all(|l| log.contains(l)) || std::time::Instant::now() > until {
                break log;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(
            !log.contains("sEcReT"),
            "{format}: a secret is logged:\n{log}"
        );
        for kept in logged {
            assert!(
                log.contains(kept),
                "{format}: {kept:?} is not logged:\n{log}"
            );
        }
    }
}
