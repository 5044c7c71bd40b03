"""The listings a page at a time and the buckets of many ranges at once,
through both clients against a real server on both backends: pages against
a brute-force filter and sort of the names, overviews against `frontier`
and `check`, `buckets_many` against `buckets` item by item."""

from __future__ import annotations

import asyncio
import random
from datetime import datetime, timedelta, timezone

import pytest

import gapless

UTC = timezone.utc

NAMES = [
    "a",
    "ab",
    "abc",
    "ac",
    "B",
    "b",
    "b.x",
    "b-x",
    "\u00c4",
    "a\u00e9",
    "s3://lake/orders",
    "s3://lake/\u00fcn\u00efcode",
    "with space",
    "amp&eq=",
    "pct%2F",
    "plus+",
    "\U0010ffff",
    "\u65e5\u672c/\u6642\u9593",
]


def by_bytes(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: n.encode())


def fill(client: gapless.Client, rng: random.Random, now: datetime) -> None:
    """Each name a few random events over the last nine days, some retracted."""
    for i, name in enumerate(NAMES):
        if i % 6 == 5:
            client.declare(name, tz="UTC")
            continue
        events = []
        for n in range(1 + rng.randrange(5)):
            start = now - timedelta(minutes=rng.randrange(9 * 24 * 60))
            end = start + timedelta(minutes=1 + rng.randrange(2 * 24 * 60))
            events.append(
                {
                    "asset": name,
                    "id": f"e{n}",
                    "start": start.isoformat(),
                    "end": end.isoformat(),
                    "kind": "retracted" if rng.randrange(4) == 0 else "landed",
                }
            )
        client.record_many(events)


def test_asset_pages_match_the_names_and_the_questions(client):
    rng = random.Random(7)
    now = datetime.now(UTC).replace(microsecond=0)
    fill(client, rng, now)
    assert [a.asset for a in client.assets()] == by_bytes(NAMES)
    fragments = ["", "a", "b", "s3://", "lake/", "x", "\u00e9", "\U0010ffff", "+", "%", "q"]
    for _ in range(40):
        prefix = rng.choice([None, *fragments])
        contains = rng.choice([None, *fragments])
        limit = rng.randrange(1, 5)
        want = by_bytes(
            [
                n
                for n in NAMES
                if (prefix is None or n.startswith(prefix)) and (contains is None or contains in n)
            ]
        )
        got: list[str] = []
        after = None
        while True:
            page = client.assets_page(prefix=prefix, contains=contains, limit=limit, after=after)
            assert len(page.assets) <= limit
            got += [a.asset for a in page.assets]
            if page.next is None:
                break
            assert len(page.assets) == limit
            after = page.next
        assert got == want, (prefix, contains, limit)
        assert [a.asset for a in client.assets(prefix=prefix, contains=contains)] == want
    page = client.assets_page(limit=1000)
    assert page.next is None and page.as_of is not None
    as_of = page.as_of
    for a in page.assets:
        shown = client.asset(a.asset)
        assert (a.events, a.first_covered, a.last_covered, a.key_span, a.tz) == (
            shown.events,
            shown.first_covered,
            shown.last_covered,
            shown.key_span,
            shown.tz,
        )
        if a.first_covered is None:
            assert a.frontier is None
        else:
            assert a.frontier == client.frontier(a.asset).frontier
        for ratio, days in ((a.covered_ratio_day, 1), (a.covered_ratio_week, 7)):
            # as_of keeps its microseconds: sent as RFC 3339 text.
            start = (as_of - timedelta(days=days)).isoformat()
            check = client.check(a.asset, start, as_of.isoformat()) if a.events else None
            assert ratio == (check.covered_ratio if check else 0.0), (a.asset, days)


