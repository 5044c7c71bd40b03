"""Property tests (hypothesis):

- coverage_from_asset_events against a brute-force painted timeline (one
  cell a minute, each event painting its cells in order: latest wins,
  half-open), with events whose interval comes from interval extras, ISO
  8601 interval keys (start/end, start/duration, duration/end, `--`, an
  abbreviated end) or discrete keys with a span, instants in several text
  forms, given as mappings and as objects; and the same events recorded
  in the real gapless server, which must answer the same coverage.
- The grid of the partition windows (gapless_airflow._time.next_boundary)
  against the server's `windows`, in zones with DST changes, half-hour
  offsets and midnight gaps.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gapless_airflow import _time as t
from gapless_airflow._window import partition_window
from gapless_airflow.asset_events import coverage_from_asset_events

BASE = datetime(2025, 6, 14, 22, 0, tzinfo=timezone.utc)  # the day changes at 24:00Z, 2 h in
SPAN = 300  # minutes of the timeline the events start in
MINUTE = timedelta(minutes=1)
_asset_numbers = itertools.count()


def at(m: int) -> datetime:
    return BASE + m * MINUTE


IST = timezone(timedelta(hours=5, minutes=30))


def instant_text(draw, m: int, naive_in=timezone.utc) -> str:
    """Minute `m` as text: with Z, naive (read in `naive_in`: UTC, or the
    offset of an interval's start, which a naive end takes), or with
    another offset."""
    u = at(m)
    form = draw(st.sampled_from(["z", "naive", "offset", "seconds"]))
    if form == "naive":
        return u.astimezone(naive_in).strftime("%Y-%m-%dT%H:%M:%S")
    if form == "z":
        return u.strftime("%Y-%m-%dT%H:%MZ")
    if form == "seconds":
        return u.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    local = u.astimezone(IST)
    return local.strftime("%Y-%m-%dT%H:%M:%S+05:30")


@st.composite
def asset_events(draw):
    span = draw(st.integers(1, 90))  # the discrete keys' span, minutes
    events, painted = [], []
    for n in range(draw(st.integers(0, 14))):
        s = draw(st.integers(0, SPAN))
        form = draw(st.sampled_from(["extra", "start/end", "start/dur", "dur/end", "dashes", "abbrev", "discrete"]))
        e = s + span if form == "discrete" else draw(st.integers(s + 1, s + 120))
        kind = draw(st.sampled_from(["landed", "landed", "retracted"]))
        extra: dict = {"n": n}
        key = None
        if form == "extra":
            extra |= {"interval_start": instant_text(draw, s), "interval_end": instant_text(draw, e)}
        elif form == "start/end":
            start = instant_text(draw, s)
            key = f"{start}/{instant_text(draw, e, IST if start.endswith('+05:30') else timezone.utc)}"
        elif form == "start/dur":
            key = f"{instant_text(draw, s)}/PT{e - s}M"
        elif form == "dur/end":
            key = f"PT{(e - s) // 60}H{(e - s) % 60}M/{instant_text(draw, e)}"
        elif form == "dashes":
            key = f"{at(s).strftime('%Y-%m-%dT%H:%M:%SZ')}--{at(e).strftime('%Y-%m-%dT%H:%M:%SZ')}"
        elif form == "abbrev":
            # The end abbreviated from the start: only its time when on the same day.
            same_day = at(s).date() == at(e).date()
            end = at(e).strftime("%H:%M") if same_day else at(e).strftime("%m-%dT%H:%M")
            key = f"{at(s).strftime('%Y-%m-%dT%H:%MZ')}/{end}"
        else:
            key = at(s).strftime("%Y-%m-%dT%H:%M:%S")
        if kind == "retracted":
            extra["interval_kind"] = "retracted"
        event = {"id": n + 1, "extra": extra, "partition_key": key}
        if draw(st.booleans()):
            event = SimpleNamespace(**event)  # as inlet_events' AssetEventResult
        events.append(event)
        painted.append((s, e, kind))
    # Events that carry no interval say nothing.
    for n in range(draw(st.integers(0, 2))):
        events.insert(draw(st.integers(0, len(events))), {"id": 1000 + n, "extra": {"rows": 1}, "partition_key": None})
    q0 = draw(st.integers(0, SPAN + 60))
    q1 = draw(st.integers(q0 + 1, SPAN + 180))
    return span, events, painted, q0, q1


def paint(painted, q0: int, q1: int):
    cells = {}
    for s, e, kind in painted:
        for m in range(s, e):
            cells[m] = kind
    covered = [cells.get(m) == "landed" for m in range(q0, q1)]
    gaps, m = [], q0
    while m < q1:
        if not covered[m - q0]:
            g = m
            while m < q1 and not covered[m - q0]:
                m += 1
            gaps.append((at(g), at(m)))
        else:
            m += 1
    return sum(covered) / (q1 - q0), gaps


def as_gapless(event, asset: str, n: int) -> dict:
    get = (lambda k: event.get(k)) if isinstance(event, dict) else (lambda k: getattr(event, k))
    extra = dict(get("extra") or {})
    out = {"asset": asset, "id": f"e{n}", "extra": extra}
    if extra.get("interval_kind") == "retracted":
        out["kind"] = "retracted"
    if get("partition_key") is not None:
        out["partition_key"] = get("partition_key")
    return out


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(asset_events())
def test_coverage_from_asset_events_is_the_painted_timeline_and_the_servers(client, case):
    span, events, painted, q0, q1 = case
    got = coverage_from_asset_events(events, at(q0), at(q1), key_span=f"PT{span}M")
    ratio, gaps = paint(painted, q0, q1)
    assert [(g.start, g.end) for g in got.missing] == gaps
    assert got.covered_ratio == ratio
    assert got.covered == (not gaps) and got.missing_count == len(gaps)

    asset = f"prop_{next(_asset_numbers)}"
    client.declare(asset, key_span=f"PT{span}M")
    with_interval = [e for e in events if (e.get("extra") if isinstance(e, dict) else e.extra).get("rows") is None]
    if with_interval:
        client.record_many([as_gapless(e, asset, n) for n, e in enumerate(with_interval)])
    server = client.check(asset, at(q0), at(q1))
    assert server.missing == got.missing
    assert server.covered_ratio == got.covered_ratio


GRIDS = ["1m", "5m", "15m", "30m", "1h", "2h", "5h", "1d", "2d", "7d", "1w", "2w", "1mo", "3mo", "1y"]
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "America/Santiago"]


GRID_START = datetime(2024, 1, 1, tzinfo=timezone.utc)


def transitions(tz: str) -> list[int]:
    """The minutes (from GRID_START) of the zone's offset changes in 2024-2026."""
    z, out, prev = t.zone(tz), [], None
    for h in range(3 * 366 * 24):
        off = (GRID_START + timedelta(hours=h)).astimezone(z).utcoffset()
        if prev is not None and off != prev:
            out.append(h * 60)
        prev = off
    return out


NEAR = {tz: transitions(tz) for tz in ZONES}


@st.composite
def grid_case(draw):
    tz = draw(st.sampled_from(ZONES))
    if NEAR[tz] and draw(st.booleans()):
        # Near a DST change, where windows are short, long, skipped or repeated.
        minute = draw(st.sampled_from(NEAR[tz])) + draw(st.integers(-26 * 60, 26 * 60))
    else:
        minute = draw(st.integers(0, 3 * 366 * 24 * 60))
    return minute, draw(st.sampled_from(GRIDS)), tz


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(grid_case())
def test_partition_windows_are_the_servers_windows(client, case):
    minute, every, tz = case
    client.declare("grid_probe")
    u = GRID_START + minute * MINUTE + timedelta(seconds=17)
    (w,) = client.windows("grid_probe", u, u + timedelta(seconds=1), every, tz=tz).windows
    assert t.next_boundary(u, every, tz) == w.end
    assert t.window_from(w.start, every, tz) == (w.start, w.end)
    # The window's key (its start as local time) gives the window back,
    # but for a start in a DST fold, whose key names the earlier instant.
    local = w.start.astimezone(t.zone(tz))
    assume(local.replace(fold=0).utcoffset() == local.replace(fold=1).utcoffset())
    assert partition_window(w.key, every=every, tz=tz) == (w.start, w.end)
