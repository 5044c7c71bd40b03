//! The event object of SPEC §2: every form, every optional field, and the
//! conformance file's bad lines.

use gapless_core::{
    parse_time_zone, validate_asset_name, AssetDecl, Duration, EventKind, NewEvent, RawEvent,
};
use jiff::tz::TimeZone;

fn resolve(line: &str) -> NewEvent {
    RawEvent::from_json(line)
        .and_then(|r| r.resolve(None))
        .unwrap_or_else(|e| panic!("{line}: {e}"))
}

fn error(line: &str, decl: Option<&AssetDecl>) -> String {
    match RawEvent::from_json(line).and_then(|r| r.resolve(decl)) {
        Ok(ev) => panic!("{line}: accepted as {ev:?}"),
        Err(e) => e.to_string(),
    }
}

fn span(ev: &NewEvent) -> String {
    format!("{}/{}", ev.interval.start(), ev.interval.end())
}

fn decl(span: &str, zone: &str) -> AssetDecl {
    AssetDecl {
        key_span: Some(Duration::parse(span).unwrap()),
        tz: parse_time_zone(zone).unwrap(),
    }
}

#[test]
fn every_interval_form() {
    // The conformance case "every interval form describes the same kind of interval".
    let cases = [
        (
            r#"{"asset": "forms", "id": "c", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z"}"#,
            "2025-06-01T10:00:00Z/2025-06-01T10:05:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "x", "extra": {"interval_start": "2025-06-01T10:05:00Z", "interval_end": "2025-06-01T10:10:00Z", "rows": 120}}"#,
            "2025-06-01T10:05:00Z/2025-06-01T10:10:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "i1", "partition_key": "2025-06-01T10:10:00Z/2025-06-01T10:15:00Z"}"#,
            "2025-06-01T10:10:00Z/2025-06-01T10:15:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "i2", "partition_key": "2025-06-01T10:15:00Z/PT5M"}"#,
            "2025-06-01T10:15:00Z/2025-06-01T10:20:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "i3", "partition_key": "PT5M/2025-06-01T10:25:00Z"}"#,
            "2025-06-01T10:20:00Z/2025-06-01T10:25:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "i4", "partition_key": "2025-06-01T10:25:00Z--2025-06-01T10:30:00Z"}"#,
            "2025-06-01T10:25:00Z/2025-06-01T10:30:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "i5", "partition_key": "2025-06-01T10:30/10:35"}"#,
            "2025-06-01T10:30:00Z/2025-06-01T10:35:00Z",
        ),
        (
            r#"{"asset": "forms", "id": "n", "start": "2025-06-01T12:35:00+02:00", "end": "2025-06-01T10:40:00"}"#,
            "2025-06-01T10:35:00Z/2025-06-01T10:40:00Z",
        ),
    ];
    for (line, want) in cases {
        let ev = resolve(line);
        assert_eq!(span(&ev), want, "{line}");
        assert_eq!(ev.asset, "forms");
        assert_eq!(ev.kind, EventKind::Landed);
    }
}

#[test]
fn discrete_keys_need_a_declared_span() {
    let line = r#"{"asset": "keys", "partition_key": "2025-06-01T10:05:00"}"#;
    let raw = RawEvent::from_json(line).unwrap();
    assert!(raw.is_discrete_key());
    let ev = raw.resolve(Some(&decl("5m", "UTC"))).unwrap();
    assert_eq!(span(&ev), "2025-06-01T10:05:00Z/2025-06-01T10:10:00Z");

    let want = "field \"partition_key\": \"2025-06-01T10:05:00\" is a single instant, but asset \"keys\" has no declared key span; declare one with `gapless asset set keys --key-span 5m` or give an interval such as \"2025-06-01T10:05:00/PT5M\"";
    assert_eq!(error(line, None), want);
    let no_span = AssetDecl {
        key_span: None,
        tz: TimeZone::UTC,
    };
    assert_eq!(error(line, Some(&no_span)), want);
    // Names that are not one shell word are quoted in the hint.
    let e = error(
        r#"{"asset": "my orders", "partition_key": "2025-06-01"}"#,
        None,
    );
    assert!(
        e.contains("`gapless asset set 'my orders' --key-span 5m`"),
        "{e}"
    );
}

