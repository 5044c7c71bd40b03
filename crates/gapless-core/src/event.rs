//! The event object of SPEC §2 in all its forms.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::parse::{invalid, lex_instant, shown, IsoInterval, Lexed};
use crate::{parse_instant, Duration, Error, Instant, Interval, Result};

/// The most bytes an `extra` object may have (64 KiB).
pub const MAX_EXTRA_BYTES: usize = 64 * 1024;

/// The most bytes of an asset name or an event id.
pub const MAX_NAME_BYTES: usize = 512;

/// Whether an event says its data is in place or withdrawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    /// The data for the interval is in place.
    Landed,
    /// The data is no longer valid.
    Retracted,
}

impl EventKind {
    /// `landed` or `retracted`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Landed => "landed",
            EventKind::Retracted => "retracted",
        }
    }

    /// Parse `landed` or `retracted` (lower case, as [`EventKind::as_str`]
    /// prints them).
    ///
    /// # Errors
    ///
    /// For any other text: `invalid kind "maybe": expected "landed" or
    /// "retracted"`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::EventKind;
    ///
    /// assert_eq!(EventKind::parse("retracted")?, EventKind::Retracted);
    /// assert!(EventKind::parse("maybe").is_err());
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn parse(text: &str) -> Result<EventKind> {
        match text {
            "landed" => Ok(EventKind::Landed),
            "retracted" => Ok(EventKind::Retracted),
            _ => Err(invalid(
                "kind",
                text,
                "expected \"landed\" or \"retracted\"",
            )),
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for EventKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        EventKind::parse(s)
    }
}

impl serde::Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Check an asset name: UTF-8 of 1 to 512 bytes without control characters.
///
/// # Errors
///
/// When the name is empty, too long or has a control character.
///
/// # Example
///
/// ```
/// use gapless_core::validate_asset_name;
///
/// assert!(validate_asset_name("s3://lake/orders").is_ok());
/// assert!(validate_asset_name("").is_err());
/// assert!(validate_asset_name("a\nb").is_err());
/// ```
pub fn validate_asset_name(name: &str) -> Result<()> {
    check_name(name).map_err(|reason| invalid("asset name", name, reason))
}

fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("empty; an asset name is 1 to 512 bytes of UTF-8".into());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{} bytes is longer than the {MAX_NAME_BYTES} allowed",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!("control character {c:?} is not allowed"));
    }
    Ok(())
}

/// What an asset declares about itself: the span of a discrete key and the
/// time zone its keys and bare dates are read in.
#[derive(Debug, Clone)]
pub struct AssetDecl {
    /// `[key, key + span)` for a discrete `partition_key`.
    pub key_span: Option<Duration>,
    /// Time zone of the asset.
    pub tz: jiff::tz::TimeZone,
}

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
    /// at most 512 bytes), `kind` (`landed`, the default, or `retracted`),
    /// `extra` (a JSON object of at most 64 KiB, kept byte for byte),
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
                if id.is_empty() {
                    return Err(Error::new(
                        "field \"id\": empty; an id is a non-empty string",
                    ));
                }
                if id.len() > MAX_NAME_BYTES {
                    return Err(invalid(
                        "id",
                        &id,
                        format!(
                            "{} bytes is longer than the {MAX_NAME_BYTES} allowed",
                            id.len()
                        ),
                    )
                    .context("field \"id\""));
                }
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

    /// The producer's idempotency key, if given.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
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

/// A validated event ready to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvent {
    /// Asset name (validated).
    pub asset: String,
    /// The producer's idempotency key, unique per asset.
    pub id: Option<String>,
    /// The interval covered.
    pub interval: Interval,
    /// Landed or retracted.
    pub kind: EventKind,
    /// The `extra` object, byte for byte as given.
    pub extra: Option<String>,
    /// When the producer made it.
    pub produced_at: Option<Instant>,
}

impl NewEvent {
    /// Whether `other` says the same thing: equal interval, kind,
    /// `produced_at` and `extra`. Two `extra` objects are equal when their
    /// bytes are, or when they parse to equal JSON values (so re-serializing
    /// the same object with other spacing or key order is no conflict).
    ///
    /// The asset and id are not compared: this is the idempotency test for
    /// two events of the same `(asset, id)`.
    ///
    /// # Example
    ///
    /// ```
    /// use gapless_core::RawEvent;
    ///
    /// let a = RawEvent::from_json(r#"{"asset": "A", "id": "7", "start": "2025-06-01T10:00Z", "end": "2025-06-01T10:05Z", "extra": {"a": 1, "b": 2}}"#)?;
    /// let b = RawEvent::from_json(r#"{"asset": "A", "id": "7", "start": "2025-06-01T10:00:00Z", "end": "2025-06-01T10:05:00Z", "extra": {"b":2,"a":1}}"#)?;
    /// assert!(a.resolve(None)?.same_content(&b.resolve(None)?));
    /// # Ok::<(), gapless_core::Error>(())
    /// ```
    pub fn same_content(&self, other: &NewEvent) -> bool {
        self.interval == other.interval
            && self.kind == other.kind
            && self.produced_at == other.produced_at
            && match (&self.extra, &other.extra) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b || same_json(a, b),
                _ => false,
            }
    }
}

fn same_json(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
