//! The operations: one typed method per question and the writes, over one
//! store. [`crate::Ask`]'s implementation (`ask.rs`) turns the requests'
//! text into these methods' arguments.

use std::sync::Arc;

use gapless_api::{
    AssetOverviewAnswer, AssetsAnswer, BodyFormat, BucketAnswer, BucketsAnswer, CheckAnswer, Error,
    EventAnswer, EventRef, EventsAnswer, FrontierAnswer, IngestAnswer, MultiCheckAnswer, Result,
    SegmentAnswer, SegmentsAnswer, Unit, WindowAnswer, WindowsAnswer,
};
use gapless_core::{
    CoverageReport, EventKind, Grid, Instant, Interval, IntervalSet, PagedSegments, Policy,
};
use gapless_store::{Appended, EventQuery, Store, StoreError, SCAN_PAGE};
use gapless_store::{AssetQuery, DAY_US, WEEK_US};
use jiff::tz::TimeZone;
use serde_json::value::RawValue;

use crate::error::from_store;
use crate::ingest::{Batch, BatchBuilder};

use gapless_api::params::{
    DEFAULT_PAGE, MAX_ASSETS, MAX_GAPS, MAX_PAGE, MAX_WINDOWS, MAX_WINDOWS_GAPS,
};

/// A `windows` question in typed form.
#[derive(Debug, Clone, Copy)]
pub struct WindowsQuery<'a> {
    /// The range the windows overlap.
    pub range: Interval,
    /// The calendar grid.
    pub grid: Grid,
    /// The grid's time zone, and its name to echo.
    pub zone: &'a TimeZone,
    /// The name of `zone` as asked.
    pub zone_name: &'a str,
    /// When a window counts as complete.
    pub policy: Policy,
    /// Only the windows that are not complete.
    pub incomplete_only: bool,
    /// The strftime format of each window's key.
    pub key_format: &'a str,
}

/// The ledger's questions and writes over one store.
#[derive(Debug, Clone)]
pub struct Ledger {
    pub(crate) store: Arc<dyn Store>,
}

/// The `extra` bytes at which an `events` page ends before its limit: with
/// `extra` objects of up to 64 KiB, 10,000 events would otherwise be an
/// answer of 640 MiB.
pub const PAGE_EXTRA_BYTES: usize = 16 << 20;

/// A page's limit: [`DEFAULT_PAGE`] when none is given, 1 to [`MAX_PAGE`].
fn page_limit(limit: Option<usize>) -> Result<usize> {
    let limit = limit.unwrap_or(DEFAULT_PAGE);
    if limit == 0 || limit > MAX_PAGE {
        return Err(Error::bad_input(format!(
            "limit: {limit} is out of range: give 1 to {MAX_PAGE}"
        )));
    }
    Ok(limit)
}

fn counts(a: Appended) -> IngestAnswer {
    IngestAnswer {
        accepted: a.accepted,
        duplicates: a.duplicates,
    }
}

