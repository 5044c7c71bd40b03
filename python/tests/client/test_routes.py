"""Every /v1 route through gapless.Client, against a real server, on both backends."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from conftest import run

import gapless
from gapless import Interval

UTC = timezone.utc


def at(h: int, m: int = 0, day: int = 14) -> datetime:
    return datetime(2025, 6, day, h, m, tzinfo=UTC)


def test_record_and_check(client):
    assert client.health() == {"status": "ok"}
    r = client.record("orders", at(10), at(10, 5), id="b1", extra={"rows": 3})
    assert (r.accepted, r.duplicates) == (1, 0)
    # The same event again is a duplicate.
    assert client.record("orders", at(10), at(10, 5), id="b1", extra={"rows": 3}).duplicates == 1
    c = client.check("orders", at(10), at(10, 15))
    assert isinstance(c, gapless.Check)
    assert (c.asset, c.covered, c.complete, c.policy) == ("orders", False, False, "full")
    assert c.start == at(10) and c.end == at(10, 15)
    assert c.covered_ratio == pytest.approx(1 / 3) and c.covered_ratio == 5 / 15
    assert c.missing == [Interval(at(10, 5), at(10, 15))] and c.missing_count == 1
    assert c.raw["missing"] == [{"start": "2025-06-14T10:05:00Z", "end": "2025-06-14T10:15:00Z"}]
    assert client.check("orders", at(10), at(10, 5)).complete


def test_policies(client):
    client.record("orders", at(10), at(10, 50), id="a")
    client.record("orders", at(10, 55), at(11), id="b")
    assert not client.check("orders", at(10), at(11)).complete
    assert client.check("orders", at(10), at(11), max_gap="10m").complete
    assert client.check("orders", at(10), at(11), max_gap=timedelta(minutes=10)).policy == "gap<10m"
    assert not client.check("orders", at(10), at(11), max_gap=300).complete
    assert client.check("orders", at(10), at(11), min_ratio=0.9).complete
    assert client.check("orders", at(10), at(11), policy="ratio>=0.95").complete is False
    with pytest.raises(gapless.BadInput):
        client.check("orders", at(10), at(11), policy="ratio>=0.9", max_gap="1m")


def test_instants_as_text_and_zones(client):
    client.record("orders", "2025-06-14T08:00:00Z", "2025-06-14T12:00:00+02:00", id="a")
    # A bare date and naive text are read in tz on the server.
    c = client.check("orders", "2025-06-14T10:00", "2025-06-14T12:00", tz="Europe/Berlin")
    assert (c.start, c.end, c.covered) == (at(8), at(10), True)
    # A naive datetime needs tz (a name or a tzinfo); an aware one is what it says.
    berlin = ZoneInfo("Europe/Berlin")
    assert client.check(
        "orders", datetime(2025, 6, 14, 10), datetime(2025, 6, 14, 12), tz=berlin
    ).covered
    aware = datetime(2025, 6, 14, 10, tzinfo=berlin)
    assert client.check("orders", aware, at(10)).start == at(8)
    with pytest.raises(
        ValueError, match=r"^start: naive datetime 2025-06-14T10:00:00 has no time zone.*tz="
    ):
        client.check("orders", datetime(2025, 6, 14, 10), at(10))
    # A naive datetime in an event is read in the call's tz.
    client.record(
        "orders", datetime(2025, 6, 14, 12), datetime(2025, 6, 14, 13), id="b", tz="Europe/Berlin"
    )
    assert client.check("orders", at(10), at(11)).covered
    # ... and so is naive text, which the server alone would read as UTC.
    client.record_many(
        [{"asset": "orders", "id": "c", "start": "2025-06-14T13:00", "end": "2025-06-14T14:00"}],
        tz="Europe/Berlin",
    )
    assert client.check("orders", at(11), at(12)).covered


def test_record_many_forms_and_atomicity(client):
    client.declare("clicks", key_span="5m")
    r = client.record_many(
        [
            {"asset": "orders", "id": "a", "start": at(0), "end": at(1)},
            {
                "asset": "orders",
                "id": "b",
                "extra": {"interval_start": at(1), "interval_end": at(2)},
            },
            {"asset": "orders", "id": "c", "partition_key": "2025-06-14T02:00:00Z/PT1H"},
            {"asset": "clicks", "id": "k", "partition_key": "2025-06-14T00:05:00"},
        ]
    )
    assert (r.accepted, r.duplicates) == (4, 0)
    assert client.check("orders", at(0), at(3)).covered
    assert client.check("clicks", at(0, 5), at(0, 10)).covered
    # A bad event fails the batch whole, naming it.
    with pytest.raises(gapless.BadInput) as e:
        client.record_many(
            [
                {"asset": "orders", "id": "d", "start": at(3), "end": at(4)},
                {"asset": "orders", "id": "e", "start": at(5), "end": at(5)},
            ]
        )
    assert e.value.detail == {"event": 2} and e.value.position == ("event", 2)
    assert e.value.message.startswith("event 2: ") and e.value.status == 400
    assert not client.check("orders", at(3), at(4)).covered
    assert client.asset("orders").events == 3


def test_retract_and_conflict(client):
    client.record("orders", at(10), at(11), id="hour")
    client.record("orders", at(10, 15), at(10, 30), id="bad", retract=True)
    c = client.check("orders", at(10), at(11))
    assert c.missing == [Interval(at(10, 15), at(10, 30))]
    with pytest.raises(gapless.Conflict) as e:
        client.record("orders", at(10), at(12), id="hour")
    assert e.value.status == 409 and "hour" in e.value.message


def test_windows(client):
    client.record("orders", at(0), at(2), id="a")
    client.record("orders", at(2, 5), at(3), id="b")
    w = client.windows("orders", at(0), at(4), "1h")
    assert (w.asset, w.every, w.tz, w.policy) == ("orders", "1h", "UTC", "full")
    assert [(x.key, x.complete) for x in w.windows] == [
        ("2025-06-14T00:00:00", True),
        ("2025-06-14T01:00:00", True),
        ("2025-06-14T02:00:00", False),
        ("2025-06-14T03:00:00", False),
    ]
    assert w.windows[2].missing == [Interval(at(2), at(2, 5))]
    assert w.windows[2].covered_ratio == 55 / 60
    inc = client.windows(
        "orders", at(0), at(4), "1h", incomplete=True, max_gap="10m", key_format="%H"
    )
    assert [x.key for x in inc.windows] == ["03"]
    day = client.windows("orders", "2025-06-14", "2025-06-15", "1d", tz="Europe/Berlin")
    assert day.tz == "Europe/Berlin"
    assert [(x.start, x.end) for x in day.windows] == [(at(22, day=13), at(22))]


def test_buckets(client):
    client.record("orders", at(0), at(2), id="a")
    client.record("orders", at(1), at(1, 30), id="b", retract=True)
    b = client.buckets("orders", at(0), at(4), buckets=4)
    assert isinstance(b, gapless.Buckets) and (b.asset, b.start, b.end) == ("orders", at(0), at(4))
    hour = 3_600_000_000
    assert [(x.start, x.covered_us, x.retracted_us, x.missing_us) for x in b.buckets] == [
        (at(0), hour, 0, 0),
        (at(1), hour // 2, hour // 2, 0),
        (at(2), 0, 0, hour),
        (at(3), 0, 0, hour),
    ]
    assert (b.covered_us, b.retracted_us, b.missing_us) == (3 * hour // 2, hour // 2, 2 * hour)
    assert len(client.buckets("orders", at(0), at(4)).buckets) == 100
    with pytest.raises(gapless.BadInput, match="give 1 to 10000"):
        client.buckets("orders", at(0), at(4), buckets=0)
    with pytest.raises(gapless.NotFound, match="ordres"):
        client.buckets("ordres", at(0), at(4))


def test_rule_windows(client):
    client.record("orders", at(0), at(1, 30), id="a")
    client.set_rule("orders_hourly", assets=["orders"], every="1h", from_=at(0))
    w = client.rule_windows("orders_hourly", at(0), at(3))
    assert isinstance(w, gapless.RuleWindows)
    assert (w.rule, w.assets, w.every, w.policy) == ("orders_hourly", ["orders"], "1h", "full")
    assert [(x.key, x.complete, x.covered_ratio) for x in w.windows] == [
        ("2025-06-14T00:00:00", True, 1.0),
        ("2025-06-14T01:00:00", False, 0.5),
        ("2025-06-14T02:00:00", False, 0.0),
    ]
    with pytest.raises(gapless.NotFound, match="orders_hourly"):
        client.rule_windows("orders_hourli", at(0), at(3))


def test_segments_every_page(client):
    client.record("orders", at(0), at(1), id="a")
    client.record("orders", at(0, 30), at(2), id="b")
    client.record("orders", at(3), at(4), id="c", retract=True)
    whole = list(client.segments("orders", at(0), at(4)))
    assert [(s.start, s.end, s.kind, s.event.id) for s in whole] == [
        (at(0), at(0, 30), "landed", "a"),
        (at(0, 30), at(2), "landed", "b"),
        (at(3), at(4), "retracted", "c"),
    ]
    # One segment a page, and pages that cut one: joined again.
    assert list(client.segments("orders", at(0), at(4), limit=1)) == whole
    page = client.segments_page("orders", at(0), at(4), limit=1)
    assert len(page.segments) == 1 and page.next == "2025-06-14T00:30:00Z"
    rest = client.segments_page("orders", at(0), at(4), limit=10, after=page.next)
    assert rest.next is None and rest.segments[0].event == gapless.EventRef("b", 2)


def test_events_every_page(client):
    client.record_many(
        [{"asset": "orders", "id": f"e{i}", "start": at(i), "end": at(i, 30)} for i in range(7)]
    )
    client.record("orders", at(1), at(2), id="r", retract=True, produced_at=at(3))
    events = list(client.events("orders", limit=3))
    assert [e.id for e in events] == [f"e{i}" for i in range(7)] + ["r"]
    assert [e.seq for e in events] == list(range(1, 9))
    last = events[-1]
    assert (last.kind, last.produced_at, last.extra) == ("retracted", at(3), None)
    assert last.received_at.tzinfo is not None
    assert [e.id for e in client.events("orders", at(1), at(3))] == ["e1", "e2", "r"]
    assert [e.id for e in client.events("orders", kind="retracted")] == ["r"]
    page = client.events_page("orders", limit=5)
    assert len(page.events) == 5 and page.next is not None
    page2 = client.events_page("orders", limit=5, after=page.next)
    assert [e.id for e in page2.events] == ["e5", "e6", "r"] and page2.next is None
    # The events feed gapless.coverage as they are.
    local = gapless.coverage(client.events("orders"), at(0), at(7))
    server = client.check("orders", at(0), at(7))
    assert (local.missing, local.covered_ratio) == (server.missing, server.covered_ratio)


def test_frontier_assets_declare(client):
    client.record("orders", at(0), at(5), id="a")
    f = client.frontier("orders", at(1))
    assert (f.asset, f.origin, f.frontier) == ("orders", at(1), at(5))
    assert client.frontier("orders").origin == at(0)
    d = client.declare("clicks", key_span="5m", tz="Europe/Berlin")
    assert (d.asset, d.key_span, d.tz) == ("clicks", "PT5M", "Europe/Berlin")
    assert client.declare("clicks", key_span="none").key_span is None
    assert client.declare("clicks", key_span=timedelta(minutes=15)).key_span == "PT15M"
    names = [a.asset for a in client.assets()]
    assert names == ["clicks", "orders"]
    o = client.asset("orders")
    assert (o.events, o.first_covered, o.last_covered, o.key_span, o.tz) == (
        1,
        at(0),
        at(5),
        None,
        None,
    )
    # Stored a moment ago; the declared asset has no event yet.
    assert timedelta(0) <= datetime.now(UTC) - o.last_received < timedelta(minutes=1)
    assert client.asset("clicks").last_received is None
    assert client.asset("clicks").tz == "Europe/Berlin"


def test_asset_names_are_percent_encoded(client):
    name = "s3://lake/orders?x=1#frag %/é"
    client.record(name, at(0), at(1), id="a")
    assert client.check(name, at(0), at(1)).asset == name
    assert client.asset(name).events == 1
    assert [a.asset for a in client.assets()] == [name]
    assert [e.id for e in client.events(name)] == ["a"]


def test_check_all(client):
    client.record("orders", at(0), at(2), id="a")
    client.record("payments", at(1), at(3), id="b")
    j = client.check_all(["orders", "payments"], at(0), at(3))
    assert j.assets == ["orders", "payments"]
    assert j.missing == [Interval(at(0), at(1)), Interval(at(2), at(3))]
    assert j.covered_ratio == 1 / 3
    with pytest.raises(gapless.NotFound, match="ordres"):
        client.check_all(["ordres"], at(0), at(3))


def test_unknown_asset_names_the_nearest(client):
    client.record("orders", at(0), at(1), id="a")
    with pytest.raises(gapless.NotFound) as e:
        client.check("ordres", at(0), at(1))
    assert e.value.status == 404 and 'did you mean "orders"' in e.value.message
    assert e.value.kind == "not_found" and isinstance(e.value, gapless.GaplessError)


def test_rules(client):
    client.record("orders", at(0), at(2), id="a")
    s = client.set_rule("orders_hourly", assets=["orders"], every="1h", from_=at(0), deadline="30m")
    assert (s.outcome, s.firings) == ("created", 2)
    r = s.rule
    assert (r.rule, r.assets, r.every, r.tz, r.policy, r.from_, r.until) == (
        "orders_hourly",
        ["orders"],
        "1h",
        "UTC",
        "full",
        at(0),
        None,
    )
    assert (r.deadline, r.target, r.key_format) == ("PT30M", None, "%Y-%m-%dT%H:%M:%S")
    assert (
        client.set_rule(
            "orders_hourly", assets=["orders"], every="1h", from_=at(0), deadline="30m"
        ).outcome
        == "unchanged"
    )
    u = client.set_rule("orders_hourly", assets=["orders"], every="1h", from_=at(0), target="hook")
    assert (u.outcome, u.rule.target, u.rule.deadline) == ("updated", "hook", None)
    with pytest.raises(gapless.Conflict, match="every 1h"):
        client.set_rule("orders_hourly", assets=["orders"], every="30m", from_=at(0))
    ratio = client.set_rule(
        "r_ratio",
        assets=["orders"],
        every="1d",
        from_="2025-06-14",
        until="2025-06-16",
        tz="Europe/Berlin",
        min_ratio=0.05,
    )
    assert (ratio.rule.policy, ratio.rule.tz, ratio.rule.until) == (
        "ratio>=0.05",
        "Europe/Berlin",
        at(22, day=15),
    )
    gap = client.set_rule(
        "r_gap", assets=["orders"], every="1h", from_=at(0), max_gap=timedelta(minutes=10)
    )
    assert gap.rule.policy == "gap<10m"
    assert [x.rule for x in client.rules()] == ["orders_hourly", "r_gap", "r_ratio"]
    assert client.rule("r_gap") == gap.rule
    with pytest.raises(gapless.NotFound, match='"r_gap"'):
        client.rule("r_gaq")
    d = client.delete_rule("r_gap")
    assert (d.rule, d.deleted) == ("r_gap", True)
    with pytest.raises(gapless.NotFound):
        client.delete_rule("r_gap")
    with pytest.raises(gapless.NotFound, match="ordres"):
        client.set_rule("x", assets=["ordres"], every="1h", from_=at(0))


def test_firings_every_page(client):
    client.declare("orders")
    client.set_rule("hourly", assets=["orders"], every="1h", from_=at(0))
    client.record_many(
        [{"asset": "orders", "id": f"h{i}", "start": at(i), "end": at(i + 1)} for i in range(5)]
    )
    client.record("orders", at(2, 10), at(2, 20), id="x", retract=True)
    fs = list(client.firings(limit=2))
    assert [(f.seq, f.kind, f.key) for f in fs] == [
        (1, "complete", "2025-06-14T00:00:00"),
        (2, "complete", "2025-06-14T01:00:00"),
        (3, "complete", "2025-06-14T02:00:00"),
        (4, "complete", "2025-06-14T03:00:00"),
        (5, "complete", "2025-06-14T04:00:00"),
        (6, "incomplete", "2025-06-14T02:00:00"),
    ]
    f = fs[0]
    assert (f.rule, f.window, f.generation, f.covered_ratio) == (
        "hourly",
        Interval(at(0), at(1)),
        1,
        1.0,
    )
    assert f.delivery == gapless.Delivery(target=None, state="none", attempts=0, last_error=None)
    assert [f.seq for f in client.firings(after=4)] == [5, 6]
    page = client.firings_page(limit=4)
    assert (len(page.firings), page.next) == (4, 4)
    assert client.firings_page(after=4).next is None
    newest = client.firings_page(limit=2, newest=True)
    assert ([f.seq for f in newest.firings], newest.next) == ([5, 6], None)
    with pytest.raises(gapless.NotFound, match="hourly"):
        list(client.firings(rule="hourlx"))


def test_cli_and_client_see_one_ledger(client, server):
    # What the command line writes through the server, the client reads.
    out = run(
        "--url",
        server.url,
        "emit",
        "orders",
        "--start",
        "2025-06-14T00:00Z",
        "--end",
        "2025-06-14T01:00Z",
        "--id",
        "x",
    )
    assert out.returncode == 0, out.stderr
    assert client.check("orders", at(0), at(1)).covered


def test_prune_keeps_coverage_and_says_what_it_pruned(client):
    client.record("orders", at(0), at(1), id="a")
    client.record("orders", at(1), at(2), id="b")
    client.record("orders", at(1, 30), at(1, 45), id="r", retract=True)
    client.record("orders", at(2), at(3), id="c")
    before = client.check("orders", at(0), at(3))
    p = client.prune(at(2))
    assert (p.before, p.asset, p.events_removed, p.firings_removed, p.assets_touched) == (
        at(2),
        None,
        2,
        0,
        1,
    )
    # Every coverage answer is what it was.
    assert client.check("orders", at(0), at(3)) == before
    assert (
        client.buckets("orders", at(0), at(3), buckets=3).buckets[1].retracted_us == 15 * 60_000_000
    )
    assert client.asset("orders").pruned_before == at(2)
    page = client.segments_page("orders", at(0), at(3))
    assert page.pruned_before == at(2)
    assert [(s.start, s.end, s.kind, s.event) for s in page.segments] == [
        (at(0), at(1, 30), "landed", None),
        (at(1, 30), at(1, 45), "retracted", None),
        (at(1, 45), at(2), "landed", None),
        (at(2), at(3), "landed", gapless.EventRef("c", 4)),
    ]
    events = client.events_page("orders")
    assert events.pruned_before == at(2)
    assert [e.id for e in events.events] == ["r", "c"]
    assert client.events_page("orders", at(2), at(3)).pruned_before is None
    # One asset's prune; an unknown one is named.
    assert client.prune(at(3), asset="orders").firings_removed == 0
    with pytest.raises(gapless.NotFound, match="ordres"):
        client.prune(at(3), asset="ordres")
