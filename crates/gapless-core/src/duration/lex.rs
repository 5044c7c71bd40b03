//! Lexing the text forms of a [`Duration`]: ISO 8601
//! `P[nY][nM][nW][nD][T[nH][nM][nS]]` and short forms such as `1h30m`.

use super::{Duration, MAX_DAYS, MAX_MICROS, MAX_MONTHS};
use crate::error::err;
use crate::parse::shown;
use crate::units::{MICROS_PER_HOUR, MICROS_PER_MILLISECOND, MICROS_PER_MINUTE, MICROS_PER_SECOND};
use crate::Result;

impl Duration {
    /// Parse without wrapping the reason into an error.
    pub(crate) fn lex(text: &str) -> Result<Duration> {
        let t = text.trim();
        if t.is_empty() {
            return Err(err!("empty; expected a duration such as PT5M or 5m"));
        }
        if t.starts_with('-') {
            return Err(err!("negative durations are not allowed"));
        }
        let t = t.strip_prefix('+').unwrap_or(t);
        let mut acc = Acc::default();
        if let Some(rest) = t.strip_prefix(['P', 'p']) {
            lex_iso(rest, &mut acc)?;
        } else {
            lex_short(t, &mut acc)?;
        }
        Duration::build(acc.months, acc.days, acc.micros)
    }
}

#[derive(Default)]
struct Acc {
    months: i64,
    days: i64,
    micros: i64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Unit {
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    fn name(self) -> &'static str {
        match self {
            Unit::Microsecond => "microseconds",
            Unit::Millisecond => "milliseconds",
            Unit::Second => "seconds",
            Unit::Minute => "minutes",
            Unit::Hour => "hours",
            Unit::Day => "days",
            Unit::Week => "weeks",
            Unit::Month => "months",
            Unit::Year => "years",
        }
    }

    /// Microseconds of a fixed unit.
    fn fixed(self) -> Option<i64> {
        match self {
            Unit::Microsecond => Some(1),
            Unit::Millisecond => Some(MICROS_PER_MILLISECOND),
            Unit::Second => Some(MICROS_PER_SECOND),
            Unit::Minute => Some(MICROS_PER_MINUTE),
            Unit::Hour => Some(MICROS_PER_HOUR),
            _ => None,
        }
    }

    fn short(word: &str) -> Option<Unit> {
        Some(match word {
            "y" | "yr" | "yrs" | "year" | "years" => Unit::Year,
            "mo" | "mos" | "month" | "months" => Unit::Month,
            "w" | "wk" | "wks" | "week" | "weeks" => Unit::Week,
            "d" | "day" | "days" => Unit::Day,
            "h" | "hr" | "hrs" | "hour" | "hours" => Unit::Hour,
            "m" | "min" | "mins" | "minute" | "minutes" => Unit::Minute,
            "s" | "sec" | "secs" | "second" | "seconds" => Unit::Second,
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => Unit::Millisecond,
            "us" | "µs" | "usec" | "usecs" | "microsecond" | "microseconds" => Unit::Microsecond,
            _ => return None,
        })
    }
}

/// A number with an optional fraction: the digits before and after the
/// point.
struct Number<'a> {
    whole: &'a str,
    frac: Option<&'a str>,
}

impl Number<'_> {
    fn text(&self) -> String {
        match self.frac {
            Some(f) => format!("{}.{f}", self.whole),
            None => self.whole.to_string(),
        }
    }
}

/// Split a leading number off `s`.
fn take_number(s: &str) -> Result<(Number<'_>, &str)> {
    let end = s
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    let whole = &s[..end];
    let mut rest = &s[end..];
    let mut frac = None;
    if rest.starts_with(['.', ',']) {
        let r = &rest[1..];
        let fend = r
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(r.len());
        if fend == 0 {
            return Err(err!("expected digits after the decimal point"));
        }
        frac = Some(&r[..fend]);
        rest = &r[fend..];
    }
    if whole.is_empty() {
        if frac.is_some() {
            return Err(err!("expected a digit before the decimal point"));
        }
        return Err(match rest.chars().next() {
            None => err!("expected a number"),
            Some(c) => err!("expected a number, found {:?}", c),
        });
    }
    Ok((Number { whole, frac }, rest))
}

