"""The client reads instants and durations as the server does (SPEC §1-2, §8).

An event has no ``tz`` field, so ``record``/``record_many`` with ``tz``
resolve text instants before sending; the server would read the same text
as UTC. Whatever the client resolves must therefore be what the server
itself reads from that text with ``?tz=``, and what the server refuses the
client refuses too, or a form only the server reads is stored at the wrong
instant without an error. Durations the client reads itself (``wait``'s
``timeout``) and the Airflow provider's (partition keys) are read with the
same grammar as the server's.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime, timezone

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import gapless
from gapless import _api, _time

UTC = timezone.utc
TZ = "Europe/Berlin"
#: The last instant (SPEC §2): every recorded interval ends here.
LAST = datetime(9999, 12, 30, 22, tzinfo=UTC)


def test_a_comma_decimal_is_read_in_the_zone(client):
    """The comma decimal of ISO 8601, which the server reads: in Berlin
    10:00:00,5 is 08:00:00.5 UTC, not 10:00:00.5 UTC."""
    assert _api._event_instant("2025-06-14T10:00:00,5", "start", TZ) == "2025-06-14T08:00:00.5Z"
    client.record("orders", "2025-06-14T10:00:00,5", "2025-06-14T12:00:00Z", id="a", tz=TZ)
    client.record_many(
        [{"asset": "orders", "id": "b", "start": "2025-06-14T11:00:00,25", "end": LAST}], tz=TZ
    )
    assert [e.start for e in client.events("orders")] == [
        datetime(2025, 6, 14, 8, 0, 0, 500000, tzinfo=UTC),
        datetime(2025, 6, 14, 9, 0, 0, 250000, tzinfo=UTC),
    ]


def test_text_neither_reads_is_refused_in_one_line(client):
    with pytest.raises(ValueError, match=r"^start: 'yesterday' is not an instant \(") as e:
        client.record("orders", "yesterday", LAST, tz=TZ)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match=r"^event 2: end: '2025-06-14T10:00:00,' is not an inst"):
        client.record_many(
            [
                {"asset": "orders", "start": "2025-06-14", "end": LAST},
                {"asset": "orders", "start": "2025-06-14", "end": "2025-06-14T10:00:00,"},
            ],
            tz=TZ,
        )
    with pytest.raises(ValueError, match="not an instant"):
        _time.to_datetime("20250614T1000", "start", TZ)
    assert list(client.assets()) == []


# Days on which Berlin's clocks change, where a naive time may fall in a gap
# (02:30 on the last Sunday of March) or a fold (02:30 in October).
DST_DAYS = [date(2025, 3, 30), date(2025, 10, 26), date(1980, 4, 6), date(2024, 10, 27)]


@st.composite
def instant_texts(draw: st.DrawFn) -> str:
    """Text in the forms of SPEC §1-2 and near them: a bare date, a date-time
    with `T`, `t`, a space or Dagster's `-`, seconds optional, a fraction of
    one to nine digits after `.` or `,`, an offset or none, ISO 8601's basic
    format, space around; every date from year 1 to 9999."""
    d = draw(st.one_of(st.dates(date(1, 1, 1), date(9999, 12, 31)), st.sampled_from(DST_DAYS)))
    ymd = f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
    form = draw(st.sampled_from(["date", "date-time", "date-time", "date-time", "basic"]))
    if form == "date":
        text = ymd
    else:
        hms = f"{draw(st.integers(0, 23)):02d}:{draw(st.integers(0, 59)):02d}"
        if draw(st.booleans()):
            hms += f":{draw(st.integers(0, 59)):02d}"
            if draw(st.booleans()):
                digits = draw(st.text("0123456789", min_size=1, max_size=9))
                hms += draw(st.sampled_from(".,")) + digits
        sign = draw(st.sampled_from("+-"))
        hh, mm = f"{draw(st.integers(0, 24)):02d}", f"{draw(st.integers(0, 60)):02d}"
        offset = draw(
            st.sampled_from(["", "", "", "Z", "z", sign + hh, sign + hh + mm, f"{sign}{hh}:{mm}"])
        )
        if form == "basic":
            text = f"{ymd.replace('-', '')}T{hms.replace(':', '')}{offset}"
        else:
            text = ymd + draw(st.sampled_from(["T", "t", " ", "-"])) + hms + offset
    return draw(st.sampled_from(["", " "])) + text + draw(st.sampled_from(["", " ", "\n"]))


@settings(max_examples=150, deadline=None)
@given(text=instant_texts())
@example(text="2025-06-14T10:00:00,5")  # comma decimal
@example(text="2025-06-14T10:00:00.5")  # dot decimal
@example(text="20250614T100000")  # basic format
@example(text="20250614T100000,5Z")
@example(text="2025-06-14")  # date-only
@example(text="2025-06-14T10:00")  # naive date-time
@example(text="2025-06-14 10:00:00")
@example(text="2025-06-14-10:00")  # Dagster's hourly keys
@example(text="2025-03-30T02:30:00")  # in Berlin's DST gap
@example(text="2025-10-26T02:30:00")  # in Berlin's DST fold
@example(text="2025-06-14T10:00:00.1234560")
@example(text="2025-06-14T10:00:00.1234567")
@example(text="2025-06-14T10:00:00 Z")
@example(text="2025-06-14T10:00:00+02")
@example(text="2025-06-14T10:00:00+0200")
@example(text="2025-06-14T10:00:00+24:00")
@example(text="0001-01-01")  # before the first instant in Berlin
@example(text="9999-12-30")
@example(text="9999-12-31")  # after the last instant
def test_text_with_tz_is_stored_as_the_server_reads_it(shared_server, text):
    """What a record with tz stores is the instant the server reads from the
    same text with ?tz= (asked of the server: a frontier's origin); text the
    server refuses the client refuses."""
    client = gapless.Client(shared_server.url)
    asset = f"a-{uuid.uuid4().hex[:10]}"
    client.declare(asset)
    try:
        server = client.frontier(asset, text, tz=TZ).origin
    except gapless.BadInput as e:
        assert e.message.startswith("origin: invalid instant")
        with pytest.raises(ValueError, match=r"^event 1: start: .* is not an? (instant|date)"):
            client.record_many([{"asset": asset, "start": text, "end": LAST}], tz=TZ)
        with pytest.raises(ValueError, match=r"^start: .* is not an? (instant|date)"):
            _time.to_datetime(text, "start", TZ)
        return
    assert _time.to_datetime(text, "start", TZ) == server
    if server < LAST:
        client.record_many([{"asset": asset, "start": text, "end": LAST}], tz=TZ)
        assert [e.start for e in client.events(asset)] == [server]


@st.composite
def duration_texts(draw: st.DrawFn) -> str:
    """Text in the duration forms of SPEC §2 and near them: ISO 8601 with
    its designators in order or not, short forms with every unit word the
    server knows (and some it does not) in order or not, numbers with
    fractions after `.` or `,`, signs, space, case."""

    def number() -> str:
        n = str(draw(st.one_of(st.integers(0, 100), st.integers(0, 4_000_000))))
        if draw(st.integers(0, 3)) == 0:
            n += draw(st.sampled_from(".,")) + draw(st.text("0123456789", min_size=1, max_size=8))
        return n

    def units(pool: list[str], rank: dict[str, int], min_size: int) -> list[str]:
        """Units from the pool, mostly from the largest to the smallest."""
        chosen = draw(st.lists(st.sampled_from(pool), min_size=min_size, max_size=3))
        return chosen if draw(st.integers(0, 4)) == 0 else sorted(chosen, key=rank.__getitem__)

    if draw(st.booleans()):
        ymwd = units(list("YMWD"), {"Y": 0, "M": 1, "W": 2, "D": 3}, 0)
        hms = units(list("HMS"), {"H": 0, "M": 1, "S": 2}, 0)
        text = "P" + "".join(number() + d for d in ymwd)
        if hms or draw(st.integers(0, 9)) == 0:
            text += "T" + "".join(number() + d for d in hms)
    else:
        words = [*_time._WORDS, "x", "mn", "Hours", "MO", "Min"]
        # Largest first; a word the server does not know anywhere.
        rank = {w: -_time._RANK.get(_time._WORDS.get(w.lower(), ""), 0) for w in words}
        space = st.sampled_from(["", "", " "])
        text = "".join(number() + draw(space) + w + draw(space) for w in units(words, rank, 1))
    text = draw(st.sampled_from(["", "", "", "+", "-", " "])) + text
    return draw(st.sampled_from([str, str, str, str.upper, str.lower]))(text)


@settings(max_examples=150, deadline=None)
@given(text=duration_texts())
@example(text="5M")  # a short form's unit in any case: 5 minutes
@example(text="1h 30m")
@example(text="2 days")
@example(text="30m1h")  # units out of order
@example(text="1.5h30m")  # a fraction before the last component
@example(text="PT1,5S")
@example(text="P1.5D")
@example(text="PT0.0000001S")  # finer than a microsecond
@example(text="10000y")  # longer than 9999 years
@example(text="P1M")  # not a fixed length
def test_durations_are_read_as_the_server_reads_them(shared_server, text):
    """A duration the server reads (asked of it: an asset's key span) is the
    one gapless._time.duration reads, and seconds() gives its length when it
    is fixed; text the server refuses both refuse (but for zero, which
    seconds() takes: no wait)."""
    client = gapless.Client(shared_server.url)
    try:
        server = _time.duration(client.declare("spans", key_span=text).key_span, "key_span")
    except gapless.BadInput as e:
        assert e.message.startswith("key span: invalid duration")
        with pytest.raises(ValueError, match=r"^x: .* is not a (positive )?duration"):
            _time.duration(text, "x")
        try:
            zero = _time.duration(text, "x", allow_zero=True) == _time.Duration()
        except ValueError:
            zero = False
        if zero:
            assert _time.seconds(text, "x") == 0
        else:
            with pytest.raises(ValueError, match=r"^x: .* is not a fixed duration \("):
                _time.seconds(text, "x")
        return
    assert _time.duration(text, "x") == server
    if server.fixed is None:
        with pytest.raises(ValueError, match=r"^x: .* is not a fixed duration \("):
            _time.seconds(text, "x")
    else:
        assert _time.seconds(text, "x") == server.fixed.total_seconds()
