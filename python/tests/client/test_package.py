"""The package itself: instants and durations, the public names, the binary."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import BIN, ROOT

import gapless
from gapless import _time

UTC = timezone.utc


def test_instants_to_text():
    assert (
        _time.instant_text(datetime(2025, 6, 14, 10, 5, tzinfo=UTC), "x") == "2025-06-14T10:05:00Z"
    )
    assert (
        _time.instant_text(datetime(2025, 6, 14, 10, 5, 0, 500000, tzinfo=UTC), "x")
        == "2025-06-14T10:05:00.5Z"
    )
    berlin = datetime(2025, 6, 14, 12, tzinfo=ZoneInfo("Europe/Berlin"))
    assert _time.instant_text(berlin, "x") == "2025-06-14T10:00:00Z"
    assert _time.instant_text(datetime(1, 1, 1, tzinfo=UTC), "x") == "0001-01-01T00:00:00Z"
    assert _time.instant_text("2025-06-14", "x") == "2025-06-14"  # text as written
    # Naive: refused without tz, naming the argument; read in tz with one.
    with pytest.raises(
        ValueError, match=r"^start: naive datetime 2025-06-14T12:00:00 has no time zone"
    ):
        _time.instant_text(datetime(2025, 6, 14, 12), "start")
    assert (
        _time.instant_text(datetime(2025, 6, 14, 12), "x", "Europe/Berlin")
        == "2025-06-14T10:00:00Z"
    )
    # A DST gap moves forward by the gap, a fold is the earlier instant (SPEC §2).
    assert (
        _time.instant_text(datetime(2025, 3, 30, 2, 30), "x", "Europe/Berlin")
        == "2025-03-30T01:30:00Z"
    )
    assert (
        _time.instant_text(datetime(2025, 10, 26, 2, 30), "x", "Europe/Berlin")
        == "2025-10-26T00:30:00Z"
    )
    with pytest.raises(TypeError, match="a date is not an instant"):
        _time.instant_text(datetime(2025, 6, 14).date(), "x")  # type: ignore[arg-type]


def test_text_to_instants():
    p = _time.to_datetime
    assert p("2025-06-14T10:05:00.123Z", "x") == datetime(2025, 6, 14, 10, 5, 0, 123000, tzinfo=UTC)
    assert p("2025-06-14T10:05+02:00", "x") == datetime(2025, 6, 14, 8, 5, tzinfo=UTC)
    assert p("2025-06-14", "x") == datetime(2025, 6, 14, tzinfo=UTC)
    assert p("2025-06-14", "x", "Asia/Kolkata") == datetime(2025, 6, 13, 18, 30, tzinfo=UTC)
    assert _time.parse_instant("9999-12-30T22:00:00Z").year == 9999


def test_read_instant_is_the_servers_grammar():
    """What the server reads (crates/gapless-core/src/parse/instant.rs) and
    no more; test_readings.py holds the same against a real server."""
    r = _time.read_instant
    at = datetime(2025, 6, 14, 8, tzinfo=UTC)
    assert r("2025-06-14-10:00", "x", "Europe/Berlin") == at  # Dagster's hourly keys
    assert r("2025-06-14T10:00:00,000000000", "x", "Europe/Berlin") == at
    assert r(" 2025-06-14T10:00+02 ", "x") == r("2025-06-14T10:00+0200", "x") == at
    assert r("9999-12-30T22:00:00Z", "x") == datetime(9999, 12, 30, 22, tzinfo=UTC)
    for text, reason in [
        ("2025-06-14T10:00:00.0000001", "fraction .0000001 is finer than a microsecond"),
        ("2025-06-14T10:00:00+24:00", "offset +24:00 is out of range"),
        ("2025-06-14T10:00:00 Z", "RFC 3339 such as"),
        ("2025-06-14T10:00.5", "RFC 3339 such as"),
        ("20250614T100000Z", "RFC 3339 such as"),
        ("\u0662\u0660\u0662\u0665-06-14", "RFC 3339 such as"),  # Arabic-Indic digits
        ("9999-12-30T22:00:00.000001Z", "outside 0001-01-01T00:00:00Z to 9999-12-30T22:00:00Z"),
        ("9999-12-31", "outside"),
        ("0001-01-01", "outside"),  # in Berlin, before the first instant
    ]:
        with pytest.raises(ValueError, match=rf"^x: .* is not an instant \(.*{re.escape(reason)}"):
            r(text, "x", "Europe/Berlin")


def test_durations():
    d = _time.duration_text
    assert d(timedelta(minutes=5), "x") == "PT300S"
    assert d(0.5, "x") == "PT0.5S"
    assert d("5m", "x") == "5m"
    with pytest.raises(ValueError, match="negative"):
        d(-1, "x")
    s = _time.seconds
    assert (s("PT1M30S", "x"), s("5m", "x"), s("500ms", "x"), s(timedelta(hours=1), "x")) == (
        90,
        300,
        0.5,
        3600,
    )
    assert s("P1DT1H", "x") == 90000
    with pytest.raises(ValueError, match="not a fixed duration"):
        s("1mo", "x")


def test_public_names():
    for name in gapless.__all__:
        assert hasattr(gapless, name), name
    for cls in (
        gapless.BadInput,
        gapless.NotFound,
        gapless.Conflict,
        gapless.Denied,
        gapless.Unavailable,
        gapless.Fault,
    ):
        assert issubclass(cls, gapless.GaplessError)
    assert (ROOT / "python/gapless/src/gapless/py.typed").exists()
    # Every public method has a docstring with an example or says what it answers.
    for name, fn in inspect.getmembers(gapless.Client, inspect.isfunction):
        if not name.startswith("_"):
            assert fn.__doc__, name


def test_async_signatures_are_the_sync_ones():
    for name, fn in inspect.getmembers(gapless.Client, inspect.isfunction):
        if name.startswith("_") or name == "close":
            continue
        a = getattr(gapless.AsyncClient, name)
        ps, pa = inspect.signature(fn).parameters, inspect.signature(a).parameters
        assert list(ps) == list(pa), name
        assert [(p.kind, p.default, p.annotation) for p in ps.values()] == [
            (p.kind, p.default, p.annotation) for p in pa.values()
        ], name


def test_python_m_gapless_runs_the_binary(tmp_path):
    env = {
        **os.environ,
        "PATH": f"{Path(BIN).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT / "python/gapless/src"),
    }
    out = subprocess.run(
        [sys.executable, "-m", "gapless", "--version"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("gapless ")
    # Exit codes pass through: check of an unknown ledger is 2.
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "gapless",
            "--db",
            str(tmp_path / "none.db"),
            "check",
            "x",
            "--start",
            "2025-06-14",
            "--end",
            "2025-06-15",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=False,
    )
    assert out.returncode == 2 and "no ledger" in out.stderr
    env["PATH"] = "/nonexistent"
    out = subprocess.run(
        [sys.executable, "-m", "gapless", "--version"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=False,
    )
    assert out.returncode == 2 and "no gapless binary" in out.stderr


def test_client_needs_a_url(monkeypatch):
    monkeypatch.delenv("GAPLESS_URL", raising=False)
    with pytest.raises(ValueError, match="GAPLESS_URL"):
        gapless.Client()
    monkeypatch.setenv("GAPLESS_URL", "http://127.0.0.1:1/")
    assert gapless.Client().url == "http://127.0.0.1:1"
    with pytest.raises(ValueError, match="not an http"):
        gapless.Client("127.0.0.1:8080")
