"""Every worked example of docs/conformance/cases.json through the Python
client (as crates/gapless-cli/tests/conformance.rs runs them through the
command line and the Rust client), on SQLite and PostgreSQL, a fresh
ledger each case. Each expectation is checked against the typed answer
turned back into the SPEC's JSON (field names, instants as RFC 3339 UTC),
so the answer types are checked too, not only the JSON they came from."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime
from typing import Any

import pytest
from conftest import CASES

import gapless
from gapless._time import format_instant

CASE_LIST = json.loads(CASES.read_text())["cases"]


def as_json(value: Any) -> Any:
    """A typed answer as the SPEC's JSON: dataclass fields by name (a
    rule's ``from_`` as ``from``), instants as RFC 3339 UTC."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            ("from" if f.name == "from_" else f.name): as_json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name != "raw"
        }
    if isinstance(value, datetime):
        return format_instant(value)
    if isinstance(value, list):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value


def mismatch(expected: Any, actual: Any, path: str = "") -> str | None:
    """Where `actual` differs from `expected` (fields not expected are not compared)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: {actual!r}, expected an object"
        for k, v in expected.items():
            if k not in actual:
                return f"{path}: missing field {k!r}"
            m = mismatch(v, actual[k], f"{path}.{k}")
            if m:
                return m
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: {actual!r}, expected {len(expected)} items"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            m = mismatch(e, a, f"{path}[{i}]")
            if m:
                return m
        return None
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return (
            None
            if actual == expected and not isinstance(actual, bool)
            else f"{path}: {actual!r}, expected {expected!r}"
        )
    return None if actual == expected else f"{path}: {actual!r}, expected {expected!r}"


def ask(client: gapless.Client, q: dict[str, Any]) -> tuple[int, Any]:
    """The exit code the command line would give, and the answer as JSON."""
    kw = {k: q[k] for k in ("tz",) if k in q}
    policy = {"policy": q["policy"]} if "policy" in q else {}
    cmd, asset = q["command"], q["asset"]
    if cmd == "check":
        a = client.check(asset, q["start"], q["end"], **policy, **kw)
        return (0 if a.complete else 1), as_json(a)
    if cmd == "windows":
        a = client.windows(asset, q["start"], q["end"], q["every"], **policy, **kw)
        return 0, as_json(a)
    if cmd == "segments":
        segs = list(client.segments(asset, q["start"], q["end"], **kw))
        return 0, {"asset": asset, "segments": as_json(segs), "next": None}
    if cmd == "buckets":
        a = client.buckets(asset, q["start"], q["end"], buckets=int(q["buckets"]), **kw)
        return 0, as_json(a)
    if cmd == "frontier":
        a = client.frontier(asset, q.get("origin"), **kw)
        return 0, as_json(a)
    raise AssertionError(f"no such command in the cases: {cmd}")


@pytest.mark.parametrize("case", CASE_LIST, ids=[c["name"] for c in CASE_LIST])
def test_case(case, client):
    failures: list[str] = []
    for step in case.get("setup", []):
        assert step["command"] == "asset set"
        client.declare(step["asset"], key_span=step.get("key_span"), tz=step.get("tz"))

    if "events" in case:
        expect = dict(case.get("expect_ingest", {"exit": 0}))
        code = expect.pop("exit")
        try:
            got = as_json(client.record_many(case["events"]))
            assert code == 0, f"ingest succeeded, expected exit {code}"
            m = mismatch(expect, got)
            if m:
                failures.append(f"ingest: {m}")
        except gapless.GaplessError as e:
            assert code == 2, f"ingest failed: {e!r}"

    for q in case.get("queries", []):
        expect = dict(q["expect"])
        code = expect.pop("exit", 0)
        try:
            got_code, got = ask(client, q)
        except gapless.GaplessError as e:
            if code != 2:
                failures.append(f"{q}: {e!r}")
            continue
        if got_code != code:
            failures.append(f"{q}: exit {got_code}, expected {code}")
        m = mismatch(expect, got)
        if m:
            failures.append(f"{q['command']} {q.get('start')}..{q.get('end')}: {m}")

    good = {
        "asset": "orders",
        "id": "good",
        "start": "2025-06-01T00:00:00Z",
        "end": "2025-06-01T00:05:00Z",
    }
    for bad in case.get("error_lines", []):
        with pytest.raises(gapless.BadInput) as e:
            client.record_many([good, bad])
        err = e.value
        if (
            err.detail != {"event": 2}
            or not err.message.startswith("event 2: ")
            or "\n" in err.message
        ):
            failures.append(f"{bad}: error does not name event 2 in one line: {err!r}")
        stored = {a.asset: a.events for a in client.assets()}
        if stored.get("orders", 0) != 0:
            failures.append(f"{bad}: something was stored")

    assert not failures, "\n".join(failures)
