//! Parsing the text forms of SPEC §2: instants, ISO 8601 intervals and time
//! zones, one file each; durations parse in `duration/lex.rs`.
//!
//! Every error is one line of the form `invalid {what} "{text}": {reason}`,
//! with the text quoted (and cut after 64 characters) and a human reason.
//! The reason is an error of its own, wrapped by the `invalid …` context
//! (with jiff's error under it where jiff found the fault). This file holds
//! what all of them share: the quoting, the error, the out-of-range reason,
//! and reading a text form through serde.

use std::borrow::Cow;

use crate::error::Reason;
use crate::Error;

mod instant;
mod interval;
mod zone;

pub(crate) use instant::{lex_instant, Lexed};
pub use instant::{parse_instant, parse_local_instant};
pub(crate) use interval::IsoInterval;
pub use interval::{parse_interval, parse_local_interval};
pub use zone::parse_time_zone;
pub(crate) use zone::start_of_day;

/// The last microsecond that parsing and time zone arithmetic produce:
/// 9999-12-30T22:00:00Z, the end of jiff's timestamps (so that every UTC
/// offset keeps the local date within the year 9999).
pub(crate) const LAST_MICROS: i64 = crate::Instant::MAX.as_micros();

/// At most this many characters of an input are quoted in an error message.
const SHOWN_CHARS: usize = 64;

/// The text as quoted in an error message: cut after [`SHOWN_CHARS`]
/// characters with `…` appended.
pub(crate) fn shown(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => Cow::Borrowed(text),
        Some((cut, _)) => Cow::Owned(format!("{}…", &text[..cut])),
    }
}

/// `invalid {what} "{text}": {reason}` with the text cut to a sane length,
/// wrapping the reason.
pub(crate) fn invalid(what: &str, text: &str, reason: impl Reason) -> Error {
    reason
        .into_error()
        .context(format_args!("invalid {what} {:?}", shown(text)))
}

/// A value read through serde from its text form: the text is parsed with
/// `parse`, and a parse error becomes a serde error with the same one-line
/// message.
pub(crate) fn deserialize_text<'de, D, T>(
    d: D,
    parse: impl FnOnce(&str) -> crate::Result<T>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let text = <Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
    parse(&text).map_err(serde::de::Error::custom)
}

/// The reason for an instant outside the years that parsing supports.
const OUT_OF_RANGE: &str =
    "outside the supported range 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z";

/// [`OUT_OF_RANGE`], found by `cause` (jiff's arithmetic, or the instant's
/// own bounds).
fn out_of_range(cause: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::new(OUT_OF_RANGE).with_source(cause)
}
