//! The wire forms of an event: the JSON object of SPEC §2 in all its forms
//! ([`RawEvent::from_json`]) and its resolution against the asset's
//! declaration into a [`NewEvent`] ([`RawEvent::resolve`]).

use serde::Deserialize;
use serde_json::value::RawValue;

use super::names::validate_event_id;
use super::{validate_asset_name, AssetDecl, EventKind, NewEvent};
use crate::parse::{invalid, lex_instant, shown, IsoInterval, Lexed};
use crate::{parse_instant, Error, Instant, Interval, Result};

/// The most bytes an `extra` object may have (64 KiB).
pub const MAX_EXTRA_BYTES: usize = 64 * 1024;

/// The deepest an `extra` object may nest objects and arrays, the object
/// itself being level 1. `extra` is returned as given, so every reader of
/// an event must be able to parse it: readers that recurse per level stop
/// long before 64 KiB of brackets (Python's `json` at the interpreter's
/// recursion limit of about a thousand, serde_json at 128), and no
/// producer's metadata needs more than a few levels.
pub const MAX_EXTRA_DEPTH: usize = 64;

/// Where the interval of a raw event comes from.
#[derive(Debug, Clone)]
enum When {
    /// Two instants from `start`/`end` or `extra.interval_start`/`_end`.
    Bounds {
        start: Lexed,
        end: Lexed,
        start_text: String,
        end_text: String,
        names: (&'static str, &'static str),
    },
    /// An ISO 8601 interval in `partition_key`.
    Key { iv: IsoInterval, text: String },
    /// A single instant in `partition_key`: needs a declared key span.
    Discrete { key: Lexed, text: String },
}

/// An event object as parsed from JSON, before the asset's declaration is
/// known (a discrete key needs it).
///
/// Everything that can be checked without the declaration is checked by
/// [`RawEvent::from_json`]: the asset name, the id, the kind, `extra`,
/// `produced_at`, and every instant and duration of the interval (and the
/// interval itself when it does not depend on a time zone).
#[derive(Debug, Clone)]
pub struct RawEvent {
    asset: String,
    id: Option<String>,
    kind: EventKind,
    extra: Option<String>,
    produced_at: Option<Instant>,
    when: When,
    /// The interval when it does not depend on the declaration.
    interval: Option<Interval>,
}

/// The fields of an event object, each kept raw to report errors by field.
/// Unknown fields are ignored; `null` is the same as an absent field.
#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow)]
    asset: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    start: Option<&'a RawValue>,
    #[serde(borrow)]
    end: Option<&'a RawValue>,
    #[serde(borrow)]
    partition_key: Option<&'a RawValue>,
    #[serde(borrow)]
    extra: Option<&'a RawValue>,
    #[serde(borrow)]
    produced_at: Option<&'a RawValue>,
}

/// The interval fields of `extra`.
#[derive(Deserialize)]
struct ExtraWire<'a> {
    #[serde(borrow)]
    interval_start: Option<&'a RawValue>,
    #[serde(borrow)]
    interval_end: Option<&'a RawValue>,
}

/// The JSON type of a raw value, for "expected X, found Y".
fn json_type(raw: &RawValue) -> &'static str {
    match raw.get().trim_start().as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// The string value of a field.
fn string_field(raw: &RawValue, field: &str) -> Result<String> {
    if json_type(raw) != "a string" {
        return Err(Error::new(format!(
            "field {field:?}: expected a string, found {}",
            json_type(raw)
        )));
    }
    serde_json::from_str::<String>(raw.get())
        .map_err(|e| Error::new(format!("field {field:?}: {e}")))
}

/// Lex an instant field, keeping its text for later messages.
fn instant_field(raw: &RawValue, field: &str) -> Result<(Lexed, String)> {
    let text = string_field(raw, field)?;
    let lexed = lex_instant(&text)
        .map_err(|r| invalid("instant", &text, r).context(format_args!("field {field:?}")))?;
    Ok((lexed, text))
}

const MISSING_INTERVAL: &str = "missing interval: give \"start\" and \"end\", \
     \"extra.interval_start\"/\"interval_end\", or \"partition_key\"";

