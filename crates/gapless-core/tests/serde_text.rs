//! The types with a canonical text go through serde as that text: they
//! serialize to what `Display` prints, deserialize with their `parse`, and a
//! bad value fails with the parser's one-line message.

use std::fmt::Debug;

use gapless_core::{Duration, EventKind, Grid, Policy, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::json;

/// `value` serializes to `text`, and `text` (and `alias`, another form the
/// parser accepts) deserializes back to `value`, from a value and from JSON
/// text alike.
fn round_trip<T>(value: T, text: &str, alias: &str)
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    assert_eq!(serde_json::to_value(&value).unwrap(), json!(text));
    for form in [text, alias] {
        assert_eq!(
            serde_json::from_value::<T>(json!(form)).unwrap(),
            value,
            "{form}"
        );
        let line = serde_json::to_string(form).unwrap();
        assert_eq!(serde_json::from_str::<T>(&line).unwrap(), value, "{line}");
    }
}

/// Deserializing `text` fails with exactly the message of `parse(text)`
/// (plus the position, when read from JSON text), which is `want`.
fn bad<T>(text: &str, parse: impl Fn(&str) -> Result<T>, want: &str)
where
    T: DeserializeOwned + Debug,
{
    assert_eq!(parse(text).unwrap_err().to_string(), want);
    let err = serde_json::from_value::<T>(json!(text)).unwrap_err();
    assert_eq!(err.to_string(), want);
    let line = serde_json::to_string(text).unwrap();
    let err = serde_json::from_str::<T>(&line).unwrap_err();
    assert!(err.to_string().starts_with(want), "{err}");
    // Not a string at all: serde's own message.
    assert!(serde_json::from_value::<T>(json!(5)).is_err());
}

#[test]
fn event_kind() {
    round_trip(EventKind::Landed, "landed", "landed");
    round_trip(EventKind::Retracted, "retracted", "retracted");
    bad(
        "Landed",
        EventKind::parse,
        r#"invalid kind "Landed": expected "landed" or "retracted""#,
    );
}

#[test]
fn policy() {
    round_trip(Policy::Full, "full", " full ");
    round_trip(Policy::RatioAtLeast(0.9), "ratio>=0.9", "ratio >= 0.9");
    round_trip(Policy::parse("gap<10m").unwrap(), "gap<10m", "gap<PT10M");
    bad(
        "ratio>=1.5",
        Policy::parse,
        r#"invalid policy "ratio>=1.5": the ratio 1.5 must be from 0 to 1"#,
    );
}

#[test]
fn grid() {
    round_trip(Grid::parse("1h").unwrap(), "1h", " 1h");
    round_trip(Grid::parse("3mo").unwrap(), "3mo", "03mo");
    bad(
        "60m",
        Grid::parse,
        r#"invalid grid "60m": minutes must be 1 to 59 (60m is 1h)"#,
    );
}

#[test]
fn duration() {
    round_trip(Duration::parse("90m").unwrap(), "1h30m", "PT1H30M");
    round_trip(Duration::parse("P1M").unwrap(), "1mo", "P1M");
    round_trip(Duration::parse("PT0.5S").unwrap(), "0.5s", "500ms");
    bad(
        "5x",
        Duration::parse,
        r#"invalid duration "5x": unknown unit "x"; use s, m, h, d, w, mo or y (e.g. 5m) or ISO 8601 (PT5M)"#,
    );
}

/// The use they are for: typed fields of an answer.
#[test]
fn as_fields_of_a_struct() {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Answer {
        kind: EventKind,
        policy: Policy,
        grid: Grid,
        key_span: Option<Duration>,
    }
    let answer = Answer {
        kind: EventKind::Retracted,
        policy: Policy::parse("gap<PT10M").unwrap(),
        grid: Grid::parse("1d").unwrap(),
        key_span: Some(Duration::parse("5m").unwrap()),
    };
    let text = serde_json::to_string(&answer).unwrap();
    assert_eq!(
        text,
        r#"{"kind":"retracted","policy":"gap<10m","grid":"1d","key_span":"5m"}"#
    );
    assert_eq!(serde_json::from_str::<Answer>(&text).unwrap(), answer);
    let err = serde_json::from_str::<Answer>(
        r#"{"kind":"landed","policy":"gap<1mo","grid":"1d","key_span":null}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with(r#"invalid policy "gap<1mo": duration 1mo has months or years"#),
        "{err}"
    );
}
