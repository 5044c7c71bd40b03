//! Bad input gets exit 2, one line naming the input and the reason, and
//! nothing stored (beyond the conformance cases).

mod common;

use common::{Gapless, PgSchema, Server};

const GOOD: &str =
    r#"{"asset":"orders","id":"good","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z"}"#;

/// Events of `orders` stored (none when the ledger has never seen it).
fn stored(g: &Gapless) -> usize {
    let out = g.run(&["assets", "--json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.json()["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["asset"] == "orders")
        .map_or(0, |a| a["events"].as_u64().unwrap() as usize)
}

/// `bad` as line 2 after a good line: exit 2, one line naming line 2 and
/// containing `reason`, nothing stored.
fn rejected(bad: &str, reason: &str) {
    let g = Gapless::new();
    let out = g.run(&["ingest", "-"], Some(&format!("{GOOD}\n{bad}\n")));
    assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
    let msg = out.stderr.trim_end();
    assert_eq!(msg.lines().count(), 1, "{bad}: not one line: {msg}");
    assert!(msg.contains("line 2"), "{bad}: does not name line 2: {msg}");
    assert!(
        msg.to_lowercase().contains(reason),
        "{bad}: does not say {reason:?}: {msg}"
    );
    assert_eq!(stored(&g), 0, "{bad}: something was stored");
}

#[test]
fn each_bad_line_is_named_and_nothing_is_stored() {
    let big = "x".repeat(65 * 1024);
    let long_name = "a".repeat(513);
    let cases: Vec<(String, &str)> = vec![
        ("not json".into(), "json"),
        ("[1, 2]".into(), "object"),
        ("\"orders\"".into(), "object"),
        (r#"{"asset":"orders","start":"2025-06-01T00:10:00Z","end":"2025-06-01T00:05:00Z"}"#.into(), "reversed"),
        (r#"{"asset":"orders","start":"2025-06-01T00:10:00Z","end":"2025-06-01T00:10:00Z"}"#.into(), "empty"),
        (r#"{"asset":"orders","start":"10000-01-01T00:00:00Z","end":"10000-01-02T00:00:00Z"}"#.into(), "10000"),
        (r#"{"asset":"orders","start":"0000-12-31T00:00:00Z","end":"0001-01-02T00:00:00Z"}"#.into(), "0000"),
        (r#"{"asset":"orders","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z","kind":"maybe"}"#.into(), "maybe"),
        (r#"{"asset":"orders","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z","extra":"rows"}"#.into(), "extra"),
        (format!(r#"{{"asset":"orders","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z","extra":{{"blob":"{big}"}}}}"#), "64"),
        (r#"{"asset":"","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z"}"#.into(), "asset"),
        (format!(r#"{{"asset":"{long_name}","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z"}}"#), "512"),
        ("{\"asset\":\"or\\u0007ders\",\"start\":\"2025-06-01T00:00:00Z\",\"end\":\"2025-06-01T00:05:00Z\"}".into(), "control"),
        (r#"{"asset":"orders","partition_key":"2025-06-01T10:05:00"}"#.into(), "span"),
        (r#"{"asset":"orders","id":"good","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:06:00Z"}"#.into(), "conflict"),
    ];
    for (bad, reason) in cases {
        rejected(&bad, reason);
    }
}

#[test]
fn a_conflict_early_in_a_large_file_stops_the_whole_batch() {
    let g = Gapless::new();
    assert_eq!(g.run(&["ingest", "-"], Some(&format!("{GOOD}\n"))).code, 0);
    // The conflict is on line 1; 50,000 lines follow, more than the
    // parser hands over before the writer sees the conflict.
    let mut text = GOOD.replace("00:05:00Z", "00:06:00Z");
    text.push('\n');
    for i in 0..50_000 {
        text.push_str(&format!(
            "{{\"asset\":\"orders\",\"id\":\"n{i}\",\"start\":\"2025-06-02T00:00:00Z\",\"end\":\"2025-06-02T00:05:00Z\"}}\n"
        ));
    }
    let out = g.run(&["ingest", "-"], Some(&text));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("line 1: conflict"), "{}", out.stderr);
    assert_eq!(stored(&g), 1);
}

#[test]
fn a_bad_line_late_in_a_large_file_stores_nothing() {
    let g = Gapless::new();
    let mut text = String::new();
    for i in 0..30_000 {
        text.push_str(&format!(
            "{{\"asset\":\"orders\",\"id\":\"n{i}\",\"start\":\"2025-06-02T00:00:00Z\",\"end\":\"2025-06-02T00:05:00Z\"}}\n"
        ));
    }
    text.push_str("{\"asset\":\"orders\"}\n");
    let out = g.run(&["ingest", "-"], Some(&text));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("line 30001"), "{}", out.stderr);
    assert_eq!(stored(&g), 0);
}

#[test]
fn unusable_ledgers_are_named() {
    let g = Gapless::new();
    std::fs::write(g.dir.path().join("garbage.db"), "this is not a database").unwrap();
    let out = g.run(&["--db", "garbage.db", "assets"], None);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("garbage.db") && out.stderr.contains("not a gapless ledger"),
        "{}",
        out.stderr
    );

    let out = g.run(&["--db", "no/such/dir/x.db", "assets"], None);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no/such/dir"), "{}", out.stderr);

    let out = g.run(
        &["--db", "postgres://nobody@127.0.0.1:1/none", "assets"],
        None,
    );
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("cannot open ledger"), "{}", out.stderr);
}

#[test]
fn bad_flags_name_the_flag() {
    let g = Gapless::new();
    // A ledger that knows `orders`: questions about a missing ledger or an
    // unseen asset are errors of their own (see tests/questions.rs).
    assert_eq!(g.run(&["asset", "set", "orders"], None).code, 0);
    for (args, needle) in [
        (
            vec![
                "check",
                "orders",
                "--start",
                "2025-02-30",
                "--end",
                "2025-03-01",
            ],
            "start",
        ),
        (
            vec![
                "check",
                "orders",
                "--start",
                "2025-06-02",
                "--end",
                "2025-06-01",
            ],
            "reversed",
        ),
        (
            vec![
                "windows",
                "orders",
                "--start",
                "2025-06-01",
                "--end",
                "2025-06-02",
                "--every",
                "1h",
                "--tz",
                "Europe/Berln",
            ],
            "europe/berlin",
        ),
        (
            vec![
                "emit",
                "orders",
                "--start",
                "2025-06-01",
                "--end",
                "2025-06-02",
                "--extra",
                "[1]",
            ],
            "extra",
        ),
        (vec!["events", "orders", "--limit", "0"], "limit"),
    ] {
        let out = g.run(&args, None);
        assert_eq!(out.code, 2, "{args:?}");
        assert_eq!(
            out.stderr.trim_end().lines().count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.to_lowercase().contains(needle),
            "{args:?}: {}",
            out.stderr
        );
    }
}

/// Make `dir` read-only even for root (`chattr +i`), or by mode bits for
/// anyone else. False when neither works here.
fn make_read_only(dir: &std::path::Path, read_only: bool) -> bool {
    let flag = if read_only { "+i" } else { "-i" };
    if std::process::Command::new("chattr")
        .arg(flag)
        .arg(dir)
        .status()
        .is_ok_and(|s| s.success())
    {
        return true;
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = if read_only { 0o555 } else { 0o755 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).is_ok()
        && (!read_only || std::fs::write(dir.join(".probe"), "").is_err())
}

#[test]
fn a_read_only_directory_is_named_and_nothing_changes() {
    let g = Gapless::new();
    let dir = g.dir.path().join("ro");
    std::fs::create_dir(&dir).unwrap();
    let db = dir.join("ledger.db");
    let db_arg = db.to_str().unwrap().to_string();
    let emit = |id: &str| {
        g.run(
            &[
                "--db",
                &db_arg,
                "emit",
                "orders",
                "--start",
                "2025-06-01",
                "--end",
                "2025-06-02",
                "--id",
                id,
            ],
            None,
        )
    };
    assert_eq!(emit("first").code, 0);
    if !make_read_only(&dir, true) {
        eprintln!("skipped: no way to make a directory read-only here");
        return;
    }
    let new_ledger = g.run(
        &["--db", dir.join("new.db").to_str().unwrap(), "assets"],
        None,
    );
    let second = emit("second");
    let listing = g.run(&["--db", &db_arg, "events", "orders", "--json"], None);
    assert!(make_read_only(&dir, false));

    assert_eq!(new_ledger.code, 2, "{}", new_ledger.stderr);
    assert!(
        new_ledger.stderr.contains("new.db"),
        "{}",
        new_ledger.stderr
    );
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        second.stderr.contains("ledger.db") || second.stderr.contains("ro"),
        "{}",
        second.stderr
    );
    if listing.code == 0 {
        assert_eq!(listing.json()["events"].as_array().unwrap().len(), 1);
    }
    let after = g.run(&["--db", &db_arg, "events", "orders", "--json"], None);
    assert_eq!(
        after.json()["events"].as_array().unwrap().len(),
        1,
        "the refused write left something"
    );
}

/// An argument clap refuses is one line naming the flag and the reason,
/// exit 2, as every other error: no tip, no usage (`--help` has them). A
/// negative-looking value after its flag is the flag's value, refused for
/// what it is, as the same value after `=` is.
#[test]
fn argument_errors_are_one_line_naming_the_flag() {
    let g = Gapless::new();
    assert_eq!(
        g.run(
            &[
                "emit",
                "orders",
                "--start",
                "2025-06-01",
                "--end",
                "2025-06-02"
            ],
            None
        )
        .code,
        0
    );
    let range = ["orders", "--start", "2025-06-01", "--end", "2025-06-02"];
    let with = |command: &str, more: &[&'static str]| -> Vec<String> {
        let mut args = vec![command.to_string()];
        args.extend(range.iter().map(|s| s.to_string()));
        args.extend(more.iter().map(|s| s.to_string()));
        args
    };
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (with("check", &["--max-gap", "-5m"]), "max_gap", "negative"),
        (with("check", &["--max-gap=-5m"]), "max_gap", "negative"),
        (
            with("check", &["--max-gap", "5m", "--min-ratio", "0.5"]),
            "--max-gap",
            "--min-ratio",
        ),
        (
            with("check", &["--policy", "full", "--max-gap", "5m"]),
            "--policy",
            "--max-gap",
        ),
        (
            vec![
                "check".into(),
                "orders".into(),
                "--start".into(),
                "2025-06-01".into(),
            ],
            "--end",
            "required",
        ),
        (with("wait", &["--timeout", "-1s"]), "timeout", "negative"),
        (with("check", &["--bogus"]), "--bogus", "unknown"),
        (
            vec!["serve".into(), "--max-connections".into(), "0".into()],
            "--max-connections",
            "0",
        ),
        (vec!["chek".into()], "chek", "check"),
    ];
    for (args, flag, reason) in cases {
        let out = g.run(&args, None);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        let msg = out.stderr.trim_end();
        assert_eq!(msg.lines().count(), 1, "{args:?}: not one line:\n{msg}");
        assert!(msg.starts_with("gapless: "), "{args:?}: {msg}");
        assert!(msg.contains(flag), "{args:?}: does not name {flag}: {msg}");
        assert!(
            msg.contains(reason),
            "{args:?}: does not say {reason}: {msg}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    // Help and version still print in full, exit 0.
    let help = g.run(&["check", "--help"], None);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(help.stdout.contains("Usage:"), "{}", help.stdout);
    let version = g.run(&["--version"], None);
    assert_eq!(version.code, 0, "{}", version.stderr);
    assert!(version.stdout.starts_with("gapless "), "{}", version.stdout);
}

/// An event whose `extra` is `levels` objects and arrays deep.
fn nested(id: &str, levels: usize) -> String {
    let inner = levels - 1;
    format!(
        "{{\"asset\":\"orders\",\"id\":\"{id}\",\"start\":\"2025-06-01T00:10:00Z\",\
         \"end\":\"2025-06-01T00:15:00Z\",\"extra\":{{\"d\":\"[{{\",\"n\":{}{}}}}}",
        "[".repeat(inner),
        "]".repeat(inner)
    )
}

/// `extra` nested deeper than 64 levels is refused at ingestion, naming the
/// event, by `ingest` and `emit`, by `POST /v1/events` (an array and
/// NDJSON) and by `ingest` over `--url`; nothing of the batch is stored.
/// 64 levels are taken and read back as given, over HTTP too.
fn deep_extra_is_refused(g: &Gapless) {
    // 20,000 levels are 40 KB, under the 64 KiB an `extra` may have.
    let deep = nested("deep", 20_000);
    assert!(deep.len() < 64 << 10);
    let over = nested("over", 65);
    for bad in [&deep, &over] {
        let out = g.run(&["ingest", "-"], Some(&format!("{GOOD}\n{bad}\n")));
        assert_eq!(out.code, 2, "{}", out.stderr);
        let msg = out.stderr.trim_end();
        assert_eq!(msg.lines().count(), 1, "{msg}");
        assert!(
            msg.contains("line 2") && msg.contains("extra") && msg.contains("64"),
            "{msg}"
        );
    }
    let extra = over
        .split_once("\"extra\":")
        .unwrap()
        .1
        .trim_end_matches('}');
    let extra = format!("{extra}}}");
    let out = g.run(
        &[
            "emit",
            "orders",
            "--start",
            "2025-06-01",
            "--end",
            "2025-06-02",
            "--extra",
            &extra,
        ],
        None,
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("64"), "{}", out.stderr);
    assert_eq!(stored(g), 0);

    let server = Server::start(g);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let post = |content_type: &str, body: String| {
        let mut r = agent
            .post(format!("{}/v1/events", server.url))
            .content_type(content_type)
            .send(body.as_bytes())
            .unwrap();
        let status = r.status().as_u16();
        let v: serde_json::Value =
            serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
        (status, v)
    };
    for bad in [&deep, &over] {
        let (status, v) = post("application/json", format!("[{GOOD},{bad}]"));
        assert_eq!(status, 400, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.starts_with("event 2: ") && e.contains("64"), "{e}");
        assert_eq!(v["detail"]["event"], 2, "{v}");
        let (status, v) = post("application/x-ndjson", format!("{GOOD}\n{bad}\n"));
        assert_eq!(status, 400, "{v}");
        assert_eq!(v["detail"]["line"], 2, "{v}");
    }
    let mut remote = Gapless::new();
    remote.url = Some(server.url.clone());
    let out = remote.run(&["ingest", "-"], Some(&format!("{GOOD}\n{over}\n")));
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("line 2"), "{}", out.stderr);
    assert_eq!(stored(g), 0);

    // The bound itself is taken, and comes back byte for byte.
    let (status, v) = post("application/json", nested("deepest", 64));
    assert_eq!(status, 200, "{v}");
    let out = remote.run(&["events", "orders", "--json"], None);
    let v = common::ok(&out);
    let got = &v["events"][0]["extra"];
    let want: serde_json::Value = serde_json::from_str(&{
        let x = nested("deepest", 64);
        let x = x.split_once("\"extra\":").unwrap().1.to_string();
        x[..x.len() - 1].to_string()
    })
    .unwrap();
    assert_eq!(got, &want);
}

#[test]
fn deep_extra_is_refused_on_sqlite() {
    deep_extra_is_refused(&Gapless::new());
}

#[test]
fn deep_extra_is_refused_on_postgres() {
    let schema = PgSchema::new();
    deep_extra_is_refused(&Gapless::postgres(&schema));
}