impl RawEvent {
    /// Parse one JSON object (one NDJSON line) in any form of SPEC §2.
    ///
    /// The interval comes from the first of these that is present:
    /// `start` and `end`; `extra.interval_start` and `extra.interval_end`;
    /// `partition_key`, either an ISO 8601 interval (see
    /// [`crate::parse_interval`]) or a single instant (a discrete key, whose
    /// span the asset must declare). Optional: `id` (a non-empty string of
    /// at most 512 bytes without control characters, as an asset name), `kind` (`landed`, the default, or `retracted`),
    /// `extra` (a JSON object of at most 64 KiB and [`MAX_EXTRA_DEPTH`]
    /// levels, kept byte for byte),
    /// `produced_at` (an instant). Unknown fields are ignored, and `null` is
    /// the same as leaving a field out.
    ///
    /// Instants in `start`/`end` and `extra` follow [`crate::parse_instant`]
    /// (naive means UTC; a bare date is midnight in the asset's time zone).
    ///
    /// # Errors
    ///
    /// When the line is not a JSON object or a field is invalid; the message
    /// names the field, e.g. `field "end": invalid instant "x": ...`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{EventKind, RawEvent};
    ///
    /// let raw = RawEvent::from_json(
    ///     r#"{"asset": "A", "partition_key": "2025-06-01T10:05Z/PT5M", "kind": "retracted"}"#,
    /// )?;
    /// let ev = raw.resolve(None)?;
    /// assert_eq!(ev.interval.to_string(), "[2025-06-01T10:05:00Z, 2025-06-01T10:10:00Z)");
    /// assert_eq!(ev.kind, EventKind::Retracted);
    ///
    /// let err = RawEvent::from_json(r#"{"asset": "A", "start": "2025-06-01", "end": "x"}"#)
    ///     .unwrap_err();
    /// assert!(err.to_string().starts_with(r#"field "end": invalid instant "x": "#));
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn from_json(text: &str) -> Result<RawEvent> {
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            let reason = match serde_json::from_str::<&RawValue>(text) {
                Ok(v) => format!(
                    "expected a JSON object such as {{\"asset\": ...}}, found {}",
                    json_type(v)
                ),
                Err(e) => format!("not valid JSON: {e}"),
            };
            return Err(invalid("event", text, reason));
        }
        let wire: Wire<'_> = serde_json::from_str(text).map_err(|e| {
            let reason = if e.is_data() {
                e.to_string()
            } else {
                format!("not valid JSON: {e}")
            };
            invalid("event", text, reason)
        })?;

        let asset = match wire.asset {
            None => {
                return Err(Error::new(
                    "missing field \"asset\": name the data set the event is about",
                ))
            }
            Some(raw) => string_field(raw, "asset")?,
        };
        validate_asset_name(&asset).map_err(|e| e.context("field \"asset\""))?;

        let id = match wire.id {
            None => None,
            Some(raw) => {
                let id = string_field(raw, "id")?;
                validate_event_id(&id).map_err(|e| e.context("field \"id\""))?;
                Some(id)
            }
        };

        let kind = match wire.kind {
            None => EventKind::Landed,
            Some(raw) => EventKind::parse(&string_field(raw, "kind")?)
                .map_err(|e| e.context("field \"kind\""))?,
        };

        let mut extra_wire = None;
        let extra = match wire.extra {
            None => None,
            Some(raw) => {
                if json_type(raw) != "an object" {
                    return Err(Error::new(format!(
                        "field \"extra\": expected a JSON object, found {}",
                        json_type(raw)
                    )));
                }
                let bytes = raw.get();
                if bytes.len() > MAX_EXTRA_BYTES {
                    return Err(Error::new(format!(
                        "field \"extra\": {} bytes is more than the {} KiB allowed",
                        bytes.len(),
                        MAX_EXTRA_BYTES / 1024
                    )));
                }
                if let Some(depth) = depth_over(bytes, MAX_EXTRA_DEPTH) {
                    return Err(Error::new(format!(
                        "field \"extra\": objects and arrays nested {depth} levels deep, more \
                         than the {MAX_EXTRA_DEPTH} allowed"
                    )));
                }
                extra_wire = Some(
                    serde_json::from_str::<ExtraWire<'_>>(bytes)
                        .map_err(|e| Error::new(format!("field \"extra\": {e}")))?,
                );
                Some(bytes.to_string())
            }
        };

        let produced_at = match wire.produced_at {
            None => None,
            Some(raw) => {
                let t = string_field(raw, "produced_at")?;
                Some(parse_instant(&t, None).map_err(|e| e.context("field \"produced_at\""))?)
            }
        };

        let (x_start, x_end) = extra_wire
            .map(|x| (x.interval_start, x.interval_end))
            .unwrap_or((None, None));
        let when = if wire.start.is_some() || wire.end.is_some() {
            bounds(wire.start, wire.end, ("start", "end"))?
        } else if x_start.is_some() || x_end.is_some() {
            bounds(
                x_start,
                x_end,
                ("extra.interval_start", "extra.interval_end"),
            )?
        } else if let Some(raw) = wire.partition_key {
            let text = string_field(raw, "partition_key")?;
            if IsoInterval::looks_like_interval(&text) {
                let iv = IsoInterval::lex(&text).map_err(|r| {
                    invalid("interval", &text, r).context("field \"partition_key\"")
                })?;
                When::Key { iv, text }
            } else {
                let key = lex_instant(&text)
                    .map_err(|r| invalid("instant", &text, r).context("field \"partition_key\""))?;
                When::Discrete { key, text }
            }
        } else {
            return Err(Error::new(MISSING_INTERVAL));
        };

        let mut ev = RawEvent {
            asset,
            id,
            kind,
            extra,
            produced_at,
            when,
            interval: None,
        };
        let exact = match &ev.when {
            When::Bounds { start, end, .. } => start.is_exact() && end.is_exact(),
            When::Key { iv, .. } => iv.is_exact(),
            When::Discrete { .. } => false,
        };
        if exact {
            ev.interval = Some(ev.interval_in(None)?);
        }
        Ok(ev)
    }

    /// The asset named by the event.
    pub fn asset(&self) -> &str {
        &self.asset
    }

    /// Whether [`RawEvent::resolve`] reads the asset's declaration: only an
    /// interval that depends on a time zone or a key span does.
    pub fn needs_decl(&self) -> bool {
        self.interval.is_none()
    }

    /// Whether the interval is a discrete `partition_key`, which only the
    /// asset's declared key span can resolve.
    pub fn is_discrete_key(&self) -> bool {
        matches!(self.when, When::Discrete { .. })
    }

    /// The event with its interval resolved.
    ///
    /// With a declaration, a `partition_key` without an offset is read in
    /// the declaration's time zone (naive date-times and bare dates alike),
    /// bare dates in `start`/`end` are midnight there, and calendar units
    /// (`P1D`, `1mo`) follow its local calendar. A discrete key becomes
    /// `[key, key + key_span)`.
    ///
    /// # Errors
    ///
    /// When the interval is empty or reversed, a duration has months but no
    /// time zone is declared, or a discrete key meets an asset without a
    /// declared key span.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::{AssetDecl, Duration, RawEvent};
    ///
    /// let raw = RawEvent::from_json(r#"{"asset": "keys", "partition_key": "2025-06-01T10:05:00"}"#)?;
    /// assert!(raw.resolve(None).is_err());
    /// let decl = AssetDecl { key_span: Some(Duration::parse("5m")?), tz: jiff::tz::TimeZone::UTC };
    /// let ev = raw.resolve(Some(&decl))?;
    /// assert_eq!(ev.interval.to_string(), "[2025-06-01T10:05:00Z, 2025-06-01T10:10:00Z)");
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn resolve(&self, decl: Option<&AssetDecl>) -> Result<NewEvent> {
        let interval = match self.interval {
            Some(iv) => iv,
            None => self.interval_in(decl)?,
        };
        Ok(NewEvent {
            asset: self.asset.clone(),
            id: self.id.clone(),
            interval,
            kind: self.kind,
            extra: self.extra.clone(),
            produced_at: self.produced_at,
        })
    }

    fn interval_in(&self, decl: Option<&AssetDecl>) -> Result<Interval> {
        let tz = decl.map(|d| &d.tz);
        match &self.when {
            When::Bounds {
                start,
                end,
                start_text,
                end_text,
                names,
            } => {
                let s = start.resolve(None, tz).map_err(|r| {
                    invalid("instant", start_text, r).context(format_args!("field {:?}", names.0))
                })?;
                let e = end.resolve(None, tz).map_err(|r| {
                    invalid("instant", end_text, r).context(format_args!("field {:?}", names.1))
                })?;
                Interval::new(s, e).map_err(|err| {
                    err.context(format_args!("fields {:?} and {:?}", names.0, names.1))
                })
            }
            When::Key { iv, text } => iv
                .resolve(tz, tz)
                .map_err(|r| invalid("interval", text, r).context("field \"partition_key\"")),
            When::Discrete { key, text } => {
                let Some((span, decl)) = decl.and_then(|d| d.key_span.map(|s| (s, d))) else {
                    return Err(Error::new(format!(
                        "field \"partition_key\": {:?} is a single instant, but asset {:?} has no \
                         declared key span; declare one with `gapless asset set {} --key-span 5m` \
                         or give an interval such as \"{}/PT5M\"",
                        shown(text),
                        shown(&self.asset),
                        shell_word(&self.asset),
                        shown(text),
                    )));
                };
                let s = key
                    .resolve(Some(&decl.tz), Some(&decl.tz))
                    .map_err(|r| invalid("instant", text, r).context("field \"partition_key\""))?;
                let e = span
                    .add_to(s, &decl.tz)
                    .map_err(|e| e.context("field \"partition_key\""))?;
                Interval::new(s, e).map_err(|e| e.context("field \"partition_key\""))
            }
        }
    }
}

