"""Long polls: wait() and firings(wait=...), the ledger written meanwhile from another thread."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

import httpx
import pytest

import gapless
from gapless import _api

UTC = timezone.utc


def at(h: int, m: int = 0) -> datetime:
    return datetime(2025, 6, 14, h, m, tzinfo=UTC)


class Counting(httpx.HTTPTransport):
    """The real transport, counting the requests of each path."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return super().handle_request(request)


def later(seconds: float, fn, *args, **kwargs) -> threading.Thread:
    t = threading.Timer(seconds, fn, args, kwargs)
    t.start()
    return t


def test_wait_returns_when_the_range_completes(client, server):
    client.record("orders", at(0), at(1), id="a")
    writer = gapless.Client(server.url)
    t = later(0.5, writer.record, "orders", at(1), at(2), id="b")
    t0 = time.monotonic()
    answer = client.wait("orders", at(0), at(2), timeout=15)
    took = time.monotonic() - t0
    t.join()
    assert answer.complete and answer.covered and answer.missing == []
    assert 0.4 < took < 5, took


def test_wait_times_out_with_the_gaps(client):
    client.record("orders", at(0), at(1), id="a")
    t0 = time.monotonic()
    answer = client.wait("orders", at(0), at(2), timeout=0.6)
    assert time.monotonic() - t0 >= 0.55
    assert not answer.complete and answer.missing == [gapless.Interval(at(1), at(2))]
    # Under a policy the range may be complete with gaps.
    assert client.wait("orders", at(0), at(2), min_ratio=0.5, timeout=5).complete
    with pytest.raises(gapless.NotFound):
        client.wait("ordres", at(0), at(2), timeout=1)


def test_a_wait_longer_than_a_request_is_several(server, monkeypatch):
    """A server holds one request at most 20 s; the client asks again until
    its own timeout (20 s made 0.5 s here, so the test is quick)."""
    monkeypatch.setattr(_api, "MAX_HTTP_WAIT", 0.5)
    transport = Counting()
    client = gapless.Client(server.url, transport=transport)
    client.record("orders", at(0), at(1), id="a")
    answer = client.wait("orders", at(0), at(2), timeout=1.2)
    assert not answer.complete
    # 0.5 + 0.5 + 0.2 s (two when the first request took long on a loaded machine)
    assert transport.paths.count("/v1/assets/orders/wait") in (2, 3)
    transport.paths.clear()
    t = later(1.3, gapless.Client(server.url).record, "orders", at(1), at(2), id="b")
    assert client.wait("orders", at(0), at(2), timeout=10).complete
    t.join()
    assert 3 <= transport.paths.count("/v1/assets/orders/wait") <= 5


def test_firings_page_waits_for_the_next_firing(client, server):
    client.declare("orders")
    client.set_rule("hourly", assets=["orders"], every="1h", from_=at(0))
    assert client.firings_page(wait=0.3).firings == []
    t = later(0.5, gapless.Client(server.url).record, "orders", at(0), at(1), id="a")
    t0 = time.monotonic()
    page = client.firings_page(after=0, wait=15)
    t.join()
    assert time.monotonic() - t0 < 5
    assert [(f.seq, f.kind, f.key) for f in page.firings] == [
        (1, "complete", "2025-06-14T00:00:00")
    ]


def test_firings_follows_new_ones_until_a_quiet_wait(client, server, monkeypatch):
    monkeypatch.setattr(_api, "MAX_HTTP_WAIT", 0.5)
    client.declare("orders")
    client.set_rule("hourly", assets=["orders"], every="1h", from_=at(0))
    client.record("orders", at(0), at(1), id="h0")
    writer = gapless.Client(server.url)
    threads = [
        later(0.4 + 0.4 * i, writer.record, "orders", at(i), at(i + 1), id=f"h{i}") for i in (1, 2)
    ]
    t0 = time.monotonic()
    keys = [f.key[11:13] for f in client.firings(rule="hourly", wait=1.5)]
    took = time.monotonic() - t0
    for t in threads:
        t.join()
    assert keys == ["00", "01", "02"]
    assert 1.5 < took < 6, took
