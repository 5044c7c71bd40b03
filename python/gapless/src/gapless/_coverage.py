"""Coverage computed in this process, with the server's semantics (SPEC §1)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import Any

from ._models import Coverage, Interval
from ._time import InstantLike, TzLike, from_micros, micros, to_datetime

_KINDS = ("landed", "retracted")


def coverage(
    intervals: Iterable[Any],
    start: InstantLike,
    end: InstantLike,
    *,
    tz: TzLike | None = None,
) -> Coverage:
    """The coverage of ``[start, end)`` by ``intervals`` given in sequence
    order, as a server would answer it, for callers without one.

    Each interval is ``(start, end)`` (landed), ``(start, end, kind)``
    with ``kind`` ``"landed"`` or ``"retracted"``, or an object with
    ``start``, ``end`` and optionally ``kind`` attributes (an
    :class:`~gapless.Interval`, an :class:`~gapless.Event` from
    :meth:`Client.events`). Intervals are half-open; an instant is covered
    when the latest interval containing it is landed (so a later retracted
    interval opens a gap until a later landed one closes it; with only
    landed intervals this is their union). Instants are aware datetimes,
    or text in the SPEC's forms; naive ones are read in ``tz`` (naive
    datetimes are refused without it, naive text is then UTC). An empty or
    reversed interval is a :class:`ValueError`, as on a server.

    Unlike a server's answer, ``missing`` holds every gap (no 10,000 cut).

    >>> from gapless import coverage
    >>> c = coverage([("2025-06-01T10:00Z", "2025-06-01T10:20Z"),
    ...               ("2025-06-01T10:05Z", "2025-06-01T10:10Z", "retracted")],
    ...              "2025-06-01T10:00Z", "2025-06-01T10:30Z")
    >>> c.covered, round(c.covered_ratio, 4)
    (False, 0.5)
    >>> [(g.start.strftime("%H:%M"), g.end.strftime("%H:%M")) for g in c.missing]
    [('10:05', '10:10'), ('10:20', '10:30')]
    """
    lo = micros(to_datetime(start, "start", tz))
    hi = micros(to_datetime(end, "end", tz))
    if lo >= hi:
        raise ValueError(
            f"start {from_micros(lo).isoformat()} is not before end {from_micros(hi).isoformat()}"
        )
    # The covered part of [lo, hi) as disjoint, non-touching runs in order.
    starts: list[int] = []
    ends: list[int] = []
    for n, item in enumerate(intervals, 1):
        s, e, kind = _interval(item, n, tz)
        s, e = max(s, lo), min(e, hi)
        if s >= e:
            continue
        if kind == "landed":
            i = bisect_left(ends, s)  # the first run ending at or after s (touching merges)
            j = bisect_right(starts, e)  # the runs starting at or before e
            if i < j:
                s, e = min(s, starts[i]), max(e, ends[j - 1])
            starts[i:j] = [s]
            ends[i:j] = [e]
        else:
            i = bisect_right(ends, s)  # the first run ending after s
            j = bisect_left(starts, e)  # the runs starting before e
            if i < j:
                keep_s = [starts[i]] if starts[i] < s else []
                keep_e = [s] if starts[i] < s else []
                if ends[j - 1] > e:
                    keep_s.append(e)
                    keep_e.append(ends[j - 1])
                starts[i:j] = keep_s
                ends[i:j] = keep_e
    missing: list[Interval] = []
    at = lo
    covered_us = 0
    for s, e in zip(starts, ends, strict=True):
        if s > at:
            missing.append(Interval(from_micros(at), from_micros(s)))
        covered_us += e - s
        at = e
    if at < hi:
        missing.append(Interval(from_micros(at), from_micros(hi)))
    return Coverage(
        start=from_micros(lo),
        end=from_micros(hi),
        covered=not missing,
        # Python's int / int is the float nearest the exact quotient, as the
        # server computes it.
        covered_ratio=covered_us / (hi - lo),
        missing=missing,
        missing_count=len(missing),
    )


def _interval(item: Any, n: int, tz: TzLike | None) -> tuple[int, int, str]:
    name = f"interval {n}"
    if isinstance(item, (tuple, list)):
        if len(item) == 2:
            s, e, kind = item[0], item[1], "landed"
        elif len(item) == 3:
            s, e, kind = item
        else:
            raise ValueError(f"{name}: expected (start, end) or (start, end, kind), got {item!r}")
    elif hasattr(item, "start") and hasattr(item, "end"):
        s, e, kind = item.start, item.end, getattr(item, "kind", "landed")
    else:
        raise TypeError(f"{name}: expected a (start, end[, kind]) tuple, got {type(item).__name__}")
    if kind not in _KINDS:
        raise ValueError(f"{name}: kind {kind!r} is neither 'landed' nor 'retracted'")
    su = micros(to_datetime(s, f"{name}: start", tz))
    eu = micros(to_datetime(e, f"{name}: end", tz))
    if su >= eu:
        what = "empty" if su == eu else "reversed"
        raise ValueError(
            f"{name}: {what} interval: start {from_micros(su).isoformat()} "
            f"is not before end {from_micros(eu).isoformat()}"
        )
    return su, eu, kind