/// How deep objects and arrays nest in `json`, valid JSON text, when that
/// is deeper than `max`; `None` when it is not. Text with no more opening
/// brackets than `max` cannot nest deeper: a count the compiler vectorizes
/// answers most objects without following their strings.
fn depth_over(json: &str, max: usize) -> Option<usize> {
    let opening = json.bytes().filter(|&b| b == b'{' || b == b'[').count();
    if opening <= max {
        return None;
    }
    let depth = nesting_depth(json);
    (depth > max).then_some(depth)
}

/// How deep objects and arrays nest in `json`, valid JSON text: the
/// deepest count of open brackets, those inside strings not counted. One
/// pass over the bytes, without recursion, whatever the depth.
fn nesting_depth(json: &str) -> usize {
    let b = json.as_bytes();
    let (mut depth, mut deepest, mut i) = (0_usize, 0_usize, 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                // To the closing quote, stepping over escapes.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    deepest
}

/// The asset name as one shell word for a suggested command.
fn shell_word(name: &str) -> String {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./:@".contains(&b));
    if plain {
        shown(name).into_owned()
    } else {
        format!("'{}'", shown(name).replace('\'', "'\\''"))
    }
}

/// The `Bounds` of two instant fields, both required once either is given.
fn bounds(
    start: Option<&RawValue>,
    end: Option<&RawValue>,
    names: (&'static str, &'static str),
) -> Result<When> {
    let (Some(s), Some(e)) = (start, end) else {
        let (given, missing) = if start.is_some() {
            (names.0, names.1)
        } else {
            (names.1, names.0)
        };
        return Err(Error::new(format!(
            "missing field {missing:?}: {given:?} is given, an interval needs both"
        )));
    };
    let (start, start_text) = instant_field(s, names.0)?;
    let (end, end_text) = instant_field(e, names.1)?;
    Ok(When::Bounds {
        start,
        end,
        start_text,
        end_text,
        names,
    })
}

#[cfg(test)]
mod tests {
    use super::{depth_over, nesting_depth};

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert_eq!(nesting_depth("{}"), 1);
        assert_eq!(nesting_depth(r#"{"a": [1, {"b": []}], "c": {}}"#), 4);
        assert_eq!(nesting_depth(r#"{"a": "[[[{{{"}"#), 1);
        assert_eq!(nesting_depth(r#"{"a\"[[": "\\", "b": ["]]]\"{{"]}"#), 2);
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert_eq!(nesting_depth(&format!(r#"{{"x": {deep}}}"#)), 101);
        assert_eq!(depth_over(&format!(r#"{{"x": {deep}}}"#), 64), Some(101));
        assert_eq!(depth_over(&format!(r#"{{"x": {deep}}}"#), 101), None);
        // Many brackets, little depth: scanned, and not deeper.
        let wide = format!("{{\"x\": [{}1]}}", "{},".repeat(100));
        assert_eq!(depth_over(&wide, 64), None);
    }
}
