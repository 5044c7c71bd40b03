//! The chunked storage of an [`IntervalSet`](super::IntervalSet)'s runs:
//! sorted chunks of a few hundred runs, searched through their last ends.

use super::span;
use crate::{Instant, Interval};

/// Sorted, disjoint, non-adjacent runs, stored in chunks so that an edit in
/// the middle moves at most a chunk, not every run after it.
///
/// Invariants: no chunk is empty; `ends[c]` is the end of the last run of
/// chunk `c` (the key the chunk search uses); `len` counts all runs; the
/// chunks in order are sorted, disjoint and non-adjacent as a whole.
#[derive(Debug, Clone, Default)]
pub(super) struct Runs {
    chunks: Vec<Vec<Interval>>,
    ends: Vec<Instant>,
    len: usize,
}

/// The capacity a set's first chunk starts with; it grows as a `Vec` does.
const FIRST_CHUNK: usize = 4;

/// A position in [`Runs`]: chunk, then index in it; always a run, or
/// `(chunks.len(), 0)` for the end, so positions compare with `==`.
pub(super) type Pos = (usize, usize);

impl Runs {
    /// How many runs there are.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// `runs` (already sorted, disjoint, non-adjacent) in chunks.
    pub(super) fn from_vec(runs: Vec<Interval>, chunk: usize) -> Runs {
        let len = runs.len();
        let chunks: Vec<Vec<Interval>> = if len == 0 {
            Vec::new()
        } else if len <= 2 * chunk {
            vec![runs] // no copy
        } else {
            runs.chunks(chunk).map(<[Interval]>::to_vec).collect()
        };
        let ends = chunks.iter().map(|c| c[c.len() - 1].end()).collect();
        Runs { chunks, ends, len }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = Interval> + '_ {
        self.chunks.iter().flatten().copied()
    }

    pub(super) fn first(&self) -> Option<Interval> {
        self.chunks.first().map(|c| c[0])
    }

    pub(super) fn last(&self) -> Option<Interval> {
        self.chunks.last().map(|c| c[c.len() - 1])
    }

    /// The first run ending after `t`, or at `t` too when `touching`.
    pub(super) fn seek(&self, t: Instant, touching: bool) -> Pos {
        let before = |end: Instant| if touching { end < t } else { end <= t };
        let c = self.ends.partition_point(|&e| before(e));
        // `ends[c]` is not before `t`, so the search stops inside chunk `c`.
        let i = self
            .chunks
            .get(c)
            .map_or(0, |ch| ch.partition_point(|r| before(r.end())));
        (c, i)
    }

    pub(super) fn get(&self, (c, i): Pos) -> Option<Interval> {
        self.chunks.get(c).and_then(|ch| ch.get(i)).copied()
    }

    pub(super) fn next_pos(&self, (c, i): Pos) -> Pos {
        if i + 1 < self.chunks[c].len() {
            (c, i + 1)
        } else {
            (c + 1, 0)
        }
    }

    /// How many runs an insert at `p` counts as moving: those after it in
    /// its chunk when that is the last chunk, else all of them (an edit
    /// there is cheap too, but for a bulk load the buffer is cheaper).
    pub(super) fn tail_from(&self, (c, i): Pos) -> usize {
        if c + 1 >= self.chunks.len() {
            self.chunks.get(c).map_or(0, |ch| ch.len() - i)
        } else {
            self.len
        }
    }

