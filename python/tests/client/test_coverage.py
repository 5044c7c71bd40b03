"""gapless.coverage: examples, errors, and properties against a painted
timeline (brute force) and against a real server for random inputs."""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gapless
from gapless import Interval, coverage

UTC = timezone.utc
BASE = datetime(2025, 6, 14, tzinfo=UTC)


def m(n: int) -> datetime:
    return BASE + timedelta(minutes=n)


def test_latest_wins():
    events = [(m(0), m(60)), (m(10), m(20), "retracted"), (m(15), m(18))]
    c = coverage(events, m(0), m(60))
    assert isinstance(c, gapless.Coverage)
    assert c.missing == [Interval(m(10), m(15)), Interval(m(18), m(20))] and c.missing_count == 2
    assert (c.covered, c.covered_ratio) == (False, 53 / 60)
    # Order is what decides: the same intervals, the retraction last.
    c = coverage([events[0], events[2], events[1]], m(0), m(60))
    assert c.missing == [Interval(m(10), m(20))]


def test_half_open_union_and_clipping():
    c = coverage([(m(0), m(5)), (m(5), m(10)), (m(8), m(20)), (m(-30), m(-10))], m(-5), m(30))
    assert c.missing == [Interval(m(-5), m(0)), Interval(m(20), m(30))]
    assert (c.start, c.end) == (m(-5), m(30))
    assert coverage([(m(0), m(10))], m(0), m(10)).covered
    assert coverage([], m(0), m(10)).missing == [Interval(m(0), m(10))]
    assert coverage([(m(0), m(10))], m(0), m(10)).covered_ratio == 1.0


def test_inputs_in_every_form():
    ev = gapless.Event(
        id="a",
        seq=1,
        start=m(0),
        end=m(10),
        kind="retracted",
        extra=None,
        produced_at=None,
        received_at=m(0),
    )
    c = coverage(
        [("2025-06-14T00:00Z", "2025-06-14T02:00:00+01:00"), Interval(m(0), m(30)), ev],
        "2025-06-14",
        "2025-06-14T00:30:00.000000Z",
    )
    assert c.missing == [Interval(m(0), m(10))]
    # Naive text is UTC, or in tz; naive datetimes need tz.
    assert coverage(
        [("2025-06-14T02:00", "2025-06-14T03:00")], m(0), m(60), tz="Europe/Berlin"
    ).covered
    with pytest.raises(ValueError, match="interval 1: start: naive datetime"):
        coverage([(datetime(2025, 6, 14), m(1))], m(0), m(1))
    assert coverage(
        [(datetime(2025, 6, 14, 2), datetime(2025, 6, 14, 3))], m(0), m(60), tz="Europe/Berlin"
    ).covered


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="interval 2: reversed interval"):
        coverage([(m(0), m(1)), (m(2), m(1))], m(0), m(5))
    with pytest.raises(ValueError, match="interval 1: empty interval"):
        coverage([(m(1), m(1))], m(0), m(5))
    with pytest.raises(ValueError, match="kind 'maybe'"):
        coverage([(m(0), m(1), "maybe")], m(0), m(5))
    with pytest.raises(ValueError, match="is not before end"):
        coverage([], m(5), m(5))
    with pytest.raises(ValueError, match="not an instant"):
        coverage([("yesterday", m(1))], m(0), m(5))
    with pytest.raises(TypeError):
        coverage([42], m(0), m(5))


def intervals(grid: int):
    """Events on an integer grid: (start, end, kind) with start < end."""
    pair = st.tuples(st.integers(0, grid), st.integers(0, grid)).filter(lambda p: p[0] != p[1])
    kind = st.sampled_from(["landed", "landed", "retracted"])
    return st.lists(st.tuples(pair, kind).map(lambda x: (min(x[0]), max(x[0]), x[1])), max_size=25)


def painted(events, lo: int, hi: int):
    """Brute force: paint each unit cell with the kind of the latest event over it."""
    cells = [False] * (hi - lo)
    for s, e, kind in events:
        for x in range(max(s, lo), min(e, hi)):
            cells[x - lo] = kind == "landed"
    gaps = []
    for covered, run in itertools.groupby(enumerate(cells, lo), key=lambda c: c[1]):
        run = list(run)
        if not covered:
            gaps.append((run[0][0], run[-1][0] + 1))
    return gaps, sum(cells) / (hi - lo)


@settings(max_examples=400, deadline=None)
@given(events=intervals(40), lo=st.integers(-5, 45), length=st.integers(1, 50))
def test_matches_a_painted_timeline(events, lo, length):
    hi = lo + length
    gaps, ratio = painted(events, lo, hi)
    c = coverage([(m(s), m(e), k) for s, e, k in events], m(lo), m(hi))
    assert [(g.start, g.end) for g in c.missing] == [(m(s), m(e)) for s, e in gaps]
    assert c.covered_ratio == ratio
    assert c.covered == (not gaps) and c.missing_count == len(gaps)


SECOND = 1_000_000


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    events=st.lists(
        st.tuples(st.integers(0, 60 * SECOND), st.integers(1, 20 * SECOND), st.booleans()),
        min_size=0,
        max_size=15,
    ),
    lo=st.integers(-5 * SECOND, 70 * SECOND),
    length=st.integers(1, 80 * SECOND),
)
def test_matches_the_server(shared_server, events, lo, length):
    """Random events at microsecond precision through a real server: its
    check answer and gapless.coverage agree exactly."""
    us = lambda n: BASE + timedelta(microseconds=n)  # noqa: E731
    asset = f"a-{uuid.uuid4().hex[:10]}"
    batch = [
        {
            "asset": asset,
            "id": f"e{i}",
            "start": us(s),
            "end": us(s + n),
            "kind": "retracted" if r else "landed",
        }
        for i, (s, n, r) in enumerate(events)
    ]
    client = gapless.Client(shared_server.url)
    client.declare(asset)
    if batch:
        client.record_many(batch)
    server = client.check(asset, us(lo), us(lo + length))
    local = coverage([(b["start"], b["end"], b["kind"]) for b in batch], us(lo), us(lo + length))
    assert (local.start, local.end) == (server.start, server.end)
    assert local.missing == server.missing
    assert local.covered_ratio == server.covered_ratio
    assert (local.covered, local.missing_count) == (server.covered, server.missing_count)