/// Add `n` of `unit` to the accumulator.
fn add(acc: &mut Acc, n: &Number<'_>, unit: Unit) -> Result<()> {
    let too_long = || err!("longer than 9999 years");
    // Enough digits to exceed any limit are rejected before overflow.
    let whole: i64 = if n.whole.trim_start_matches('0').len() > 18 {
        return Err(too_long());
    } else {
        n.whole.parse().unwrap_or(0)
    };
    match unit.fixed() {
        None => {
            if n.frac.is_some() {
                return Err(err!(
                    "{} {} cannot have a fraction; use a smaller unit",
                    n.text(),
                    unit.name()
                ));
            }
            let (slot, factor) = match unit {
                Unit::Year => (&mut acc.months, 12),
                Unit::Month => (&mut acc.months, 1),
                Unit::Week => (&mut acc.days, 7),
                _ => (&mut acc.days, 1),
            };
            *slot = whole
                .checked_mul(factor)
                .and_then(|v| slot.checked_add(v))
                .filter(|v| *v <= MAX_DAYS.max(MAX_MONTHS))
                .ok_or_else(too_long)?;
        }
        Some(per) => {
            let mut micros = i128::from(whole) * i128::from(per);
            if let Some(frac) = n.frac {
                let significant = frac.trim_end_matches('0');
                if significant.len() > 12 {
                    return Err(err!(
                        "{} {} is finer than a microsecond",
                        n.text(),
                        unit.name()
                    ));
                }
                let scale = 10i128.pow(significant.len() as u32);
                let num = significant.parse::<i128>().unwrap_or(0) * i128::from(per);
                if num % scale != 0 {
                    return Err(err!(
                        "{} {} is finer than a microsecond",
                        n.text(),
                        unit.name()
                    ));
                }
                micros += num / scale;
            }
            let total = i128::from(acc.micros) + micros;
            if total > i128::from(MAX_MICROS) {
                return Err(too_long());
            }
            acc.micros = total as i64;
        }
    }
    Ok(())
}

/// ISO 8601 after the `P`.
fn lex_iso(s: &str, acc: &mut Acc) -> Result<()> {
    if s.is_empty() {
        return Err(err!(
            "expected at least one component after \"P\", such as PT5M or P1D"
        ));
    }
    let (date, time) = match s.find(['T', 't']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    if time == Some("") {
        return Err(err!("expected hours, minutes or seconds after \"T\""));
    }
    let mut fraction_seen = false;
    let mut comps = |part: &str, units: &[(char, Unit)]| -> Result<()> {
        let mut rest = part;
        let mut next = 0;
        while !rest.is_empty() {
            if fraction_seen {
                return Err(err!("only the last component may have a fraction"));
            }
            let (n, r) = take_number(rest)?;
            let mut chars = r.chars();
            let Some(designator) = chars.next() else {
                return Err(err!("the number {} has no unit designator", n.text()));
            };
            let upper = designator.to_ascii_uppercase();
            let Some(pos) = units[next..].iter().position(|(c, _)| *c == upper) else {
                return Err(if units.iter().any(|(c, _)| *c == upper) {
                    err!("designator {designator:?} is out of order or repeated")
                } else if time.is_none() && matches!(upper, 'H' | 'S') {
                    err!("designator {designator:?} needs \"T\" before the time components, such as PT{}{upper}", n.text())
                } else {
                    err!("unknown designator {designator:?}")
                });
            };
            let unit = units[next + pos].1;
            next += pos + 1;
            fraction_seen = n.frac.is_some();
            add(acc, &n, unit)?;
            rest = chars.as_str();
        }
        Ok(())
    };
    comps(
        date,
        &[
            ('Y', Unit::Year),
            ('M', Unit::Month),
            ('W', Unit::Week),
            ('D', Unit::Day),
        ],
    )?;
    if let Some(time) = time {
        comps(
            time,
            &[('H', Unit::Hour), ('M', Unit::Minute), ('S', Unit::Second)],
        )?;
    }
    Ok(())
}

/// Short forms such as `5m`, `1h30m`, `1.5h`, `2 days`.
fn lex_short(s: &str, acc: &mut Acc) -> Result<()> {
    let mut rest = s;
    let mut last: Option<Unit> = None;
    let mut fraction_seen = false;
    while !rest.is_empty() {
        if fraction_seen {
            return Err(err!("only the last component may have a fraction"));
        }
        let (n, r) = take_number(rest)?;
        let r = r.trim_start();
        let end = r
            .char_indices()
            .find(|(_, c)| !(c.is_alphabetic()))
            .map_or(r.len(), |(i, _)| i);
        let word = &r[..end];
        if word.is_empty() {
            return Err(err!(
                "the number {} has no unit; use s, m, h, d, w, mo or y (e.g. 5m) or ISO 8601 (PT5M)",
                n.text()
            ));
        }
        let Some(unit) = Unit::short(&word.to_lowercase()) else {
            return Err(err!(
                "unknown unit {:?}; use s, m, h, d, w, mo or y (e.g. 5m) or ISO 8601 (PT5M)",
                shown(word)
            ));
        };
        if last.is_some_and(|l| unit >= l) {
            return Err(err!(
                "units must go from largest to smallest without repeats, found {:?} after {}",
                word,
                last.map_or("", |l| l.name())
            ));
        }
        last = Some(unit);
        fraction_seen = n.frac.is_some();
        add(acc, &n, unit)?;
        rest = r[end..].trim_start();
    }
    Ok(())
}
