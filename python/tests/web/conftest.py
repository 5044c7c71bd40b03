"""Fixtures of the web page's tests (scripts/test-web): real `gapless serve`
processes on SQLite ledgers filled with the command line, and a real
headless Chromium driven by Playwright.

- The binary: GAPLESS_BIN, else $CARGO_TARGET_DIR/debug/gapless, else
  target/debug/gapless (scripts/test-web builds it).
- The browser: GAPLESS_CHROMIUM, else /usr/bin/chromium (Debian's; never a
  browser Playwright downloads).
- `demo`: the ledger of scripts/demo (a day of 5-minute batches of `orders`
  on 2025-06-14, 03:10-03:20 lost, 17:00-17:30 retracted) plus `clicks`,
  hours around Europe/Berlin's DST days, `live`, the last three days but
  two hours, and `orders_hourly`, a rule on
  `orders` with one `incomplete` firing; one server on it for the session
  (the tests only read it).
- `page`: a fresh browser context and page per test (1280x800).
- `shot(page, name)`: a screenshot under target/web-screenshots/.

The servers listen on port 0 and the URL is read from the
`listening on URL` line of their standard error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python" / "tests"))

from gapless_serve import BIN, Server  # noqa: E402

SHOTS = ROOT / "target" / "web-screenshots"
CHROMIUM = os.environ.get("GAPLESS_CHROMIUM", "/usr/bin/chromium")


def pytest_configure(config):
    if not os.access(BIN, os.X_OK):
        raise pytest.UsageError(f"no gapless binary at {BIN}: cargo build -p gapless-cli, or set GAPLESS_BIN")
    if not os.access(CHROMIUM, os.X_OK):
        raise pytest.UsageError(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set GAPLESS_CHROMIUM")


def gapless(db: str, *args: str, input: str | None = None, ok=(0,)) -> subprocess.CompletedProcess:
    """The command line on `db`; its exit code must be one of `ok`."""
    done = subprocess.run([BIN, "--db", db, *args], input=input, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode in ok, f"gapless {' '.join(args)}: exit {done.returncode}: {done.stderr}"
    return done


def gapless_json(db: str, *args: str, ok=(0,)) -> dict:
    return json.loads(gapless(db, *args, "--json", ok=ok).stdout)


def demo_batches() -> str:
    """scripts/demo's day: 288 five-minute batches less batches 38 and 39."""
    lines = []
    for i in range(288):
        if i in (38, 39):
            continue
        s, e = i * 5, (i + 1) * 5
        end = "2025-06-15T00:00:00Z" if e == 1440 else f"2025-06-14T{e // 60:02d}:{e % 60:02d}:00Z"
        lines.append(json.dumps({"asset": "orders", "id": f"batch-{i}",
                                 "start": f"2025-06-14T{s // 60:02d}:{s % 60:02d}:00Z",
                                 "end": end, "extra": {"rows": 1000 + i}}))
    return "\n".join(lines) + "\n"


def berlin_hours() -> str:
    """`clicks`: Berlin's fall-back day 2025-10-26 (25 hours) all covered but
    its second 02:00 hour and half of 05:00, and the spring-forward day
    2025-03-30 (23 hours) covered from 12:00 local."""
    lines = [
        {"start": "2025-10-25T22:00:00Z", "end": "2025-10-26T01:00:00Z"},  # 00:00 to the second 02:00
        {"start": "2025-10-26T02:00:00Z", "end": "2025-10-26T04:30:00Z"},  # 03:00 to 05:30
        {"start": "2025-10-26T05:00:00Z", "end": "2025-10-26T23:00:00Z"},  # 06:00 to midnight
        {"start": "2025-03-30T10:00:00Z", "end": "2025-03-30T22:00:00Z"},  # 12:00 to midnight
    ]
    return "".join(json.dumps({"asset": "clicks", **e}) + "\n" for e in lines)


def recent(now: datetime) -> str:
    """`live`: the last three days up to five minutes ago but two hours of
    yesterday, so that its shares of the last day and week are not 0."""
    def at(hours: float) -> str:
        return (now - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [{"start": at(72), "end": at(20)}, {"start": at(18), "end": at(1 / 12)}]
    return "".join(json.dumps({"asset": "live", **e}) + "\n" for e in lines)


def make_demo(db: str) -> None:
    gapless(db, "ingest", "-", input=demo_batches())
    gapless(db, "ingest", "-", input=recent(datetime.now(timezone.utc).replace(microsecond=0)))
    gapless(db, "emit", "orders", "--start", "2025-06-14T17:00Z", "--end", "2025-06-14T17:30Z",
            "--retract", "--id", "bad-slice")
    gapless(db, "ingest", "-", input=berlin_hours())
    gapless(db, "rule", "set", "orders_hourly", "--assets", "orders", "--every", "1h",
            "--from", "2025-06-14", "--until", "2025-06-15")
    # After the rule: a retraction withdraws a complete window (an
    # `incomplete` firing), a batch again completes it (generation 2).
    gapless(db, "emit", "orders", "--start", "2025-06-14T10:00Z", "--end", "2025-06-14T10:05Z",
            "--retract", "--id", "redo-10")
    gapless(db, "emit", "orders", "--start", "2025-06-14T10:00Z", "--end", "2025-06-14T10:05Z",
            "--id", "redo-10-again")


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("demo") / "demo.db")
    make_demo(db)
    return db


@pytest.fixture(scope="session")
def demo(demo_db) -> Iterator[Server]:
    server = Server(demo_db).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # The page must live within its own Content-Security-Policy: Chromium
    # reports each thing it blocked on the console.
    pg.on("console", lambda m: "Content Security Policy" in m.text and errors.append(m.text))
    yield pg
    context.close()
    assert not errors, f"errors in the page: {errors}"


def shot(page: Page, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
