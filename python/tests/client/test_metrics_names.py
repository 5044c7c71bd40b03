"""`/metrics` with hostile asset names, read by Prometheus' own parsers.

An asset name may hold `"`, `\\`, `,`, `=`, `{` and `}` (SPEC §1: any UTF-8
without control characters). Each such name must be one series of its own,
its label value escaped as the exposition formats require, so that it
neither forges a label nor mixes into another asset's series, and the whole
scrape still parses: with `prometheus_client`'s Prometheus text parser and
its (stricter) OpenMetrics parser.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import httpx
import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families as prometheus_families

import gapless

START = datetime(2025, 6, 14, tzinfo=timezone.utc)

# Each name with the events recorded for it: its series must say exactly so.
NAMES = {
    "orders": 3,
    'orders",forged="1': 1,
    "back\\slash": 2,
    'a"b\\"c\\': 1,
    'x"} 99\ny{z="1': 0,  # a line feed: refused (control character)
    "{},=é": 1,
}


def record(client: gapless.Client, name: str, n: int) -> None:
    for i in range(n):
        start = START + timedelta(minutes=5 * i)
        client.record(name, start, start + timedelta(minutes=5))


def by_asset(families, name: str) -> dict[str, float]:
    """The samples named `name` (a counter's `name_total`: the Prometheus
    parser keeps those in a family of their own), by their `asset` label;
    none with other labels."""
    out: dict[str, float] = {}
    for s in (s for f in families for s in f.samples if s.name in (name, f"{name}_total")):
        assert set(s.labels) == {"asset"}, s
        assert s.labels["asset"] not in out, f"two series of {s.labels['asset']!r}"
        out[s.labels["asset"]] = s.value
    return out


def test_hostile_names_are_one_series_each_and_the_scrape_parses(server, client):
    for name, n in NAMES.items():
        if "\n" in name:
            with pytest.raises(gapless.BadInput):
                client.record(name, START, START + timedelta(minutes=5))
        else:
            record(client, name, n)
    text = httpx.get(f"{server.url}/metrics", timeout=30).text
    want = {name: float(n) for name, n in NAMES.items() if n}
    for parse in (prometheus_families, openmetrics_families):
        families = list(parse(text))
        assert by_asset(families, "gapless_asset_events") == want, parse.__module__
        received = by_asset(families, "gapless_asset_last_received_seconds")
        assert set(received) == set(want), parse.__module__
        retractions = by_asset(families, "gapless_asset_retractions")
        assert retractions == {name: 0.0 for name in want}, parse.__module__