impl Ledger {
    /// A ledger over `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Ledger { store }
    }

    /// The store it asks, for what works on it beside the questions (a
    /// deliverer of firings).
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether a short question (coverage, frontier: one index seek) may be
    /// asked right on an async runtime's thread (see
    /// [`Store::reads_inline`]).
    pub fn reads_inline(&self) -> bool {
        self.store.reads_inline()
    }

    /// A builder for a batch whose discrete keys resolve against this
    /// ledger's declarations, counting positions in `unit` (none: a single
    /// event).
    pub fn batch(&self, unit: Option<Unit>) -> BatchBuilder<'_> {
        BatchBuilder::new(unit, |asset| {
            self.store.asset_decl(asset).map_err(from_store)
        })
    }

    /// Parse `items` (NDJSON lines or array items) into one batch.
    ///
    /// # Errors
    ///
    /// `BadInput` naming the first bad item by position.
    pub fn parse<'a>(
        &self,
        unit: Option<Unit>,
        items: impl IntoIterator<Item = &'a str>,
    ) -> Result<Batch> {
        crate::ingest::parse_items(self.batch(unit), items)
    }

    /// Parse a whole body of events: NDJSON, a JSON array (positions are
    /// `event N`) or one JSON object.
    ///
    /// # Errors
    ///
    /// `BadInput` for a body that is not UTF-8 or not JSON, or naming the
    /// first bad event.
    pub fn parse_body(&self, format: BodyFormat, body: &[u8]) -> Result<Batch> {
        crate::ingest::parse_body(format, body, |asset| {
            self.store.asset_decl(asset).map_err(from_store)
        })
    }

    /// [`Ledger::parse_body`] without reading the store: `None` when an
    /// event needs its asset's declaration (a discrete key, a naive
    /// instant), which only [`Ledger::parse_body`] can look up. A server
    /// parses a small body so on its own thread, whatever the backend.
    pub fn parse_body_without_store(format: BodyFormat, body: &[u8]) -> Option<Result<Batch>> {
        let needed = std::cell::Cell::new(false);
        let parsed = crate::ingest::parse_body(format, body, |_| {
            needed.set(true);
            Err(Error::bad_input("a declaration is needed"))
        });
        (!needed.get()).then_some(parsed)
    }

    /// Record `batch` atomically.
    ///
    /// # Errors
    ///
    /// `Conflict` at the position of the conflicting event; nothing is
    /// stored then.
    pub fn append(&self, batch: &Batch, received_at: Instant) -> Result<IngestAnswer> {
        self.store
            .append(batch.events(), received_at)
            .map(counts)
            .map_err(|e| stored_error(batch, e))
    }

    /// Record several independent batches (a server's group commit) in one
    /// durable commit where the store can: each batch atomic on its own,
    /// with its own answer, in order. A conflicting batch stores nothing
    /// and gets its conflict at its own position; when the shared commit
    /// itself fails, each batch is tried again alone, so that one fault
    /// does not fail the others.
    pub fn append_group(
        &self,
        batches: &[&Batch],
        received_at: Instant,
    ) -> Vec<Result<IngestAnswer>> {
        if let [batch] = batches {
            return vec![self.append(batch, received_at)];
        }
        let events: Vec<&[gapless_core::NewEvent]> = batches.iter().map(|b| b.events()).collect();
        let shared = self.store.append_many(&events, received_at);
        batches
            .iter()
            .zip(shared)
            .map(|(batch, result)| match result {
                Ok(a) => Ok(counts(a)),
                Err(e @ StoreError::Conflict { .. }) => Err(stored_error(batch, e)),
                // Nothing of this batch is stored: alone it gets its own
                // verdict.
                Err(_) => self.append(batch, crate::now()),
            })
            .collect()
    }

    /// Read NDJSON from `input` (named `source` in errors) and record it as
    /// one atomic batch. Lines are parsed on a thread of their own while the
    /// store writes the chunks already parsed, so parsing and storing overlap
    /// on two cores, and the input is streamed: memory does not grow with
    /// its size.
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
    ) -> Result<IngestAnswer> {
        /// Events per chunk: large enough to amortize the hand-over and to
        /// give a chunk of many interleaved assets runs of each to store
        /// together (the `ledger` bench's many-assets case is slower with
        /// smaller chunks), small enough that the writer starts early and
        /// memory stays bounded.
        const CHUNK: usize = 32_768;
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<gapless_store::Result<Vec<_>>>(8);
            // Stored chunks come back to be freed here, where they were
            // allocated: memory stays bounded by the chunks in flight.
            let (back, stored) = std::sync::mpsc::channel::<Vec<gapless_core::NewEvent>>();
            let parser = scope.spawn(move || {
                let mut builder = self.batch(Some(Unit::Line));
                let failed = read_lines(input, source, |line| {
                    builder.push(line)?;
                    if builder.pending() >= CHUNK {
                        stored.try_iter().for_each(drop);
                        if tx.send(Ok(builder.take_events())).is_err() {
                            return Ok(false); // the writer gave up; its error is the answer
                        }
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
            let stored = self.store.append_chunks(
                &mut rx.iter(),
                &mut |chunk| {
                    // The parser is gone once it sent its last chunk: the
                    // few left are freed here.
                    let _ = back.send(chunk);
                },
                received_at,
            );
            // A writer that stopped early (a conflict) must not leave the
            // parser blocked on a full channel.
            drop(rx);
            let (batch, failed) = parser.join().expect("the parser thread does not panic");
            if let Some(e) = failed {
                return Err(e);
            }
            stored.map(counts).map_err(|e| stored_error(&batch, e))
        })
    }

    /// `check`: coverage of `range`, complete under `policy`.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen; storage faults.
    pub fn check(&self, asset: &str, range: Interval, policy: &Policy) -> Result<CheckAnswer> {
        let covered = self.store.coverage(asset, range).map_err(from_store)?;
        if covered.is_empty() {
            self.known(asset)?;
        }
        Ok(check_answer(asset, range, policy, &covered))
    }

    /// Coverage of several assets at once: an instant counts only where
    /// every asset covers it.
    ///
    /// # Errors
    ///
    /// `BadInput` for no assets; storage faults.
    pub fn check_all(&self, assets: &[String], range: Interval) -> Result<MultiCheckAnswer> {
        if assets.is_empty() {
            return Err(Error::bad_input("assets: give at least one asset"));
        }
        if assets.len() > MAX_ASSETS {
            return Err(Error::bad_input(format!(
                "assets: {} assets, more than the limit of {MAX_ASSETS}: ask about fewer at once",
                assets.len()
            )));
        }
        let both = self.joint_coverage(assets, range)?;
        let report = CoverageReport::of(&both, range);
        Ok(MultiCheckAnswer {
            assets: assets.to_vec(),
            start: range.start(),
            end: range.end(),
            covered: report.covered,
            covered_ratio: report.covered_ratio,
            missing_count: report.missing.len(),
            missing: cut(report.missing),
        })
    }

    /// The joint coverage of `assets` over `range`: the instants every one
    /// of them covers (exact within `range`).
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen; storage faults.
    pub(crate) fn joint_coverage(&self, assets: &[String], range: Interval) -> Result<IntervalSet> {
        // Intersected one asset at a time, so that two coverages are in
        // memory, not all; each asset is read only within the hull of what
        // the ones before it cover together (nothing, once that is empty:
        // it is only checked to be known). A name given twice is read once.
        let mut both: Option<IntervalSet> = None;
        let mut seen = std::collections::HashSet::new();
        for a in assets {
            if !seen.insert(a.as_str()) {
                continue;
            }
            let within = match &both {
                None => Some(range),
                Some(so_far) => match (so_far.runs().next(), so_far.runs().last()) {
                    (Some(f), Some(l)) => Interval::new(f.start(), l.end())?.intersect(range),
                    _ => None,
                },
            };
            let covered = match within {
                Some(w) => self.store.coverage(a, w).map_err(from_store)?,
                None => IntervalSet::new(),
            };
            if covered.is_empty() {
                self.known(a)?;
            }
            both = Some(match both {
                None => covered,
                Some(so_far) => IntervalSet::intersection([&so_far, &covered]),
            });
        }
        Ok(both.unwrap_or_default())
    }

    /// `windows`: the windows of `q.grid` in `q.zone` that overlap
    /// `q.range`, each with its coverage and partition key.
    ///
    /// # Errors
    ///
    /// `BadInput` for more than [`MAX_WINDOWS`] windows; `NotFound` for an
    /// asset the ledger has never seen; storage faults.
    pub fn windows_in(&self, asset: &str, q: &WindowsQuery<'_>) -> Result<WindowsAnswer> {
        let grid = q.grid;
        let windows = grid
            .windows_at_most(q.range, q.zone, MAX_WINDOWS)
            .map_err(|n| {
                Error::bad_input(format!(
                    "every: the range holds about {n} windows of {grid}, more than the limit of \
                 {MAX_WINDOWS}: ask for a shorter range or a coarser grid"
                ))
            })?;
        let hull = match (windows.first(), windows.last()) {
            (Some(f), Some(l)) => Interval::new(f.start(), l.end())?,
            _ => q.range,
        };
        let covered = self.store.coverage(asset, hull).map_err(from_store)?;
        if covered.is_empty() {
            self.known(asset)?;
        }
        let mut answers = Vec::with_capacity(windows.len());
        let mut gaps = MAX_WINDOWS_GAPS;
        for w in windows {
            let r = CoverageReport::of(&covered, w);
            let complete = q.policy.is_complete(&r);
            if q.incomplete_only && complete {
                continue;
            }
            let key = gapless_core::format_key(q.key_format, w.start(), q.zone)
                .map_err(|e| Error::bad_input(format!("key_format: {e}")))?;
            answers.push(WindowAnswer {
                key,
                start: w.start(),
                end: w.end(),
                complete,
                covered_ratio: r.covered_ratio,
                missing_count: r.missing.len(),
                missing: cut_within(r.missing, &mut gaps),
            });
        }
        Ok(WindowsAnswer {
            asset: asset.to_string(),
            every: grid,
            tz: q.zone_name.to_string(),
            policy: q.policy,
            windows: answers,
        })
    }

    /// `buckets`: `range` cut into `n` equal parts (at most one per
    /// microsecond), each with its covered, retracted and missing
    /// microseconds, from the asset's coverage runs and its retractions:
    /// the cost grows with the runs and retractions in the range and with
    /// `n`, never with the events.
    ///
    /// The two are read one after the other; an append in between moves a
    /// part between covered and retracted, and the parts still add up.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen; storage faults.
    pub fn buckets_in(&self, asset: &str, range: Interval, n: usize) -> Result<BucketsAnswer> {
        let covered = self.store.coverage(asset, range).map_err(from_store)?;
        let retractions = self.store.retractions(asset, range).map_err(from_store)?;
        if covered.is_empty() && retractions.is_empty() {
            self.known(asset)?;
        }
        let buckets: Vec<BucketAnswer> = gapless_core::buckets(&covered, &retractions, range, n)
            .into_iter()
            .map(|b| BucketAnswer {
                start: b.range.start(),
                end: b.range.end(),
                covered_us: b.covered_us,
                missing_us: b.missing_us(),
                retracted_us: b.retracted_us,
            })
            .collect();
        let sum = |f: fn(&BucketAnswer) -> i64| buckets.iter().map(f).sum();
        Ok(BucketsAnswer {
            asset: asset.to_string(),
            start: range.start(),
            end: range.end(),
            covered_us: sum(|b| b.covered_us),
            missing_us: sum(|b| b.missing_us),
            retracted_us: sum(|b| b.retracted_us),
            buckets,
        })
    }

    /// `segments`: which event is the latest on each part of `range`, one
    /// page of at most `limit` segments from `after` (or the range's
    /// start) on.
    ///
    /// Memory is bounded by the page, not by the events: the events
    /// overlapping the rest of the range stream from the store in sequence
    /// order onto a [`PagedSegments`], which keeps `limit` pieces at most.
    ///
    /// # Errors
    ///
    /// `BadInput` for a limit out of 1 to [`MAX_PAGE`]; `NotFound` for an
    /// asset the ledger has never seen; storage faults.
    pub fn segments_in(
        &self,
        asset: &str,
        range: Interval,
        limit: Option<usize>,
        after: Option<Instant>,
    ) -> Result<SegmentsAnswer> {
        let limit = page_limit(limit)?;
        let from = after.unwrap_or(range.start()).max(range.start());
        // Before the asset's watermark the events that provided each part
        // may be pruned: that part is read from the runs and retractions.
        let watermark = self.pruned_before(asset)?.filter(|&p| p > from);
        let mut segments = Vec::new();
        if let Some(p) = watermark {
            let part = Interval::new(from, p.min(range.end()))?;
            segments = self.pruned_segments(asset, part, limit)?;
            let full = segments.len() == limit;
            if full || p >= range.end() {
                let next = segments
                    .last()
                    .map(|s| s.end)
                    .filter(|&e| full && e < range.end());
                return Ok(SegmentsAnswer {
                    asset: asset.to_string(),
                    start: range.start(),
                    end: range.end(),
                    segments,
                    next: next.map(|t| t.to_string()),
                    pruned_before: Some(p),
                });
            }
        }
        let limit = limit - segments.len();
        let from = watermark.map_or(from, |p| p.max(from));
        let rest = Interval::new(from, range.end())?;
        let mut page: PagedSegments<Option<String>> = PagedSegments::new(rest, limit);
        let seen = self
            .store
            .scan_overlapping(asset, rest, &mut |e| {
                page.paint(e.seq, e.interval, e.kind, e.id.clone());
                page.cut()
            })
            .map_err(from_store)?;
        if seen == 0 && watermark.is_none() {
            self.known(asset)?;
        }
        let (pieces, next) = page.finish();
        segments.extend(pieces.into_iter().map(|(s, id)| SegmentAnswer {
            start: s.interval.start(),
            end: s.interval.end(),
            kind: s.kind,
            event: Some(EventRef { id, seq: s.seq }),
        }));
        Ok(SegmentsAnswer {
            asset: asset.to_string(),
            start: range.start(),
            end: range.end(),
            segments,
            next: next.map(|t| t.to_string()),
            pruned_before: watermark,
        })
    }

    /// `events`: one page of events in sequence order.
    ///
    /// # Errors
    ///
    /// `BadInput` for a limit out of 1 to [`MAX_PAGE`]; `NotFound` for an asset
    /// the ledger has never seen; storage faults.
    pub fn events_page(
        &self,
        asset: &str,
        range: Option<Interval>,
        kind: Option<EventKind>,
        limit: Option<usize>,
        after: Option<i64>,
    ) -> Result<EventsAnswer> {
        let limit = page_limit(limit)?;
        // Read in store pages of SCAN_PAGE events, so that what is read at
        // once stays bounded, until the page is full or its `extra`
        // objects reach PAGE_EXTRA_BYTES.
        let mut found = Vec::new();
        let (mut cursor, mut extra_bytes) = (after, 0_usize);
        let next = loop {
            let want = (limit - found.len()).min(SCAN_PAGE);
            let page = self
                .store
                .events(
                    asset,
                    &EventQuery {
                        range,
                        kind,
                        limit: want,
                        after: cursor,
                    },
                )
                .map_err(from_store)?;
            let more = page.next;
            for e in page.events {
                extra_bytes += e.extra.as_ref().map_or(0, String::len);
                cursor = Some(e.cursor);
                found.push(e);
            }
            let full = found.len() == limit || extra_bytes >= PAGE_EXTRA_BYTES;
            match more {
                Some(_) if full => break cursor,
                Some(_) => {}
                None => break None,
            }
        };
        if found.is_empty() && after.is_none() {
            self.known(asset)?;
        }
        let pruned_before = self
            .pruned_before(asset)?
            .filter(|&p| range.is_none_or(|r| r.start() < p));
        let events = found
            .into_iter()
            .map(|e| {
                Ok(EventAnswer {
                    id: e.id,
                    seq: e.seq,
                    start: e.interval.start(),
                    end: e.interval.end(),
                    kind: e.kind,
                    extra: e
                        .extra
                        .map(RawValue::from_string)
                        .transpose()
                        .map_err(|e| Error::fault(format!("stored extra is not JSON: {e}")))?,
                    produced_at: e.produced_at,
                    received_at: e.received_at,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(EventsAnswer {
            asset: asset.to_string(),
            events,
            next: next.map(|n| n.to_string()),
            pruned_before,
        })
    }

    /// One page of the assets per `query`, each with its overview as of
    /// `now` (one read of the store, whatever the page's size).
    ///
    /// # Errors
    ///
    /// Storage faults.
    pub fn assets_page(&self, query: &AssetQuery, now: Instant) -> Result<AssetsAnswer> {
        let page = self.store.assets_page(query, now).map_err(from_store)?;
        let assets = page
            .assets
            .into_iter()
            .map(|a| {
                let s = a.summary;
                AssetOverviewAnswer {
                    asset: s.asset,
                    events: s.events,
                    first_covered: s.first_covered,
                    last_covered: s.last_covered,
                    last_received: s.last_received,
                    key_span: s.key_span,
                    tz: s.tz,
                    frontier: a.frontier,
                    covered_ratio_day: recent_ratio(a.covered_day_us, DAY_US),
                    covered_ratio_week: recent_ratio(a.covered_week_us, WEEK_US),
                    pruned_before: s.pruned_before,
                }
            })
            .collect();
        Ok(AssetsAnswer {
            assets,
            next: page.next.as_deref().map(gapless_api::params::name_cursor),
            as_of: now,
        })
    }

    /// `frontier`: the end of the covered run from `origin`, or `origin`.
    ///
    /// # Errors
    ///
    /// `NotFound` for an asset the ledger has never seen; storage faults.
    pub fn frontier_from(&self, asset: &str, origin: Instant) -> Result<FrontierAnswer> {
        let frontier = self
            .store
            .run_containing(asset, origin)
            .map_err(from_store)?
            .map_or_else(|| self.known(asset).map(|()| None), |r| Ok(Some(r)))?
            .map_or(origin, |r| r.end());
        Ok(FrontierAnswer {
            asset: asset.to_string(),
            origin,
            frontier,
        })
    }
}

/// The covered share of a recent range of `len` microseconds, as `check`
/// computes it (one rounding of the exact quotient).
fn recent_ratio(covered: i64, len: i64) -> f64 {
    CoverageReport::ratio(covered.clamp(0, len), len)
}

/// The answer of [`Ledger::check`] once `covered`, the asset's coverage
/// within `range`, is read.
pub(crate) fn check_answer(
    asset: &str,
    range: Interval,
    policy: &Policy,
    covered: &IntervalSet,
) -> CheckAnswer {
    let report = CoverageReport::of(covered, range);
    CheckAnswer {
        asset: asset.to_string(),
        start: range.start(),
        end: range.end(),
        complete: policy.is_complete(&report),
        covered: report.covered,
        covered_ratio: report.covered_ratio,
        missing_count: report.missing.len(),
        missing: cut(report.missing),
        policy: *policy,
    }
}

impl Ledger {
    /// `Ok` for an asset the ledger knows (it has an event or a
    /// declaration); `NotFound` naming the nearest known name otherwise.
    /// Asked only when an answer came back empty, so the questions about
    /// assets with data pay nothing for it.
    ///
    /// # Errors
    ///
    /// `NotFound` for an unknown asset; storage faults.
    pub fn known(&self, asset: &str) -> Result<()> {
        if self.store.asset(asset).map_err(from_store)?.is_some() {
            return Ok(());
        }
        let names: Vec<String> = self
            .store
            .assets()
            .map_err(from_store)?
            .into_iter()
            .map(|a| a.asset)
            .collect();
        Err(Error::not_found(unknown_asset(asset, &names)))
    }
}

/// `unknown asset "ordres"`, with `(did you mean "orders"?)` when a known
/// name is a typo away (an edit distance of at most a third of its length,
/// and at least 1).
fn unknown_asset(asset: &str, names: &[String]) -> String {
    match nearest(asset, names) {
        Some(n) => format!("unknown asset {asset:?} (did you mean {n:?}?)"),
        None => format!(
            "unknown asset {asset:?}: no event of it is recorded and it is not declared \
             (declare it first with `gapless asset set`)"
        ),
    }
}

/// The name of `names` a typo away from `name` (an edit distance of at
/// most a third of its length, and at least 1), the nearest first.
pub(crate) fn nearest<'a>(name: &str, names: &'a [String]) -> Option<&'a String> {
    names
        .iter()
        .map(|n| (strsim::levenshtein(name, n), n))
        .filter(|(d, n)| *d <= (n.chars().count() / 3).max(1))
        .min()
        .map(|(_, n)| n)
}

/// The first [`MAX_GAPS`] of `missing` (the answer says how many there are).
pub(crate) fn cut(mut missing: Vec<Interval>) -> Vec<Interval> {
    missing.truncate(MAX_GAPS);
    missing
}

/// [`cut`], and no more than `budget` gaps, which it spends: the gaps of
/// the windows of one answer share [`MAX_WINDOWS_GAPS`].
pub(crate) fn cut_within(mut missing: Vec<Interval>, budget: &mut usize) -> Vec<Interval> {
    missing.truncate(MAX_GAPS.min(*budget));
    *budget -= missing.len();
    missing
}

/// `e` from storing `batch`, a conflict at its event's position.
fn stored_error(batch: &Batch, e: StoreError) -> Error {
    match e {
        StoreError::Conflict { index, .. } => batch.at(index, from_store(e)),
        other => from_store(other),
    }
}

/// Call `each` with every line of `input` (without its `\n` or `\r\n`)
/// until it returns `false` or an error. Bad UTF-8 is an error naming the
/// line; blank lines are passed on (the batch builder counts and skips
/// them).
fn read_lines(
    input: impl std::io::Read,
    source: &str,
    mut each: impl FnMut(&str) -> Result<bool>,
) -> Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, input);
    let mut line = Vec::with_capacity(1024);
    let mut number = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::bad_input(format!("cannot read {source}: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        number += 1;
        let bytes = line.strip_suffix(b"\n").unwrap_or(&line);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let text = std::str::from_utf8(bytes)
            .map_err(|e| Error::bad_input(format!("line {number}: not UTF-8 text: {e}")))?;
        if !each(text)? {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{read_lines, unknown_asset};

    #[test]
    fn unknown_assets_suggest_the_nearest_name() {
        let names = [
            "orders".to_string(),
            "clicks".to_string(),
            "s3://lake/orders".to_string(),
        ];
        assert_eq!(
            unknown_asset("ordres", &names),
            "unknown asset \"ordres\" (did you mean \"orders\"?)"
        );
        assert_eq!(
            unknown_asset("s3://lake/order", &names),
            "unknown asset \"s3://lake/order\" (did you mean \"s3://lake/orders\"?)"
        );
        assert!(
            unknown_asset("payments", &names).starts_with("unknown asset \"payments\": no event")
        );
    }

    fn lines(input: &[u8]) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        read_lines(input, "test input", |l| {
            out.push(l.to_string());
            Ok(true)
        })
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The inline parse answers exactly as the parse with the store, or
    /// not at all where an event needs its asset's declaration.
    #[test]
    fn a_body_parses_without_the_store_unless_a_declaration_is_needed() {
        use gapless_api::BodyFormat::{Json, Ndjson};
        use gapless_core::{AssetDecl, Duration};
        use gapless_store::Store;

        let dir = tempfile::tempdir().unwrap();
        let store = gapless_store::SqliteStore::open(dir.path().join("l.db")).unwrap();
        let decl = AssetDecl {
            key_span: Some(Duration::parse("PT5M").unwrap()),
            tz: jiff::tz::TimeZone::UTC,
        };
        store.declare_asset("keyed", &decl).unwrap();
        let ledger = super::Ledger::new(std::sync::Arc::new(store));
        let ok = r#"{"asset":"a","start":"2025-06-01T00:00:00Z","end":"2025-06-01T00:05:00Z"}"#;
        let keyed = r#"{"asset":"keyed","partition_key":"2025-06-01T00:05:00"}"#;
        let bodies: Vec<(gapless_api::BodyFormat, String, bool)> = vec![
            (Json, ok.to_string(), true),
            (Json, format!("[{ok},{ok}]"), true),
            (Ndjson, format!("{ok}\n\n{ok}\n"), true),
            (Ndjson, format!("{ok}\n{{\"asset\":\"a\"}}\n"), true),
            (Json, format!("{ok}\n{ok}"), true),
            (Json, "[1, ".to_string(), true),
            (Json, "\u{0}".to_string(), true),
            (Json, keyed.to_string(), false),
            (Ndjson, format!("{ok}\n{keyed}"), false),
        ];
        for (format, body, alone) in bodies {
            let with_store = ledger.parse_body(format, body.as_bytes());
            match super::Ledger::parse_body_without_store(format, body.as_bytes()) {
                None => assert!(!alone, "{body}: needed the store"),
                Some(inline) => {
                    assert!(alone, "{body}: parsed without its declaration");
                    match (inline, with_store) {
                        (Ok(a), Ok(b)) => assert_eq!(a.events(), b.events(), "{body}"),
                        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{body}"),
                        (a, b) => panic!("{body}: {a:?} against {b:?}"),
                    }
                }
            }
        }
        let keyed = ledger.parse_body(Json, keyed.as_bytes()).unwrap();
        assert_eq!(keyed.len(), 1);
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
        read_lines(&b"a\nb\nc\n"[..], "x", |_| {
            seen += 1;
            Ok(seen < 2)
        })
        .unwrap();
        assert_eq!(seen, 2);
    }
}