    pub(super) fn iter_from(&self, (c, i): Pos) -> impl Iterator<Item = Interval> + '_ {
        let head: &[Interval] = self.chunks.get(c).map_or(&[], |ch| &ch[i..]);
        let rest: &[Vec<Interval>] = self.chunks.get(c + 1..).unwrap_or(&[]);
        head.iter().chain(rest.iter().flatten()).copied()
    }

    /// Appends a run that starts after the last run ends.
    fn push(&mut self, iv: Interval, chunk: usize) {
        match self.chunks.last_mut() {
            Some(ch) if ch.len() < chunk => {
                ch.push(iv);
                *self.ends.last_mut().expect("one end per chunk") = iv.end();
            }
            _ => {
                // A set's first chunk starts small: most sets (an asset's
                // coverage near a window, a group's events on one asset)
                // hold a few runs, and a chunk's full capacity for each would
                // cost more in allocating and freeing than all their work.
                // Later chunks (a bulk load) are full at once.
                let first = if self.chunks.is_empty() {
                    FIRST_CHUNK
                } else {
                    chunk
                };
                let mut ch = Vec::with_capacity(first.min(chunk));
                ch.push(iv);
                self.chunks.push(ch);
                self.ends.push(iv.end());
            }
        }
        self.len += 1;
    }

    /// Applies `iv` when it starts at or after the last run's start (the
    /// streaming producer's case): appended, or merged into the last run
    /// when they overlap or touch. `false`, untouched, otherwise.
    #[inline]
    pub(super) fn try_append(&mut self, iv: Interval, chunk: usize) -> bool {
        if let Some(ch) = self.chunks.last_mut() {
            let last = ch.last_mut().expect("chunks are never empty");
            if iv.start() < last.start() {
                return false;
            }
            if iv.start() <= last.end() {
                if iv.end() > last.end() {
                    *last = span(last.start(), iv.end());
                    *self.ends.last_mut().expect("one end per chunk") = iv.end();
                }
                return true;
            }
        }
        self.push(iv, chunk);
        true
    }

    /// Replaces the runs in `[a, b)` by `with`, which must fit, sorted,
    /// between the runs before `a` and from `b` on.
    pub(super) fn splice(&mut self, a: Pos, b: Pos, with: &[Interval], chunk: usize) {
        let ((ca, ia), (cb, ib)) = (a, b);
        if ca == self.chunks.len() {
            for &iv in with {
                self.push(iv, chunk);
            }
            return;
        }
        let removed;
        if ca == cb {
            removed = ib - ia;
            self.chunks[ca].splice(ia..ib, with.iter().copied());
        } else {
            removed = self.chunks[ca].len() - ia
                + self.chunks[ca + 1..cb].iter().map(Vec::len).sum::<usize>()
                + ib;
            self.chunks[ca].truncate(ia);
            self.chunks[ca].extend_from_slice(with);
            if cb < self.chunks.len() {
                self.chunks[cb].drain(..ib);
            }
            self.chunks.drain(ca + 1..cb);
            self.ends.drain(ca + 1..cb);
            // The former chunk `cb`, now right after `ca`, lost its head.
            self.repair(ca + 1, chunk);
        }
        self.len = self.len - removed + with.len();
        self.repair(ca, chunk);
        // Checked in debug builds on small sets only, to keep edits O(chunk).
        debug_assert!(self.len > 4096 || self.invariants_hold(), "{self:?}");
    }

    /// The invariants of the type (for debug assertions).
    fn invariants_hold(&self) -> bool {
        let sizes_ok = self.chunks.len() == self.ends.len()
            && self.chunks.iter().all(|c| !c.is_empty())
            && self.chunks.iter().map(Vec::len).sum::<usize>() == self.len;
        let ends_ok = self
            .chunks
            .iter()
            .zip(&self.ends)
            .all(|(c, &e)| c[c.len() - 1].end() == e);
        let runs: Vec<Interval> = self.iter().collect();
        sizes_ok && ends_ok && runs.windows(2).all(|w| w[0].end() < w[1].start())
    }

    /// Restores the invariants of chunk `c` after an edit: drops it when
    /// empty, splits it past twice the chunk size, absorbs its successor when
    /// both are small (so removals cannot leave a trail of tiny chunks), and
    /// refreshes its end.
    fn repair(&mut self, c: usize, chunk: usize) {
        let Some(n) = self.chunks.get(c).map(Vec::len) else {
            return;
        };
        if n == 0 {
            self.chunks.remove(c);
            self.ends.remove(c);
            return;
        }
        if n > 2 * chunk {
            let tail = self.chunks[c].split_off(n / 2);
            self.ends.insert(c + 1, tail[tail.len() - 1].end());
            self.chunks.insert(c + 1, tail);
        } else if n <= chunk / 4
            && self
                .chunks
                .get(c + 1)
                .is_some_and(|next| n + next.len() <= chunk)
        {
            let next = self.chunks.remove(c + 1);
            self.ends.remove(c + 1);
            self.chunks[c].extend(next);
        }
        let ch = &self.chunks[c];
        self.ends[c] = ch[ch.len() - 1].end();
    }
}
