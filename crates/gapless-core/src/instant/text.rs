//! The canonical text of an instant, `YYYY-MM-DDTHH:MM:SS[.f]Z`, written and
//! read without jiff's general printer and parser.
//!
//! Every answer carries instants, and jiff's RFC 9557 machinery (civil
//! conversion through its own types, offsets, annotations, precision
//! options) was most of what an instant cost in JSON. This is the one form
//! gapless writes: UTC with `Z`, the fraction at its shortest and only when
//! not zero, which for the years 0001–9999 is exactly what jiff prints.
//! Reading takes that form and nothing else: any other text (an offset, a
//! lowercase `t`, nanoseconds, a leap second, a bad date) goes to jiff, so
//! what is accepted and every error stay jiff's. `tests/instant_text.rs`
//! holds both to jiff as the reference.

use crate::units::{MICROS_PER_DAY, MICROS_PER_SECOND, SECONDS_PER_HOUR, SECONDS_PER_MINUTE};

use super::Instant;

/// An instant's text on the stack. The longest is
/// `9999-12-30T23:59:59.999999Z`.
pub(super) struct Text {
    bytes: [u8; Text::CAPACITY],
    len: usize,
}

impl Text {
    const CAPACITY: usize = 27;

    /// The canonical text of `t`.
    pub(super) fn of(t: Instant) -> Text {
        let micros = t.as_micros();
        let (year, month, day) = civil_from_days(micros.div_euclid(MICROS_PER_DAY));
        // Below a day, so both fit a u32.
        let of_day = micros.rem_euclid(MICROS_PER_DAY);
        let seconds = (of_day / MICROS_PER_SECOND) as u32;
        let fraction = (of_day % MICROS_PER_SECOND) as u32;
        let mut b = *b"0000-00-00T00:00:00.000000Z";
        put_pair(&mut b, 0, year / 100);
        put_pair(&mut b, 2, year % 100);
        put_pair(&mut b, 5, month);
        put_pair(&mut b, 8, day);
        put_pair(&mut b, 11, seconds / 3_600);
        put_pair(&mut b, 14, seconds / 60 % 60);
        put_pair(&mut b, 17, seconds % 60);
        let mut len = 19;
        if fraction != 0 {
            put_pair(&mut b, 20, fraction / 10_000);
            put_pair(&mut b, 22, fraction / 100 % 100);
            put_pair(&mut b, 24, fraction % 100);
            len = 26;
            while b[len - 1] == b'0' {
                len -= 1;
            }
        }
        b[len] = b'Z';
        Text {
            bytes: b,
            len: len + 1,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..self.len]).expect("an instant's text is ASCII")
    }
}

/// The instant of `text` when it is in the canonical form and in range,
/// else `None`: jiff then reads it, or says why not.
pub(super) fn parse_canonical(text: &str) -> Option<Instant> {
    let b = text.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[b.len() - 1] != b'Z'
    {
        return None;
    }
    let fraction = match b.len() {
        20 => 0,
        // One to six digits: finer ones are jiff's to refuse.
        22..=27 if b[19] == b'.' => {
            let digits = &b[20..b.len() - 1];
            let scale = 10_i64.pow(u32::try_from(6 - digits.len()).ok()?);
            read_digits(digits)? * scale
        }
        _ => return None,
    };
    let year = read_digits(&b[0..4])?;
    let month = read_digits(&b[5..7])?;
    let day = read_digits(&b[8..10])?;
    let hour = read_digits(&b[11..13])?;
    let minute = read_digits(&b[14..16])?;
    let second = read_digits(&b[17..19])?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let seconds = hour * SECONDS_PER_HOUR + minute * SECONDS_PER_MINUTE + second;
    let micros =
        days_from_civil(year, month, day) * MICROS_PER_DAY + seconds * MICROS_PER_SECOND + fraction;
    Instant::from_micros(micros).ok()
}

/// The numbers 00 to 99 in two ASCII digits each.
const PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// `n` (below 100) in two digits at `b[at..at + 2]`.
fn put_pair(b: &mut [u8; Text::CAPACITY], at: usize, n: u32) {
    let i = n as usize * 2;
    b[at..at + 2].copy_from_slice(&PAIRS[i..i + 2]);
}

/// The number the ASCII digits `b` spell, `None` when one is not a digit.
fn read_digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0_i64, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// The proleptic Gregorian calendar in eras of 400 years (146,097 days), the
// year starting in March so that the leap day is its last: Howard Hinnant's
// `days_from_civil` and `civil_from_days`.

/// Days since 1970-01-01 of a valid date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date (year, month, day) `days` after 1970-01-01, in the years
/// 0001-9999.
fn civil_from_days(days: i64) -> (u32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // An instant's date is in 0001-9999, its month and day small.
    (year as u32, month as u32, day as u32)
}
