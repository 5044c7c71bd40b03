//! An event as a row of `events` (schema version 11): eight columns.
//!
//! A row with a NULL carries a bitmap of one bit a column after its 23-byte
//! header. Up to eight columns it fits in the header's alignment padding;
//! with nine or more the header grows to the next multiple of eight, 32
//! bytes. Most events have a NULL (few carry `extra`, many no
//! `produced_at`), so eight columns save eight bytes of each row. Two
//! columns carry what ten did:
//!
//! - `n`, the event's number among its asset's events (1, 2, ...), is
//!   negated for a retraction: the kind is its sign.
//! - `detail` holds what few events carry, as bytes: NULL when the event
//!   has neither `produced_at` nor `extra`; else a flag byte ([`PRODUCED`],
//!   [`EXTRA`]), then `produced_at` as an 8-byte big-endian integer when
//!   flagged (as `int8send` writes it), then `extra`'s UTF-8 bytes to the
//!   end when flagged.

use gapless_core::EventKind;

use crate::codec::kind_code;
use crate::error::corrupt;
use crate::Result;

/// The columns of an event that reads select, in this order (`read.rs`
/// decodes them).
macro_rules! event_columns {
    () => {
        "seq, id, start_us, end_us, n, detail, received_at"
    };
}
pub(super) use event_columns;

/// The flag of a detail that holds `produced_at`.
const PRODUCED: u8 = 1;
/// The flag of a detail that holds `extra`.
const EXTRA: u8 = 2;

/// The stored number of an asset's `number`th event, of kind `kind`.
#[inline]
pub(super) fn signed_number(number: i32, kind: EventKind) -> i32 {
    match kind {
        EventKind::Landed => number,
        EventKind::Retracted => -number,
    }
}

/// The kind and the number of a stored `n`.
fn number_of(n: i32) -> Result<(EventKind, i32)> {
    // `i32::MIN` is never stored: numbers stop at `i32::MAX`.
    match n {
        1.. => Ok((EventKind::Landed, n)),
        ..=-1 if n != i32::MIN => Ok((EventKind::Retracted, -n)),
        _ => Err(corrupt(format_args!("event number {n}"))),
    }
}

/// The detail of an event with `extra` and `produced_at` (microseconds).
pub(super) fn detail(extra: Option<&str>, produced_at: Option<i64>) -> Option<Vec<u8>> {
    if extra.is_none() && produced_at.is_none() {
        return None;
    }
    let len = 1 + produced_at.map_or(0, |_| 8) + extra.map_or(0, str::len);
    let mut out = Vec::with_capacity(len);
    out.push(produced_at.map_or(0, |_| PRODUCED) | extra.map_or(0, |_| EXTRA));
    if let Some(p) = produced_at {
        out.extend_from_slice(&p.to_be_bytes());
    }
    if let Some(x) = extra {
        out.extend_from_slice(x.as_bytes());
    }
    Some(out)
}

/// What a stored detail holds.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Detail {
    pub(super) extra: Option<String>,
    pub(super) produced_at: Option<i64>,
}

/// What a row's `n` and `detail` hold, as [`crate::codec`] takes an
/// event's columns: the kind's code, its number, `extra` and `produced_at`.
pub(super) struct Content {
    pub(super) kind: i64,
    pub(super) number: i32,
    pub(super) detail: Detail,
}

/// The content of a stored `n` and `detail`.
pub(super) fn content(n: i32, detail: Option<Vec<u8>>) -> Result<Content> {
    let (kind, number) = number_of(n)?;
    Ok(Content {
        kind: kind_code(kind).into(),
        number,
        detail: undetail(detail)?,
    })
}

/// The `extra` and `produced_at` of a stored detail.
fn undetail(bytes: Option<Vec<u8>>) -> Result<Detail> {
    let Some(mut bytes) = bytes else {
        return Ok(Detail::default());
    };
    let bad = || corrupt("event detail");
    let (&flags, rest) = bytes.split_first().ok_or_else(bad)?;
    if flags == 0 || flags & !(PRODUCED | EXTRA) != 0 {
        return Err(bad());
    }
    let (produced_at, rest) = if flags & PRODUCED != 0 {
        let (p, rest) = rest.split_first_chunk::<8>().ok_or_else(bad)?;
        (Some(i64::from_be_bytes(*p)), rest)
    } else {
        (None, rest)
    };
    let extra = if flags & EXTRA != 0 {
        let at = bytes.len() - rest.len();
        bytes.drain(..at);
        Some(String::from_utf8(bytes).map_err(|_| bad())?)
    } else if rest.is_empty() {
        None
    } else {
        return Err(bad());
    };
    Ok(Detail { extra, produced_at })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_detail_reads_back_as_written(
            extra in proptest::option::of(".*"),
            produced_at in proptest::option::of(any::<i64>()),
        ) {
            let stored = detail(extra.as_deref(), produced_at);
            prop_assert_eq!(stored.is_none(), extra.is_none() && produced_at.is_none());
            prop_assert_eq!(undetail(stored).unwrap(), Detail { extra, produced_at });
        }

        #[test]
        fn a_number_reads_back_with_its_kind(number in 1..=i32::MAX, retracted: bool) {
            let kind = if retracted { EventKind::Retracted } else { EventKind::Landed };
            prop_assert_eq!(number_of(signed_number(number, kind)).unwrap(), (kind, number));
        }
    }

    #[test]
    fn damaged_details_and_numbers_are_corrupt() {
        for bytes in [
            vec![],
            vec![0],
            vec![4],
            vec![PRODUCED, 1, 2, 3],
            vec![PRODUCED, 0, 0, 0, 0, 0, 0, 0, 1, b'x'],
            vec![EXTRA, 0xff],
        ] {
            assert!(undetail(Some(bytes.clone())).is_err(), "{bytes:?}");
        }
        assert!(number_of(0).is_err());
        assert!(number_of(i32::MIN).is_err());
    }
}
