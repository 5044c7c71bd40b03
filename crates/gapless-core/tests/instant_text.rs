//! An instant's own text against jiff's, the reference model: `Display`
//! and `Serialize` write exactly what jiff's `Timestamp` prints, and
//! deserializing any text gives exactly what jiff's parser and
//! `Instant::from_timestamp` give, the same instant or the same error.

use gapless_core::Instant;
use proptest::prelude::*;
use serde_json::json;

/// What jiff prints for `t`.
fn jiff_text(t: Instant) -> String {
    t.to_timestamp().to_string()
}

/// What reading `text` gave through jiff alone: the instant, or the error
/// message deserializing must give.
fn jiff_read(text: &str) -> Result<Instant, String> {
    let ts: jiff::Timestamp = text
        .parse()
        .map_err(|e| format!("invalid instant {text:?}: {e}"))?;
    Instant::from_timestamp(ts).map_err(|e| e.to_string())
}

/// Deserializing `text`, from a JSON value and from JSON text: the same
/// outcome as `jiff_read`.
fn check_read(text: &str) {
    let want = jiff_read(text);
    let got = serde_json::from_value::<Instant>(json!(text)).map_err(|e| e.to_string());
    assert_eq!(got, want, "{text:?}");
    let line = serde_json::to_string(text).unwrap();
    let got = serde_json::from_str::<Instant>(&line).map_err(|e| e.to_string());
    match &want {
        Ok(t) => assert_eq!(got.as_ref(), Ok(t), "{line}"),
        // serde_json adds where in the text the value was.
        Err(message) => assert!(
            got.as_ref().is_err_and(|e| e.starts_with(message.as_str())),
            "{line}: {got:?}, want {message}"
        ),
    }
}

/// Instants over the whole range, with a bias to whole seconds and short
/// fractions (most instants written), to day edges and to the ends.
fn instant() -> impl Strategy<Value = Instant> {
    let min = Instant::MIN.as_micros();
    let max = Instant::MAX.as_micros();
    prop_oneof![
        min..=max,
        (min / 1_000_000..=max / 1_000_000).prop_map(|s| s * 1_000_000),
        (min / 1_000..=max / 1_000).prop_map(|ms| ms * 1_000),
        (min / 86_400_000_000..=max / 86_400_000_000, -2_i64..=2)
            .prop_map(|(d, us)| d * 86_400_000_000 + us),
        (0_i64..=1_000).prop_map(move |us| min + us),
        (0_i64..=1_000).prop_map(move |us| max - us),
    ]
    .prop_filter_map("in range", |us| Instant::from_micros(us).ok())
}

/// Texts near the canonical form: a canonical text with one byte changed,
/// removed or added, or its fields replaced by any two or four digits.
fn near_text() -> impl Strategy<Value = String> {
    let alphabet = prop::sample::select(b"0123456789-:.TtZz+ ,".to_vec());
    prop_oneof![
        (instant(), any::<prop::sample::Index>(), alphabet.clone()).prop_map(|(t, i, c)| {
            let mut b = jiff_text(t).into_bytes();
            let i = i.index(b.len());
            b[i] = c;
            String::from_utf8(b).unwrap()
        }),
        (instant(), any::<prop::sample::Index>()).prop_map(|(t, i)| {
            let mut s = jiff_text(t);
            s.remove(i.index(s.len()));
            s
        }),
        (instant(), any::<prop::sample::Index>(), alphabet).prop_map(|(t, i, c)| {
            let mut b = jiff_text(t).into_bytes();
            b.insert(i.index(b.len() + 1), c);
            String::from_utf8(b).unwrap()
        }),
        (
            0_u32..=9999,
            0_u32..=99,
            0_u32..=99,
            0_u32..=99,
            0_u32..=99,
            0_u32..=99,
            "(\\.[0-9]{1,10})?"
        )
            .prop_map(|(y, mo, d, h, mi, s, f)| format!(
                "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{f}Z"
            )),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn written_as_jiff_prints(t in instant()) {
        let text = jiff_text(t);
        prop_assert_eq!(t.to_string(), text.clone());
        prop_assert_eq!(serde_json::to_value(t).unwrap(), json!(text));
        prop_assert_eq!(format!("{t:?}"), text);
    }

    #[test]
    fn read_back_as_jiff_reads(t in instant()) {
        check_read(&jiff_text(t));
    }

    #[test]
    fn any_text_read_as_jiff_reads(text in near_text()) {
        check_read(&text);
    }
}

#[test]
fn edges_read_and_written_as_jiff() {
    for text in [
        "0001-01-01T00:00:00Z",
        "9999-12-30T22:00:00Z",
        "9999-12-30T22:00:00.000001Z",
        "9999-12-31T00:00:00Z",
        "0000-12-31T23:59:59.999999Z",
        "1969-12-31T23:59:59.999999Z",
        "1970-01-01T00:00:00Z",
        "1970-01-01T00:00:00.0Z",
        "1970-01-01T00:00:00.000000Z",
        "1970-01-01T00:00:00.0000001Z",
        "1970-01-01T00:00:00.000001000Z",
        "2000-02-29T12:00:00Z",
        "1900-02-29T12:00:00Z",
        "2024-02-30T00:00:00Z",
        "2025-06-01T10:00:00.5Z",
        "2025-06-01T10:00:60Z",
        "2025-06-01T24:00:00Z",
        "2025-06-01T10:00:00z",
        "2025-06-01t10:00:00Z",
        "2025-06-01 10:00:00Z",
        "2025-06-01T10:00:00+02:00",
        "2025-06-01T10:00:00,5Z",
        "2025-06-01T10:00:00.Z",
        "2025-06-01T10:00Z",
        "+2025-06-01T10:00:00Z",
        "2025-06-01",
        "",
    ] {
        check_read(text);
    }
    for us in [
        Instant::MIN.as_micros(),
        Instant::MAX.as_micros(),
        0,
        -1,
        1,
        -86_400_000_000,
    ] {
        let t = Instant::from_micros(us).unwrap();
        assert_eq!(t.to_string(), jiff_text(t));
    }
    // A precision still asks jiff for fixed digits.
    let t = Instant::from_micros(1_748_772_000_500_000).unwrap();
    assert_eq!(format!("{t:.3}"), "2025-06-01T10:00:00.500Z");
}