def test_asset_pages_refuse_bad_limits_and_cursors(client):
    client.record("a", "2025-06-14T00:00Z", "2025-06-14T01:00Z")
    for limit in (0, 1001):
        with pytest.raises(gapless.BadInput, match=r"^limit: .*give 1 to 1000") as e:
            client.assets_page(limit=limit)
        assert e.value.status == 400
    for after in ("not a cursor", "YQ=", "_w"):
        with pytest.raises(gapless.BadInput, match=r'^after: invalid cursor .*"next"'):
            client.assets_page(after=after)
    with pytest.raises(gapless.BadInput, match="^limit: "):
        client.rules_page(limit=5000)


def test_rule_pages_match_the_names(client):
    client.record("orders", "2025-06-14T00:00Z", "2025-06-14T01:00Z")
    names = ["a", "ab", "b", "B", "b.x", "orders_hourly", "orders-daily", "z9", "0"]
    for n in names:
        client.set_rule(n, assets=["orders"], every="1h", from_="2025-06-14")
    want = sorted(names, key=lambda n: n.encode())
    assert [r.rule for r in client.rules()] == want
    assert [r.rule for r in client.rules(prefix="orders")] == ["orders-daily", "orders_hourly"]
    for limit in (1, 2, 4):
        got, after = [], None
        while True:
            page = client.rules_page(limit=limit, after=after)
            got += [r.rule for r in page.rules]
            if page.next is None:
                break
            after = page.next
        assert got == want


def test_buckets_many_equals_buckets_item_by_item(client):
    rng = random.Random(11)
    base = datetime(2025, 6, 14, tzinfo=UTC)
    for name in ("orders", "clicks"):
        for n in range(6):
            s = base + timedelta(minutes=rng.randrange(3000))
            client.record(
                name,
                s,
                s + timedelta(minutes=1 + rng.randrange(600)),
                id=f"{n}",
                retract=rng.randrange(3) == 0,
            )
    items = []
    for _ in range(30):
        s = base + timedelta(minutes=rng.randrange(-600, 3600))
        e = s + timedelta(microseconds=1 + rng.randrange(4 * 86_400_000_000))
        items.append((rng.choice(["orders", "clicks"]), s, e))
    n = rng.randrange(1, 300)
    many = client.buckets_many(items, buckets=n)
    assert [b.raw for b in many] == [client.buckets(a, s, e, buckets=n).raw for a, s, e in items]
    # Naive text is read in tz, as the single route reads it.
    many = client.buckets_many(
        [{"asset": "orders", "start": "2025-06-14T02:00", "end": "2025-06-15"}], tz="Europe/Berlin"
    )
    one = client.buckets("orders", "2025-06-14T02:00", "2025-06-15", tz="Europe/Berlin")
    assert [b.raw for b in many] == [one.raw]

    async def both() -> list[gapless.Buckets]:
        async with gapless.AsyncClient(client.url) as c:
            return await c.buckets_many(items[:3], buckets=n)

    assert [b.raw for b in asyncio.run(both())] == [
        client.buckets(a, s, e, buckets=n).raw for a, s, e in items[:3]
    ]


def test_buckets_many_refuses_what_the_single_route_refuses(client):
    client.record("orders", "2025-06-14T00:00Z", "2025-06-14T01:00Z")
    with pytest.raises(gapless.NotFound, match='unknown asset "ordres"') as e:
        client.buckets_many(
            [("orders", "2025-06-14", "2025-06-15"), ("ordres", "2025-06-14", "2025-06-15")]
        )
    assert e.value.status == 404
    with pytest.raises(
        gapless.BadInput,
        match=r"^buckets: 21 items of 10000 parts are 210000 parts, more than the limit of 200000",
    ):
        client.buckets_many([("orders", "2025-06-14", "2025-06-15")] * 21, buckets=10000)
    with pytest.raises(gapless.BadInput, match=r"^buckets: 0 is out of range"):
        client.buckets_many([("orders", "2025-06-14", "2025-06-15")], buckets=0)
    with pytest.raises(gapless.BadInput, match=r"^assets item 2: range"):
        client.buckets_many(
            [("orders", "2025-06-14", "2025-06-15"), ("orders", "2025-06-15", "2025-06-14")]
        )
    with pytest.raises(gapless.BadInput, match="^assets: give at least one"):
        client.buckets_many([])
