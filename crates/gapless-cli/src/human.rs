//! Readable output: short summaries and aligned tables. `--json` is the
//! contract; this is for people.

use std::fmt::Write;

use gapless_api::{
    AssetsAnswer, CheckAnswer, DeclAnswer, EventsAnswer, FrontierAnswer, IngestAnswer,
    SegmentsAnswer, WindowsAnswer,
};
use gapless_core::{Instant, Interval};

/// A length of time as people write it: `1d 2h 5m`, `15m`, `0.5s`, `1µs`.
pub fn length(micros: i64) -> String {
    const UNITS: [(i64, &str); 4] = [
        (86_400_000_000, "d"),
        (3_600_000_000, "h"),
        (60_000_000, "m"),
        (1_000_000, "s"),
    ];
    let mut rest = micros;
    let mut parts = Vec::new();
    for (size, name) in UNITS {
        if rest >= size && name != "s" {
            parts.push(format!("{}{name}", rest / size));
            rest %= size;
        }
    }
    if rest > 0 {
        if rest % 1_000_000 == 0 {
            parts.push(format!("{}s", rest / 1_000_000));
        } else if rest < 1_000 {
            parts.push(format!("{rest}µs"));
        } else {
            let s = format!("{:.6}", rest as f64 / 1e6);
            parts.push(format!("{}s", s.trim_end_matches('0')));
        }
    }
    if parts.is_empty() {
        "0s".into()
    } else {
        parts.join(" ")
    }
}

fn len(start: Instant, end: Instant) -> String {
    length(end.as_micros() - start.as_micros())
}

fn percent(ratio: f64) -> String {
    // Never round a gap away: 99.9999% is not 100%.
    let p = (ratio * 100_000.0).floor() / 1000.0;
    format!("{p:.3}%")
}

fn gaps_table(out: &mut String, missing: &[Interval], indent: &str) {
    for g in missing {
        let _ = writeln!(
            out,
            "{indent}{:<27} {:<27} {}",
            g.start().to_string(),
            g.end().to_string(),
            length(g.len_micros())
        );
    }
}

fn total(missing: &[Interval]) -> String {
    length(missing.iter().map(|g| g.len_micros()).sum())
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `ingest` and `emit`.
pub fn appended(a: &IngestAnswer) -> String {
    format!("accepted {}, duplicates {}\n", a.accepted, a.duplicates)
}

/// `check`.
pub fn check(a: &CheckAnswer) -> String {
    let mut out = String::new();
    let status = if a.complete {
        "complete"
    } else {
        "NOT complete"
    };
    let _ = writeln!(
        out,
        "{} [{}, {}): {status} under {}, {} covered",
        a.asset,
        a.start,
        a.end,
        a.policy,
        percent(a.covered_ratio)
    );
    if !a.missing.is_empty() {
        let _ = writeln!(
            out,
            "missing {}, {} in all:",
            plural(a.missing.len(), "gap", "gaps"),
            total(&a.missing)
        );
        gaps_table(&mut out, &a.missing, "  ");
    }
    out
}

/// `windows`.
pub fn windows(a: &WindowsAnswer) -> String {
    let mut out = String::new();
    let complete = a.windows.iter().filter(|w| w.complete).count();
    let _ = writeln!(
        out,
        "{}: every {} in {}, policy {}: {} of {} complete",
        a.asset,
        a.every,
        a.tz,
        a.policy,
        complete,
        plural(a.windows.len(), "window", "windows")
    );
    let _ = writeln!(
        out,
        "{:<27} {:<27} {:>9}  {:<10} gaps",
        "start", "end", "covered", "status"
    );
    for w in &a.windows {
        let status = if w.complete { "complete" } else { "missing" };
        let gaps = if w.missing.is_empty() {
            String::new()
        } else {
            format!(
                "{} ({})",
                plural(w.missing.len(), "gap", "gaps"),
                total(&w.missing)
            )
        };
        let _ = writeln!(
            out,
            "{:<27} {:<27} {:>9}  {:<10} {gaps}",
            w.start.to_string(),
            w.end.to_string(),
            percent(w.covered_ratio),
            status
        );
    }
    out
}

/// `windows --keys`: each window's partition key, one a line (a backfill
/// plan with `--incomplete`).
pub fn window_keys(a: &WindowsAnswer) -> String {
    let mut out = String::new();
    for w in &a.windows {
        let _ = writeln!(out, "{}", w.key);
    }
    out
}

/// `segments`.
pub fn segments(a: &SegmentsAnswer) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} [{}, {}): {}",
        a.asset,
        a.start,
        a.end,
        plural(a.segments.len(), "segment", "segments")
    );
    let _ = writeln!(
        out,
        "{:<27} {:<27} {:<12} {:<10} {:>8}  event",
        "start", "end", "length", "kind", "seq"
    );
    for s in &a.segments {
        let _ = writeln!(
            out,
            "{:<27} {:<27} {:<12} {:<10} {:>8}  {}",
            s.start.to_string(),
            s.end.to_string(),
            len(s.start, s.end),
            s.kind.as_str(),
            s.event.seq,
            s.event.id.as_deref().unwrap_or("-")
        );
    }
    out
}

/// `events`.
pub fn events(a: &EventsAnswer) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>8}  {:<20} {:<27} {:<27} {:<10} extra",
        "seq", "id", "start", "end", "kind"
    );
    for e in &a.events {
        let _ = writeln!(
            out,
            "{:>8}  {:<20} {:<27} {:<27} {:<10} {}",
            e.seq,
            e.id.as_deref().unwrap_or("-"),
            e.start.to_string(),
            e.end.to_string(),
            e.kind.as_str(),
            e.extra.as_ref().map_or("", |x| x.get())
        );
    }
    match &a.next {
        Some(next) => {
            let _ = writeln!(out, "more: --after {next}");
        }
        None => {
            let _ = writeln!(out, "{}", plural(a.events.len(), "event", "events"));
        }
    }
    out
}

/// `frontier`.
pub fn frontier(a: &FrontierAnswer) -> String {
    if a.frontier == a.origin {
        format!("{}: not covered at {}\n", a.asset, a.origin)
    } else {
        format!(
            "{}: complete from {} up to {} ({})\n",
            a.asset,
            a.origin,
            a.frontier,
            len(a.origin, a.frontier)
        )
    }
}

/// `asset set`.
pub fn decl(a: &DeclAnswer) -> String {
    format!(
        "{}: key span {}, time zone {}\n",
        a.asset,
        a.key_span.as_deref().unwrap_or("none"),
        a.tz
    )
}

/// `assets`.
pub fn assets(a: &AssetsAnswer) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<30} {:>10}  {:<27} last covered",
        "asset", "events", "first covered"
    );
    for x in &a.assets {
        let _ = writeln!(
            out,
            "{:<30} {:>10}  {:<27} {}",
            x.asset,
            x.events,
            x.first_covered
                .map(|t| t.to_string())
                .unwrap_or_else(|| "-".into()),
            x.last_covered
                .map(|t| t.to_string())
                .unwrap_or_else(|| "-".into())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::length;

    #[test]
    fn lengths_read_like_people_write_them() {
        assert_eq!(length(15 * 60_000_000), "15m");
        assert_eq!(
            length(86_400_000_000 + 2 * 3_600_000_000 + 5 * 60_000_000),
            "1d 2h 5m"
        );
        assert_eq!(length(500_000), "0.5s");
        assert_eq!(length(1), "1µs");
        assert_eq!(length(61_000_000), "1m 1s");
        assert_eq!(length(0), "0s");
    }
}
