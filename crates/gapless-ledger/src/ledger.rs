//! The operations: one method per question, shared by the command line and
//! the server.

use std::collections::HashMap;
use std::sync::Arc;

use gapless_core::{
    segments, AssetDecl, CoverageReport, EventKind, Grid, Instant, Interval, IntervalSet, Policy,
    SegmentSource,
};
use gapless_store::{Appended, EventQuery, Store, StoreError};
use jiff::tz::TimeZone;

use crate::ingest::{Batch, BatchBuilder, Unit};
use crate::{
    AssetAnswer, AssetsAnswer, CheckAnswer, DeclAnswer, EventAnswer, EventRef, EventsAnswer,
    FrontierAnswer, LedgerError, MultiCheckAnswer, SegmentAnswer, SegmentsAnswer, WindowAnswer,
    WindowsAnswer,
};

/// The default and largest page of `events`.
pub const DEFAULT_PAGE: usize = 1_000;

/// The ledger's questions over one store.
#[derive(Debug, Clone)]
pub struct Ledger {
    store: Arc<dyn Store>,
}

type Result<T> = std::result::Result<T, LedgerError>;

impl Ledger {
    /// A ledger over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Ledger { store }
    }

    /// The store underneath.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// A builder for a batch whose discrete keys resolve against this
    /// ledger's declarations.
    pub fn batch(&self, unit: Unit) -> BatchBuilder<'_> {
        BatchBuilder::new(unit, |asset| Ok(self.store.asset_decl(asset)?))
    }

    /// Parse `items` (NDJSON lines or array items) into one batch.
    ///
    /// # Errors
    ///
    /// `BadInput` naming the first bad item by position.
    pub fn parse<'a>(&self, unit: Unit, items: impl IntoIterator<Item = &'a str>) -> Result<Batch> {
        let mut b = self.batch(unit);
        for item in items {
            b.push(item)?;
        }
        Ok(b.finish())
    }

    /// Record `batch` atomically.
    ///
    /// # Errors
    ///
    /// `Conflict` naming the position of the conflicting event; nothing is
    /// stored then.
    pub fn append(&self, batch: &Batch, received_at: Instant) -> Result<Appended> {
        self.store
            .append(batch.events(), received_at)
            .map_err(|e| match e {
                StoreError::Conflict { index, .. } => LedgerError::Conflict(batch.at(index, &e)),
                other => other.into(),
            })
    }

    /// Read NDJSON from `input` (named `source` in errors) and record it as
    /// one atomic batch. Lines are parsed on a thread of their own while the
    /// store writes the chunks already parsed, so parsing and storing overlap
    /// on two cores, and the input is streamed: memory does not grow with
    /// its size. `progress` is told the bytes read so far now and then.
    ///
    /// # Errors
    ///
    /// `BadInput` naming the first bad line (or the unreadable input),
    /// `Conflict` naming the conflicting line; nothing is stored then.
    pub fn ingest_ndjson(
        &self,
        input: impl std::io::Read + Send,
        source: &str,
        received_at: Instant,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Appended> {
        /// Events per chunk: large enough to amortize the hand-over, small
        /// enough that the writer starts early and memory stays bounded.
        const CHUNK: usize = 8_192;
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<gapless_store::Result<Vec<_>>>(8);
            let parser = scope.spawn(move || {
                let mut builder = self.batch(Unit::Line);
                let failed = read_lines(input, source, progress, |line| {
                    builder.push(line)?;
                    if builder.pending() >= CHUNK && tx.send(Ok(builder.take_events())).is_err() {
                        return Ok(false); // the writer gave up; its error is the answer
                    }
                    Ok(true)
                })
                .err();
                let last = match &failed {
                    Some(e) => Err(StoreError::Invalid(e.to_string())),
                    None => Ok(builder.take_events()),
                };
                let _ = tx.send(last);
                (builder.finish(), failed)
            });
            let stored = self.store.append_chunks(&mut rx.iter(), received_at);
            // A writer that stopped early (a conflict) must not leave the
            // parser blocked on a full channel.
            drop(rx);
            let (batch, failed) = parser.join().expect("the parser thread does not panic");
            if let Some(e) = failed {
                return Err(e);
            }
            stored.map_err(|e| match e {
                StoreError::Conflict { index, .. } => LedgerError::Conflict(batch.at(index, &e)),
                other => other.into(),
            })
        })
    }

    /// `check`: coverage of `range`, complete under `policy`.
    ///
    /// # Errors
    ///
    /// Storage faults only: an unknown asset is simply not covered.
    pub fn check(&self, asset: &str, range: Interval, policy: &Policy) -> Result<CheckAnswer> {
        let report = CoverageReport::of(&self.store.coverage(asset, range)?, range);
        Ok(CheckAnswer {
            asset: asset.to_string(),
            start: range.start(),
            end: range.end(),
            complete: policy.is_complete(&report),
            covered: report.covered,
            covered_ratio: report.covered_ratio,
            missing: report.missing,
            policy: policy.to_string(),
        })
    }

    /// Coverage of several assets at once: an instant counts only where
    /// every asset covers it.
    ///
    /// # Errors
    ///
    /// `BadInput` for no assets; storage faults.
    pub fn check_all(&self, assets: &[String], range: Interval) -> Result<MultiCheckAnswer> {
        if assets.is_empty() {
            return Err(LedgerError::BadInput(
                "assets: give at least one asset".into(),
            ));
        }
        let sets = assets
            .iter()
            .map(|a| Ok(self.store.coverage(a, range)?))
            .collect::<Result<Vec<IntervalSet>>>()?;
        let report = CoverageReport::of(&IntervalSet::intersection(&sets), range);
        Ok(MultiCheckAnswer {
            assets: assets.to_vec(),
            start: range.start(),
            end: range.end(),
            covered: report.covered,
            covered_ratio: report.covered_ratio,
            missing: report.missing,
        })
    }

    /// `windows`: the windows of `grid` in `tz` that overlap `range`.
    ///
    /// # Errors
    ///
    /// Storage faults only.
    pub fn windows(
        &self,
        asset: &str,
        range: Interval,
        grid: &Grid,
        tz: (&TimeZone, &str),
        policy: &Policy,
    ) -> Result<WindowsAnswer> {
        let windows = grid.windows(range, tz.0);
        let hull = match (windows.first(), windows.last()) {
            (Some(f), Some(l)) => Interval::new(f.start(), l.end())?,
            _ => range,
        };
        let covered = self.store.coverage(asset, hull)?;
        let windows = windows
            .into_iter()
            .map(|w| {
                let r = CoverageReport::of(&covered, w);
                WindowAnswer {
                    start: w.start(),
                    end: w.end(),
                    complete: policy.is_complete(&r),
                    covered_ratio: r.covered_ratio,
                    missing: r.missing,
                }
            })
            .collect();
        Ok(WindowsAnswer {
            asset: asset.to_string(),
            every: grid.to_string(),
            tz: tz.1.to_string(),
            policy: policy.to_string(),
            windows,
        })
    }

    /// `segments`: which event is the latest on each part of `range`.
    ///
    /// # Errors
    ///
    /// Storage faults only.
    pub fn segments(&self, asset: &str, range: Interval) -> Result<SegmentsAnswer> {
        let events = self.store.events_overlapping(asset, range)?;
        let sources: Vec<SegmentSource> = events
            .iter()
            .map(|e| SegmentSource {
                seq: e.seq,
                interval: e.interval,
                kind: e.kind,
            })
            .collect();
        let ids: HashMap<i64, &Option<String>> = events.iter().map(|e| (e.seq, &e.id)).collect();
        let segments = segments(&sources, range)
            .into_iter()
            .map(|s| SegmentAnswer {
                start: s.interval.start(),
                end: s.interval.end(),
                kind: s.kind.as_str().to_string(),
                event: EventRef {
                    id: ids.get(&s.seq).and_then(|id| (*id).clone()),
                    seq: s.seq,
                },
            })
            .collect();
        Ok(SegmentsAnswer {
            asset: asset.to_string(),
            start: range.start(),
            end: range.end(),
            segments,
        })
    }

    /// `events`: one page of events in sequence order.
    ///
    /// # Errors
    ///
    /// `BadInput` for a zero limit; storage faults.
    pub fn events(
        &self,
        asset: &str,
        range: Option<Interval>,
        kind: Option<EventKind>,
        limit: Option<usize>,
        after: Option<i64>,
    ) -> Result<EventsAnswer> {
        let limit = limit.unwrap_or(DEFAULT_PAGE);
        if limit == 0 || limit > 10_000 {
            return Err(LedgerError::BadInput(format!(
                "limit: {limit} is out of range: give 1 to 10000"
            )));
        }
        let page = self.store.events(
            asset,
            &EventQuery {
                range,
                kind,
                limit,
                after,
            },
        )?;
        let events = page
            .events
            .into_iter()
            .map(|e| {
                Ok(EventAnswer {
                    id: e.id,
                    seq: e.seq,
                    start: e.interval.start(),
                    end: e.interval.end(),
                    kind: e.kind.as_str().to_string(),
                    extra: e
                        .extra
                        .map(serde_json::value::RawValue::from_string)
                        .transpose()
                        .map_err(|e| {
                            LedgerError::Fault(format!("stored extra is not JSON: {e}"))
                        })?,
                    produced_at: e.produced_at,
                    received_at: e.received_at,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EventsAnswer {
            asset: asset.to_string(),
            events,
            next: page.next.map(|n| n.to_string()),
        })
    }

    /// `frontier`: the end of the covered run from `origin`, or `origin`.
    ///
    /// # Errors
    ///
    /// Storage faults only.
    pub fn frontier(&self, asset: &str, origin: Instant) -> Result<FrontierAnswer> {
        let frontier = self
            .store
            .run_containing(asset, origin)?
            .map_or(origin, |r| r.end());
        Ok(FrontierAnswer {
            asset: asset.to_string(),
            origin,
            frontier,
        })
    }

    /// Every asset with its event count and covered extent.
    ///
    /// # Errors
    ///
    /// Storage faults only.
    pub fn assets(&self) -> Result<AssetsAnswer> {
        let assets = self
            .store
            .assets()?
            .into_iter()
            .map(|a| AssetAnswer {
                asset: a.asset,
                events: a.events,
                first_covered: a.first_covered,
                last_covered: a.last_covered,
            })
            .collect();
        Ok(AssetsAnswer { assets })
    }

    /// Declare `asset`'s discrete key span and time zone.
    ///
    /// # Errors
    ///
    /// `BadInput` for a bad asset name, span or zone.
    pub fn declare(
        &self,
        asset: &str,
        key_span: Option<&str>,
        tz: Option<&str>,
    ) -> Result<DeclAnswer> {
        gapless_core::validate_asset_name(asset)
            .map_err(|e| LedgerError::BadInput(format!("asset: {e}")))?;
        let (zone, tz_name) = crate::params::time_zone(tz)?;
        let span = key_span
            .map(|s| {
                gapless_core::Duration::parse(s)
                    .map_err(|e| LedgerError::BadInput(format!("key span: {e}")))
            })
            .transpose()?;
        self.store.declare_asset(
            asset,
            &AssetDecl {
                key_span: span,
                tz: zone,
            },
        )?;
        Ok(DeclAnswer {
            asset: asset.to_string(),
            key_span: key_span.map(str::to_string),
            tz: tz_name,
        })
    }
}

/// Call `each` with every line of `input` (without its `\n` or `\r\n`)
/// until it returns `false` or an error. Bad UTF-8 is an error naming the
/// line; blank lines are passed on (the batch builder counts and skips
/// them).
fn read_lines(
    input: impl std::io::Read,
    source: &str,
    progress: &(dyn Fn(u64) + Sync),
    mut each: impl FnMut(&str) -> Result<bool>,
) -> Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, input);
    let mut line = Vec::with_capacity(1024);
    let (mut number, mut read, mut reported) = (0u64, 0u64, 0u64);
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| LedgerError::BadInput(format!("cannot read {source}: {e}")))?;
        if n == 0 {
            progress(read);
            return Ok(());
        }
        number += 1;
        read += n as u64;
        if read - reported >= 1 << 20 {
            progress(read);
            reported = read;
        }
        let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| LedgerError::BadInput(format!("line {number}: not UTF-8 text: {e}")))?;
        if !each(text)? {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_lines;

    fn lines(input: &[u8]) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        read_lines(input, "test input", &|_| {}, |l| {
            out.push(l.to_string());
            Ok(true)
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    #[test]
    fn lines_lose_lf_and_crlf_and_keep_blank_ones_for_counting() {
        assert_eq!(lines(b"a\r\nb\n\nc").unwrap(), ["a", "b", "", "c"]);
        assert_eq!(lines(b"a\n").unwrap(), ["a"]);
        assert_eq!(lines(b"").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_utf8_names_its_line() {
        let err = lines(b"ok\n\xff\xfe\n").unwrap_err();
        assert!(err.starts_with("line 2: not UTF-8"), "{err}");
    }

    #[test]
    fn reading_stops_when_told() {
        let mut seen = 0;
        read_lines(&b"a\nb\nc\n"[..], "x", &|_| {}, |_| {
            seen += 1;
            Ok(seen < 2)
        })
        .unwrap();
        assert_eq!(seen, 2);
    }
}
