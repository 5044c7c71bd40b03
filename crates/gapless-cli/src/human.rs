//! Readable output: short summaries and aligned tables. `--json` is the
//! contract; this is for people.

use std::fmt::Write;

use gapless_api::{
    AssetAnswer, AssetsAnswer, BucketsAnswer, CheckAnswer, DeclAnswer, EventsAnswer,
    FrontierAnswer, IngestAnswer, PruneAnswer, SegmentAnswer, SegmentsAnswer, WindowAnswer,
    WindowsAnswer,
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

/// Gaps listed before `check` summarizes the rest (all with `--all`).
const GAPS_SHOWN: usize = 20;

/// Cells of the coverage bar: fits an 80-column terminal with its labels.
const BAR_CELLS: i64 = 60;

/// One line that shows where in `[start, end)` the gaps are: `#` a covered
/// cell, `.` a missing one, `+` a cell partly covered; `?` where the gap
/// list was cut before it, so nothing is known of it here.
fn bar(start: Instant, end: Instant, missing: &[Interval], cut: bool) -> String {
    let (s, len) = (start.as_micros(), end.as_micros() - start.as_micros());
    let known_to = match (cut, missing.last()) {
        (true, Some(last)) => last.end().as_micros(),
        _ => end.as_micros(),
    };
    let mut gaps = missing.iter().peekable();
    let mut cells = String::with_capacity(BAR_CELLS as usize);
    for i in 0..BAR_CELLS {
        // Cell bounds in i128: a range of millennia times 60 overflows i64.
        let lo = s + (i128::from(len) * i128::from(i) / i128::from(BAR_CELLS)) as i64;
        let hi = s + (i128::from(len) * i128::from(i + 1) / i128::from(BAR_CELLS)) as i64;
        if lo >= known_to {
            cells.push('?');
            continue;
        }
        while gaps.peek().is_some_and(|g| g.end().as_micros() <= lo) {
            gaps.next();
        }
        let missing_here: i64 = gaps
            .clone()
            .take_while(|g| g.start().as_micros() < hi)
            .map(|g| g.end().as_micros().min(hi) - g.start().as_micros().max(lo))
            .sum();
        cells.push(match missing_here {
            0 => '#',
            m if m >= hi - lo => '.',
            _ => '+',
        });
    }
    cells
}

/// `check`; every gap with `all`, else the first [`GAPS_SHOWN`] and a
/// summary of the rest.
pub fn check(a: &CheckAnswer, all: bool) -> String {
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
    if a.missing_count == 0 {
        return out;
    }
    let cut = a.missing.len() < a.missing_count;
    let missing_micros = if cut {
        // Not every gap is listed: the total from the covered share.
        ((1.0 - a.covered_ratio) * (a.end.as_micros() - a.start.as_micros()) as f64).round() as i64
    } else {
        a.missing.iter().map(|g| g.len_micros()).sum()
    };
    let _ = writeln!(out, "coverage |{}|", bar(a.start, a.end, &a.missing, cut));
    let _ = writeln!(
        out,
        "missing {}, {} in all:",
        plural(a.missing_count, "gap", "gaps"),
        length(missing_micros)
    );
    let shown = if all {
        a.missing.len()
    } else {
        a.missing.len().min(GAPS_SHOWN)
    };
    gaps_table(&mut out, &a.missing[..shown], "  ");
    let rest = a.missing_count - shown;
    if rest > 0 {
        let listed_rest: i64 = a.missing[shown..].iter().map(|g| g.len_micros()).sum();
        let rest_micros = if cut {
            missing_micros
                - a.missing[..shown]
                    .iter()
                    .map(|g| g.len_micros())
                    .sum::<i64>()
        } else {
            listed_rest
        };
        let hint = if all || cut {
            "(the answer lists the first 10000)"
        } else {
            "(--all lists them)"
        };
        let _ = writeln!(
            out,
            "  ... and {rest} more {}, {} in all {hint}",
            if rest == 1 { "gap" } else { "gaps" },
            length(rest_micros.max(0))
        );
    }
    out
}

/// `windows`.
pub fn windows(a: &WindowsAnswer) -> String {
    windows_table(
        &a.asset,
        &a.every.to_string(),
        &a.tz,
        &a.policy.to_string(),
        &a.windows,
    )
}

/// The table of `windows` and `rule windows`: a line on what was judged
/// (`subject`: an asset, a rule), then one row per window.
pub fn windows_table(
    subject: &str,
    every: &str,
    tz: &str,
    policy: &str,
    windows: &[WindowAnswer],
) -> String {
    let mut out = String::new();
    let complete = windows.iter().filter(|w| w.complete).count();
    let _ = writeln!(
        out,
        "{subject}: every {every} in {tz}, policy {policy}: {complete} of {} complete",
        plural(windows.len(), "window", "windows")
    );
    // Outside UTC, the local start with its offset, so that the two 02:00
    // hours of a fall-back night can be told apart.
    let zone = (tz != "UTC")
        .then(|| gapless_core::parse_time_zone(tz).ok())
        .flatten();
    let local = |t: Instant| match &zone {
        Some(z) => format!(
            "{:<23} ",
            t.to_timestamp()
                .to_zoned_datetime(z.clone())
                .strftime("%Y-%m-%d %H:%M %:z")
                .to_string()
        ),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "{}{:<27} {:<27} {:>9}  {:<10} gaps",
        if zone.is_some() {
            format!("{:<23} ", "local start")
        } else {
            String::new()
        },
        "start",
        "end",
        "covered",
        "status"
    );
    for w in windows {
        let status = if w.complete { "complete" } else { "missing" };
        let gaps = if w.missing_count == 0 {
            String::new()
        } else {
            format!(
                "{} ({})",
                plural(w.missing_count, "gap", "gaps"),
                total(&w.missing)
            )
        };
        let _ = writeln!(
            out,
            "{}{:<27} {:<27} {:>9}  {:<10} {gaps}",
            local(w.start),
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

/// `buckets`: a row per part with its shares, then the sums.
pub fn buckets(a: &BucketsAnswer) -> String {
    let pct = |us: i64, start: Instant, end: Instant| {
        100.0 * us as f64 / (end.as_micros() - start.as_micros()) as f64
    };
    let mut out = format!(
        "{} [{}, {})\n{:<27} {:<27} {:>8} {:>8} {:>10}\n",
        a.asset, a.start, a.end, "start", "end", "covered", "missing", "retracted"
    );
    for b in &a.buckets {
        let _ = writeln!(
            out,
            "{:<27} {:<27} {:>7.2}% {:>7.2}% {:>9.2}%",
            b.start.to_string(),
            b.end.to_string(),
            pct(b.covered_us, b.start, b.end),
            pct(b.missing_us, b.start, b.end),
            pct(b.retracted_us, b.start, b.end),
        );
    }
    let _ = writeln!(
        out,
        "{} parts: {:.2}% covered, {:.2}% missing, {:.2}% retracted",
        a.buckets.len(),
        pct(a.covered_us, a.start, a.end),
        pct(a.missing_us, a.start, a.end),
        pct(a.retracted_us, a.start, a.end),
    );
    out
}

/// `segments`, one page (`--limit`, `--after`): the header, the rows and
/// where the next page starts.
pub fn segments(a: &SegmentsAnswer) -> String {
    let mut out = segments_head(a);
    for s in &a.segments {
        out.push_str(&segment_row(s));
    }
    out.push_str(&segments_tail(a.segments.len(), a.next.as_deref()));
    out.push_str(&pruned_note(a.pruned_before));
    out
}

/// The first lines of `segments`: the question and the columns.
pub fn segments_head(a: &SegmentsAnswer) -> String {
    format!(
        "{} [{}, {})\n{:<27} {:<27} {:<12} {:<10} {:>8}  event\n",
        a.asset, a.start, a.end, "start", "end", "length", "kind", "seq"
    )
}

/// One row of `segments`.
pub fn segment_row(s: &SegmentAnswer) -> String {
    format!(
        "{:<27} {:<27} {:<12} {:<10} {:>8}  {}\n",
        s.start.to_string(),
        s.end.to_string(),
        len(s.start, s.end),
        s.kind.as_str(),
        s.event
            .as_ref()
            .map_or("-".to_string(), |e| e.seq.to_string()),
        match &s.event {
            Some(e) => e.id.as_deref().unwrap_or("-"),
            None => "(pruned)",
        }
    )
}

/// The line that says a range's event detail was pruned, when it was.
pub fn pruned_note(pruned_before: Option<Instant>) -> String {
    pruned_before.map_or_else(String::new, |t| {
        format!("event detail before {t} was pruned: segments there name no event\n")
    })
}

/// `prune`.
pub fn pruned(a: &PruneAnswer) -> String {
    format!(
        "pruned before {}{}: {}, {} of {}\n",
        a.before,
        a.asset
            .as_ref()
            .map_or_else(String::new, |x| format!(" (asset {x})")),
        plural(a.events_removed as usize, "event", "events"),
        plural(a.firings_removed as usize, "firing", "firings"),
        plural(a.assets_touched as usize, "asset", "assets"),
    )
}

/// The last line of `segments`: how many, and the next page if any.
pub fn segments_tail(count: usize, next: Option<&str>) -> String {
    match next {
        Some(next) => format!(
            "{} on this page; more: --after {next}\n",
            plural(count, "segment", "segments")
        ),
        None => format!("{}\n", plural(count, "segment", "segments")),
    }
}

/// `text` in at most `width` characters, the last one `…` when cut.
fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Characters of the id column; longer ids are clipped (`--json` has them whole).
const ID_WIDTH: usize = 20;

/// Characters of `extra` shown; the rest is in `--json`.
const EXTRA_WIDTH: usize = 60;

/// `events`.
pub fn events(a: &EventsAnswer) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>8}  {:<ID_WIDTH$} {:<27} {:<27} {:<10} extra",
        "seq", "id", "start", "end", "kind"
    );
    for e in &a.events {
        let _ = writeln!(
            out,
            "{:>8}  {:<ID_WIDTH$} {:<27} {:<27} {:<10} {}",
            e.seq,
            clip(e.id.as_deref().unwrap_or("-"), ID_WIDTH),
            e.start.to_string(),
            e.end.to_string(),
            e.kind.as_str(),
            clip(e.extra.as_ref().map_or("", |x| x.get()), EXTRA_WIDTH)
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
    if let Some(t) = a.pruned_before {
        let _ = writeln!(out, "events that ended by {t} were pruned");
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

/// `assets`: one line an asset, its frontier and the covered shares of the
/// day and week before `as_of`; the cursor of the next page when there is
/// one.
pub fn assets(a: &AssetsAnswer) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<30} {:>10}  {:<27} {:<27} {:<27} {:>8} {:>8}  {:<27} {:<9} time zone",
        "asset",
        "events",
        "first covered",
        "frontier",
        "last covered",
        "day",
        "week",
        "last received",
        "key span"
    );
    for x in &a.assets {
        let _ = writeln!(
            out,
            "{:<30} {:>10}  {:<27} {:<27} {:<27} {:>8} {:>8}  {:<27} {:<9} {}",
            clip(&x.asset, 30),
            x.events,
            or_dash(x.first_covered),
            or_dash(x.frontier),
            or_dash(x.last_covered),
            percent(x.covered_ratio_day),
            percent(x.covered_ratio_week),
            or_dash(x.last_received),
            x.key_span.as_deref().unwrap_or("-"),
            x.tz.as_deref().unwrap_or("-")
        );
    }
    let _ = writeln!(out, "day and week: covered share before {}", a.as_of);
    if let Some(next) = &a.next {
        let _ = writeln!(out, "more: --after {next}");
    }
    out
}

/// An instant, or `-` for none.
fn or_dash(t: Option<Instant>) -> String {
    t.map_or_else(|| "-".to_string(), |t| t.to_string())
}

/// `asset show`.
pub fn asset(a: &AssetAnswer) -> String {
    format!(
        "{}\n  events         {}\n  first covered  {}\n  last covered   {}\n  last received  {}\n  key span       {}\n  time zone      {}\n  pruned before  {}\n",
        a.asset,
        a.events,
        or_dash(a.first_covered),
        or_dash(a.last_covered),
        or_dash(a.last_received),
        a.key_span.as_deref().unwrap_or("none"),
        a.tz.as_deref().unwrap_or("UTC (not declared)"),
        or_dash(a.pruned_before)
    )
}

#[cfg(test)]
mod tests {
    use super::length;

    #[test]
    fn long_ids_are_clipped_to_their_column() {
        assert_eq!(super::clip("short", 20), "short");
        let c = super::clip("a-very-long-producer-batch-id-0001", 20);
        assert_eq!((c.chars().count(), c.ends_with('…')), (20, true));
        assert_eq!(super::clip("ümlaut", 6), "ümlaut");
    }

    #[test]
    fn the_bar_puts_gaps_where_they_are() {
        use gapless_core::{Instant, Interval};
        let t = |m: i64| Instant::from_micros(m * 60_000_000).unwrap();
        let gap = Interval::new(t(30), t(60)).unwrap();
        // An hour in 60 cells of a minute: the second half is missing.
        let bar = super::bar(t(0), t(60), &[gap], false);
        assert_eq!(bar, format!("{}{}", "#".repeat(30), ".".repeat(30)));
        // Half a minute missing makes a cell partial.
        let half = Interval::new(
            t(10),
            Instant::from_micros(10 * 60_000_000 + 30_000_000).unwrap(),
        )
        .unwrap();
        assert_eq!(
            super::bar(t(0), t(60), &[half], false).chars().nth(10),
            Some('+')
        );
        // A cut list: nothing is known past its last gap.
        let bar = super::bar(t(0), t(60), &[Interval::new(t(0), t(1)).unwrap()], true);
        assert!(bar.starts_with(".?") && bar.ends_with('?'), "{bar}");
    }

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
