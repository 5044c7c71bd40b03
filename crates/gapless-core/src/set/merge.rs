//! Folding the pending buffer of an [`IntervalSet`](super::IntervalSet)
//! into its runs: sort the buffer by start (an LSD radix sort while it fits
//! the cache), then one linear merge.

use super::runs::Runs;
use super::span;
use crate::Interval;

/// `runs ∪ pending` as sorted, disjoint, non-adjacent runs; sorts `pending`.
pub(super) fn merge_into(runs: &Runs, pending: &mut [Interval], chunk: usize) -> Runs {
    sort_by_start(pending);
    // Merge into one flat `Vec` (the tightest loop), then cut it in chunks.
    let mut out: Vec<Interval> = Vec::with_capacity(runs.len() + pending.len().min(1 << 20));
    let (mut a, mut b) = (runs.iter().peekable(), pending.iter().copied().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x.start() <= y.start() => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (None, None) => break,
        };
        let iv = next.expect("peeked");
        match out.last_mut() {
            // Overlapping or touching the last run: extend it.
            Some(last) if iv.start() <= last.end() => {
                if iv.end() > last.end() {
                    *last = span(last.start(), iv.end());
                }
            }
            _ => out.push(iv),
        }
    }
    Runs::from_vec(out, chunk)
}

/// Below this many intervals a comparison sort wins over radix passes.
const RADIX_MIN: usize = 512;
/// Above this many (4 MiB of intervals) the scatter of each radix pass
/// misses the cache and a comparison sort wins again (the `index` bench's
/// shuffled loads show both sides). The buffer's compactions keep most
/// sorts below it.
const RADIX_MAX: usize = 1 << 18;
/// Bits per radix pass: 2048 counters stay in L1.
const RADIX_BITS: u32 = 11;

/// Sorts by start: an LSD radix sort on `start - min` for large inputs.
///
/// Sorting the buffer is most of the cost of a large out-of-order load. The
/// keys are instants of a bounded span, often with many constant low bits
/// (whole seconds, 5-minute slots), so a radix sort that skips the constant
/// bits needs 3 to 5 linear passes where a comparison sort needs ~20 rounds
/// of comparisons per element: several times faster while the data fits the
/// cache (see [`RADIX_MAX`]).
fn sort_by_start(v: &mut [Interval]) {
    if !(RADIX_MIN..=RADIX_MAX).contains(&v.len()) {
        v.sort_unstable_by_key(|iv| iv.start());
        return;
    }
    let min = v
        .iter()
        .map(|iv| iv.start())
        .min()
        .expect("not empty")
        .as_micros();
    // Instants span less than 2^59 µs, so every key fits a u64.
    let key = |iv: &Interval| (iv.start().as_micros() - min) as u64;
    let varying = v.iter().fold(0u64, |acc, iv| acc | key(iv));
    if varying == 0 {
        return; // all starts equal
    }
    let (low, high) = (varying.trailing_zeros(), 64 - varying.leading_zeros());
    // Passes alternate between `v` and one scratch copy.
    let mut scratch = v.to_vec();
    let mut in_v = true;
    let mut shift = low;
    while shift < high {
        let digit = |iv: &Interval| ((key(iv) >> shift) & ((1 << RADIX_BITS) - 1)) as usize;
        if in_v {
            radix_pass(v, &mut scratch, digit);
        } else {
            radix_pass(&scratch, v, digit);
        }
        in_v = !in_v;
        shift += RADIX_BITS;
    }
    if !in_v {
        v.copy_from_slice(&scratch);
    }
}

/// One stable counting-sort pass of `from` into `to` by `digit`.
fn radix_pass(from: &[Interval], to: &mut [Interval], digit: impl Fn(&Interval) -> usize) {
    let mut offsets = [0usize; 1 << RADIX_BITS];
    for iv in from {
        offsets[digit(iv)] += 1;
    }
    let mut sum = 0;
    for slot in offsets.iter_mut() {
        let n = *slot;
        *slot = sum;
        sum += n;
    }
    for iv in from {
        let d = digit(iv);
        to[offsets[d]] = *iv;
        offsets[d] += 1;
    }
}
