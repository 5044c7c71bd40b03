"""gapless.AsyncClient against a real server: the same routes, awaited."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import datetime, timezone

import pytest
from conftest import Server

import gapless

UTC = timezone.utc


def at(h: int, m: int = 0) -> datetime:
    return datetime(2025, 6, 14, h, m, tzinfo=UTC)


def test_every_route(server):
    async def main():
        async with gapless.AsyncClient(server.url) as c:
            assert await c.health() == {"status": "ok"}
            assert (await c.record("orders", at(0), at(1), id="a")).accepted == 1
            r = await c.record_many(
                [
                    {"asset": "orders", "id": f"b{i}", "start": at(i), "end": at(i, 30)}
                    for i in range(1, 4)
                ]
            )
            assert (r.accepted, r.duplicates) == (3, 0)
            check = await c.check("orders", at(0), at(4))
            assert check.missing[0] == gapless.Interval(at(1, 30), at(2))
            assert (await c.check_all(["orders"], at(0), at(1))).covered
            w = await c.windows("orders", at(0), at(4), "1h", incomplete=True)
            assert [x.key[11:13] for x in w.windows] == ["01", "02", "03"]
            assert [e.id async for e in c.events("orders", limit=2)] == ["a", "b1", "b2", "b3"]
            assert len((await c.events_page("orders", limit=2)).events) == 2
            segs = [s async for s in c.segments("orders", at(0), at(4), limit=1)]
            assert [s.event.id for s in segs] == ["a", "b1", "b2", "b3"]
            assert (await c.segments_page("orders", at(0), at(4), limit=1)).next is not None
            assert (await c.frontier("orders", at(0))).frontier == at(1, 30)
            assert (await c.declare("clicks", key_span="5m")).key_span == "PT5M"
            assert [a.asset async for a in c.assets()] == ["clicks", "orders"]
            assert (await c.asset("orders")).events == 4
            s = await c.set_rule("hourly", assets=["orders"], every="1h", from_=at(0))
            assert (s.outcome, s.firings) == ("created", 1)
            assert (await c.rule("hourly")).rule == "hourly"
            assert [r.rule async for r in c.rules()] == ["hourly"]
            assert [f.key async for f in c.firings()] == ["2025-06-14T00:00:00"]
            assert (await c.firings_page(after=1, wait=0.2)).firings == []
            assert (await c.wait("orders", at(0), at(1), timeout=5)).complete
            assert (await c.delete_rule("hourly")).deleted
            with pytest.raises(gapless.NotFound, match="ordres|orders"):
                await c.check("ordres", at(0), at(1))

    asyncio.run(main())


def test_wait_while_another_writes(server):
    def write():
        time.sleep(0.5)
        gapless.Client(server.url).record("orders", at(1), at(2), id="b")

    async def main():
        async with gapless.AsyncClient(server.url) as c:
            await c.record("orders", at(0), at(1), id="a")
            t = threading.Thread(target=write)
            t.start()
            # Other tasks run while one waits.
            ticks = 0

            async def tick():
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.05)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            answer = await c.wait("orders", at(0), at(2), timeout=15)
            ticker.cancel()
            t.join()
            assert answer.complete
            assert ticks >= 5

    asyncio.run(main())


def test_retries_and_unavailable(ledger):
    server = Server(ledger.db).start()
    url = server.url
    server.stop()

    async def main():
        async with gapless.AsyncClient(url, retries=0) as c:
            with pytest.raises(gapless.Unavailable) as e:
                await c.check("orders", at(0), at(1))
            assert e.value.status is None
        threading.Timer(0.4, server.start).start()
        async with gapless.AsyncClient(url, retries=6, backoff=0.2) as c:
            assert (await c.record("orders", at(0), at(1), id="a")).accepted == 1

    try:
        asyncio.run(main())
    finally:
        time.sleep(0.1)
        server.stop()


def test_the_async_methods_are_the_sync_ones():
    sync = {n for n in dir(gapless.Client) if not n.startswith("_")} - {"close"}
    asynchronous = {n for n in dir(gapless.AsyncClient) if not n.startswith("_")} - {"aclose"}
    assert sync == asynchronous
    for name in sync:
        s, a = getattr(gapless.Client, name), getattr(gapless.AsyncClient, name)
        if callable(s):
            assert a.__doc__ == s.__doc__, name