#[test]
fn discrete_keys_follow_the_declared_zone() {
    let berlin = decl("1d", "Europe/Berlin");
    // A daily key on the spring DST day: 23 hours.
    let ev = RawEvent::from_json(r#"{"asset": "d", "partition_key": "2025-03-30"}"#)
        .unwrap()
        .resolve(Some(&berlin))
        .unwrap();
    assert_eq!(span(&ev), "2025-03-29T23:00:00Z/2025-03-30T22:00:00Z");
    // A naive key is local too; an offset wins.
    let hourly = decl("1h", "Europe/Berlin");
    let ev = RawEvent::from_json(r#"{"asset": "h", "partition_key": "2025-06-01T10:00:00"}"#)
        .unwrap()
        .resolve(Some(&hourly))
        .unwrap();
    assert_eq!(span(&ev), "2025-06-01T08:00:00Z/2025-06-01T09:00:00Z");
    let ev = RawEvent::from_json(r#"{"asset": "h", "partition_key": "2025-06-01T10:00:00Z"}"#)
        .unwrap()
        .resolve(Some(&hourly))
        .unwrap();
    assert_eq!(span(&ev), "2025-06-01T10:00:00Z/2025-06-01T11:00:00Z");
    // Monthly keys.
    let monthly = decl("1mo", "UTC");
    let ev = RawEvent::from_json(r#"{"asset": "m", "partition_key": "2025-02-01"}"#)
        .unwrap()
        .resolve(Some(&monthly))
        .unwrap();
    assert_eq!(span(&ev), "2025-02-01T00:00:00Z/2025-03-01T00:00:00Z");
    // Interval keys without an offset are read in the declared zone as well.
    let ev = RawEvent::from_json(r#"{"asset": "m", "partition_key": "2025-06-01/P1M"}"#)
        .unwrap()
        .resolve(Some(&decl("1mo", "Europe/Berlin")))
        .unwrap();
    assert_eq!(span(&ev), "2025-05-31T22:00:00Z/2025-06-30T22:00:00Z");
    // Without a declaration, months have no zone to follow.
    assert_eq!(
        error(r#"{"asset": "m", "partition_key": "2025-06-01/P1M"}"#, None),
        "field \"partition_key\": invalid interval \"2025-06-01/P1M\": duration 1mo has months or years, which need a time zone"
    );
}

#[test]
fn optional_fields() {
    let ev = resolve(
        r#"{"asset": "s3://lake/orders", "id": "batch-7", "kind": "retracted", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "produced_at": "2025-06-01T10:06:00.5+00:00", "extra": {"rows": 120,  "note": "ünïcode \u00e9"}, "unknown": [1, 2]}"#,
    );
    assert_eq!(ev.asset, "s3://lake/orders");
    assert_eq!(ev.id.as_deref(), Some("batch-7"));
    assert_eq!(ev.kind, EventKind::Retracted);
    assert_eq!(
        ev.produced_at.unwrap().to_string(),
        "2025-06-01T10:06:00.5Z"
    );
    // Byte for byte, spacing and escapes included.
    assert_eq!(
        ev.extra.as_deref(),
        Some(r#"{"rows": 120,  "note": "ünïcode \u00e9"}"#)
    );

    // null is the same as leaving the field out.
    let ev = resolve(
        r#"{"asset": "A", "id": null, "kind": null, "extra": null, "produced_at": null, "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z"}"#,
    );
    assert_eq!(
        (ev.id, ev.kind, ev.extra, ev.produced_at),
        (None, EventKind::Landed, None, None)
    );

    // Escaped names are decoded.
    let ev = resolve(
        r#"{"asset": "a\/b \u00e9", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z"}"#,
    );
    assert_eq!(ev.asset, "a/b é");
}

#[test]
fn columns_win_over_extra_and_key() {
    let ev = resolve(
        r#"{"asset": "A", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "partition_key": "2025-06-01T11:00Z/PT1H", "extra": {"interval_start": "2025-06-01T12:00Z", "interval_end": "2025-06-01T13:00Z"}}"#,
    );
    assert_eq!(span(&ev), "2025-06-01T10:00:00Z/2025-06-01T10:05:00Z");
    let ev = resolve(
        r#"{"asset": "A", "partition_key": "2025-06-01T11:00Z/PT1H", "extra": {"interval_start": "2025-06-01T12:00Z", "interval_end": "2025-06-01T13:00Z"}}"#,
    );
    assert_eq!(span(&ev), "2025-06-01T12:00:00Z/2025-06-01T13:00:00Z");
}

#[test]
fn bare_dates_in_columns_follow_the_declared_zone() {
    let line = r#"{"asset": "A", "start": "2025-06-01", "end": "2025-06-02"}"#;
    let raw = RawEvent::from_json(line).unwrap();
    assert_eq!(
        span(&raw.resolve(None).unwrap()),
        "2025-06-01T00:00:00Z/2025-06-02T00:00:00Z"
    );
    let ev = raw.resolve(Some(&decl("1d", "America/New_York"))).unwrap();
    assert_eq!(span(&ev), "2025-06-01T04:00:00Z/2025-06-02T04:00:00Z");
}

#[test]
fn conformance_bad_lines() {
    let bad = [
        (r#"{"asset": "orders", "start": "2025-06-01T10:10:00Z", "end": "2025-06-01T10:05:00Z"}"#,
         "fields \"start\" and \"end\": reversed interval: end 2025-06-01T10:05:00Z is before start 2025-06-01T10:10:00Z"),
        (r#"{"asset": "orders", "start": "2025-06-01T10:10:00Z", "end": "2025-06-01T10:10:00Z"}"#,
         "fields \"start\" and \"end\": empty interval: start 2025-06-01T10:10:00Z equals end 2025-06-01T10:10:00Z"),
        (r#"{"asset": "orders", "start": "2025-02-30T00:00:00Z", "end": "2025-03-01T00:00:00Z"}"#,
         "field \"start\": invalid instant \"2025-02-30T00:00:00Z\": day 30 is out of range for February 2025"),
        (r#"{"asset": "orders", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z", "kind": "maybe"}"#,
         "field \"kind\": invalid kind \"maybe\": expected \"landed\" or \"retracted\""),
        (r#"{"asset": "orders", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z", "extra": [1]}"#,
         "field \"extra\": expected a JSON object, found an array"),
        (r#"{"asset": "", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z"}"#,
         "field \"asset\": invalid asset name \"\": empty; an asset name is 1 to 512 bytes of UTF-8"),
        (r#"{"asset": "orders", "partition_key": "2025-06-01T10:05:00"}"#,
         "field \"partition_key\": \"2025-06-01T10:05:00\" is a single instant, but asset \"orders\" has no declared key span; declare one with `gapless asset set orders --key-span 5m` or give an interval such as \"2025-06-01T10:05:00/PT5M\""),
        (r#"{"asset": "orders", "partition_key": "2025-06-01T10:05:00Z/"}"#,
         "field \"partition_key\": invalid interval \"2025-06-01T10:05:00Z/\": the end is missing after \"/\""),
        (r#"{"asset": "orders"}"#,
         "missing interval: give \"start\" and \"end\", \"extra.interval_start\"/\"interval_end\", or \"partition_key\""),
    ];
    for (line, want) in bad {
        assert_eq!(error(line, None), want, "{line}");
    }
    // The lines of the conformance file itself.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/conformance/cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut n = 0;
    for case in cases["cases"].as_array().unwrap() {
        for line in case["error_lines"].as_array().into_iter().flatten() {
            error(&line.to_string(), None);
            n += 1;
        }
        for ev in case["events"].as_array().into_iter().flatten() {
            let raw = RawEvent::from_json(&ev.to_string()).unwrap();
            let d = (raw.asset() == "keys").then(|| decl("5m", "UTC"));
            raw.resolve(d.as_ref()).unwrap();
        }
    }
    assert_eq!(n, 9);
}

#[test]
fn field_errors() {
    let ok_iv = r#""start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z""#;
    let cases: Vec<(String, &str)> = vec![
        ("".into(), "invalid event \"\": not valid JSON: EOF while parsing a value at line 1 column 0"),
        ("hello".into(), "invalid event \"hello\": not valid JSON: expected value at line 1 column 1"),
        ("[1, 2]".into(), "invalid event \"[1, 2]\": expected a JSON object such as {\"asset\": ...}, found an array"),
        ("\"text\"".into(), "invalid event \"\\\"text\\\"\": expected a JSON object such as {\"asset\": ...}, found a string"),
        ("{\"asset\": \"A\",".into(), "invalid event \"{\\\"asset\\\": \\\"A\\\",\": not valid JSON: EOF while parsing a value at line 1 column 14"),
        (format!("{{{ok_iv}}}"), "missing field \"asset\": name the data set the event is about"),
        (format!("{{\"asset\": 5, {ok_iv}}}"), "field \"asset\": expected a string, found a number"),
        (format!("{{\"asset\": \"a\\u0001b\", {ok_iv}}}"), "field \"asset\": invalid asset name \"a\\u{1}b\": control character '\\u{1}' is not allowed"),
        (format!("{{\"asset\": \"A\", \"id\": \"\", {ok_iv}}}"), "field \"id\": empty; an id is a non-empty string"),
        (format!("{{\"asset\": \"A\", \"id\": 7, {ok_iv}}}"), "field \"id\": expected a string, found a number"),
        // Ids follow the rule of asset names on every backend: no NUL (which
        // PostgreSQL text cannot hold) and no other control character.
        (format!("{{\"asset\": \"A\", \"id\": \"a\\u0000b\", {ok_iv}}}"), "field \"id\": invalid id \"a\\0b\": control character '\\0' is not allowed"),
        (format!("{{\"asset\": \"A\", \"id\": \"batch\\n7\", {ok_iv}}}"), "field \"id\": invalid id \"batch\\n7\": control character '\\n' is not allowed"),
        (format!("{{\"asset\": \"A\", \"id\": \"x\\u009f\", {ok_iv}}}"), "field \"id\": invalid id \"x\\u{9f}\": control character '\\u{9f}' is not allowed"),
        (format!("{{\"asset\": \"A\", \"kind\": \"Landed\", {ok_iv}}}"), "field \"kind\": invalid kind \"Landed\": expected \"landed\" or \"retracted\""),
        (format!("{{\"asset\": \"A\", \"kind\": true, {ok_iv}}}"), "field \"kind\": expected a string, found a boolean"),
        (format!("{{\"asset\": \"A\", \"extra\": \"x\", {ok_iv}}}"), "field \"extra\": expected a JSON object, found a string"),
        (format!("{{\"asset\": \"A\", \"produced_at\": \"yesterday\", {ok_iv}}}"), "field \"produced_at\": invalid instant \"yesterday\": expected a date such as 2025-06-01 at the start, found \"yesterday\""),
        (r#"{"asset": "A", "start": "2025-06-01T10:00Z"}"#.into(), "missing field \"end\": \"start\" is given, an interval needs both"),
        (r#"{"asset": "A", "end": "2025-06-01T10:00Z"}"#.into(), "missing field \"start\": \"end\" is given, an interval needs both"),
        (r#"{"asset": "A", "start": "2025-06-01T10:00Z", "end": "x"}"#.into(), "field \"end\": invalid instant \"x\": expected a date such as 2025-06-01 at the start, found \"x\""),
        (r#"{"asset": "A", "start": 1748772000, "end": "x"}"#.into(), "field \"start\": expected a string, found a number"),
        (r#"{"asset": "A", "extra": {"interval_start": "2025-06-01T10:00Z"}}"#.into(), "missing field \"extra.interval_end\": \"extra.interval_start\" is given, an interval needs both"),
        (r#"{"asset": "A", "extra": {"interval_start": "2025-06-01T10:00Z", "interval_end": 5}}"#.into(), "field \"extra.interval_end\": expected a string, found a number"),
        (r#"{"asset": "A", "extra": {"interval_start": "2025-06-01T10:10Z", "interval_end": "2025-06-01T10:00Z"}}"#.into(), "fields \"extra.interval_start\" and \"extra.interval_end\": reversed interval: end 2025-06-01T10:00:00Z is before start 2025-06-01T10:10:00Z"),
        (r#"{"asset": "A", "partition_key": 5}"#.into(), "field \"partition_key\": expected a string, found a number"),
        (r#"{"asset": "A", "partition_key": "2025-06-31"}"#.into(), "field \"partition_key\": invalid instant \"2025-06-31\": day 31 is out of range for June 2025"),
        (r#"{"asset": "A", "partition_key": "2025-06-01T10:00Z/PT0S"}"#.into(), "field \"partition_key\": invalid interval \"2025-06-01T10:00Z/PT0S\": end \"PT0S\": a duration must be longer than zero"),
        (r#"{"asset": "A", "asset": "B", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z"}"#.into(), "invalid event \"{\\\"asset\\\": \\\"A\\\", \\\"asset\\\": \\\"B\\\", \\\"start\\\": \\\"2025-06-01T10:00Z\\\", \\\"end\\\"…\": duplicate field `asset` at line 1 column 22"),
    ];
    for (line, want) in cases {
        assert_eq!(error(&line, None), want, "{line}");
    }
}

#[test]
fn limits() {
    let iv = r#""start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z""#;
    // Asset names: 512 bytes yes, 513 no.
    let name = "é".repeat(256);
    assert!(RawEvent::from_json(&format!("{{\"asset\": \"{name}\", {iv}}}")).is_ok());
    let long = format!("{name}x");
    let e = error(&format!("{{\"asset\": \"{long}\", {iv}}}"), None);
    assert!(
        e.ends_with(": 513 bytes is longer than the 512 allowed"),
        "{e}"
    );
    assert!(!e.contains(&long), "the name is cut in the message");
    // extra: 64 KiB yes, one byte more no.
    let pad = |n: usize| format!("{{\"p\":\"{}\"}}", "x".repeat(n - 8));
    assert_eq!(pad(65_536).len(), 65_536);
    let ev = resolve(&format!(
        "{{\"asset\": \"A\", \"extra\": {}, {iv}}}",
        pad(65_536)
    ));
    assert_eq!(ev.extra.unwrap().len(), 65_536);
    assert_eq!(
        error(
            &format!("{{\"asset\": \"A\", \"extra\": {}, {iv}}}", pad(65_537)),
            None
        ),
        "field \"extra\": 65537 bytes is more than the 64 KiB allowed"
    );
    // extra: 64 levels of objects and arrays yes, 65 no; brackets in
    // strings are text.
    let deep = |n: usize| {
        format!(
            "{{\"s\": \"[[{{\\\"\", \"d\": {}{}}}",
            "[".repeat(n - 1),
            "]".repeat(n - 1)
        )
    };
    let ev = resolve(&format!(
        "{{\"asset\": \"A\", \"extra\": {}, {iv}}}",
        deep(64)
    ));
    assert_eq!(ev.extra.unwrap(), deep(64));
    assert_eq!(
        error(
            &format!("{{\"asset\": \"A\", \"extra\": {}, {iv}}}", deep(65)),
            None
        ),
        "field \"extra\": objects and arrays nested 65 levels deep, more than the 64 allowed"
    );
    // Ids: 512 bytes.
    assert!(RawEvent::from_json(&format!(
        "{{\"asset\": \"A\", \"id\": \"{}\", {iv}}}",
        "i".repeat(512)
    ))
    .is_ok());
    let e = error(
        &format!(
            "{{\"asset\": \"A\", \"id\": \"{}\", {iv}}}",
            "i".repeat(513)
        ),
        None,
    );
    assert!(
        e.starts_with("field \"id\": invalid id \"iii")
            && e.ends_with("513 bytes is longer than the 512 allowed"),
        "{e}"
    );
}

#[test]
fn asset_names() {
    for ok in [
        "A",
        "s3://lake/orders",
        "dagster://asset/key[0]",
        "名前",
        "with space",
        &"x".repeat(512),
    ] {
        assert!(validate_asset_name(ok).is_ok(), "{ok}");
    }
    let cases = [
        (
            "",
            "invalid asset name \"\": empty; an asset name is 1 to 512 bytes of UTF-8",
        ),
        (
            "a\tb",
            "invalid asset name \"a\\tb\": control character '\\t' is not allowed",
        ),
        (
            "a\u{7f}",
            "invalid asset name \"a\\u{7f}\": control character '\\u{7f}' is not allowed",
        ),
        (
            "a\u{85}",
            "invalid asset name \"a\\u{85}\": control character '\\u{85}' is not allowed",
        ),
    ];
    for (name, want) in cases {
        assert_eq!(validate_asset_name(name).unwrap_err().to_string(), want);
    }
}

#[test]
fn kinds() {
    assert_eq!(EventKind::parse("landed").unwrap(), EventKind::Landed);
    assert_eq!(
        "retracted".parse::<EventKind>().unwrap(),
        EventKind::Retracted
    );
    assert_eq!(EventKind::Retracted.to_string(), "retracted");
    assert_eq!(
        EventKind::parse("").unwrap_err().to_string(),
        "invalid kind \"\": expected \"landed\" or \"retracted\""
    );
}

#[test]
fn same_content() {
    let a = resolve(
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
    );
    let same = [
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
        r#"{"asset": "A", "id": "1", "partition_key": "2025-06-01T10:00Z/PT5M", "extra": {"b":{"c":null},"a":[1,2]}}"#,
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T12:00+02:00", "end": "2025-06-01T10:05", "kind": "landed", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
    ];
    for line in same {
        assert!(a.same_content(&resolve(line)), "{line}");
    }
    let different = [
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:06Z", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "kind": "retracted", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "extra": {"a": [2, 1], "b": {"c": null}}}"#,
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z"}"#,
        r#"{"asset": "A", "id": "1", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "produced_at": "2025-06-01T10:05Z", "extra": {"a": [1, 2], "b": {"c": null}}}"#,
    ];
    for line in different {
        assert!(!a.same_content(&resolve(line)), "{line}");
    }
}

#[test]
fn a_nul_escape_in_extra_is_kept_as_written() {
    // `extra` is stored as its JSON text (text, not jsonb, in PostgreSQL), so
    // the six characters `\u0000` inside a string are no NUL character and
    // are kept byte for byte like any other escape.
    let ev = resolve(
        r#"{"asset": "A", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "extra": {"note": "a\u0000b"}}"#,
    );
    let extra = ev.extra.unwrap();
    assert_eq!(extra, r#"{"note": "a\u0000b"}"#);
    assert!(!extra.contains('\0'));
}
