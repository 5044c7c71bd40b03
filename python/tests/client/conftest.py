"""Real `gapless serve` processes for the Python client's tests.

- The binary: GAPLESS_BIN, else $CARGO_TARGET_DIR/debug/gapless, else
  target/debug/gapless of the repository (scripts/test-python builds it).
- `ledger`: a fresh ledger for each test, on SQLite (a temp file) and on
  PostgreSQL (a fresh schema of GAPLESS_TEST_PG, default
  postgres://postgres@127.0.0.1:5432/test, dropped after): every test that
  takes it runs on both.
- `server`: `gapless serve` on that ledger, on a free loopback port;
  `client`/`aclient_url` reach it. `Server.stop()` and `Server.start()` again
  keep the port (retry tests).

The package is imported from python/gapless/src (not installed).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "python" / "gapless" / "src"))
sys.path.insert(0, str(ROOT / "python" / "tests"))

# Hypothesis keeps a directory of its own (its constants cache): under
# target/, which git ignores, never in the work tree or outside the clone.
os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(ROOT / "target" / "hypothesis"))

from hypothesis import settings  # noqa: E402

import gapless  # noqa: E402
from gapless_serve import BIN, Server, free_port  # noqa: E402, F401 (the tests import them from here)

# No example database: nothing is kept between runs, in the clone or outside.
settings.register_profile("gapless", database=None)
settings.load_profile("gapless")

PG_URL = os.environ.get("GAPLESS_TEST_PG", "postgres://postgres@127.0.0.1:5432/test")
CASES = ROOT / "docs" / "conformance" / "cases.json"




def pytest_configure(config):
    if not os.access(BIN, os.X_OK):
        raise pytest.UsageError(
            f"no gapless binary at {BIN}: cargo build -p gapless-cli, or set GAPLESS_BIN"
        )


def run(*args: str, db: str | None = None, input: str | None = None) -> subprocess.CompletedProcess:
    """The gapless command on `db` (or with whatever args say)."""
    argv = [BIN, *(["--db", db] if db else []), *args]
    return subprocess.run(argv, input=input, capture_output=True, text=True, timeout=60, check=False)


def psql(sql: str) -> None:
    base = PG_URL.split("?", 1)[0]
    subprocess.run(["psql", "-q", base, "-c", sql], check=True, capture_output=True, timeout=30)


@dataclass
class Ledger:
    backend: str
    db: str


@pytest.fixture(params=["sqlite", "postgres"])
def ledger(request, tmp_path) -> Iterator[Ledger]:
    if request.param == "sqlite":
        yield Ledger("sqlite", str(tmp_path / "ledger.db"))
        return
    schema = f"py_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in PG_URL else "?"
    try:
        yield Ledger("postgres", f"{PG_URL}{sep}schema={schema}")
    finally:
        psql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def shared_server(request, tmp_path_factory) -> Iterator[Server]:
    """One server a module shares, on a fresh ledger of each backend: for
    property tests whose examples each use assets of their own."""
    if request.param == "sqlite":
        db, schema = str(tmp_path_factory.mktemp("shared") / "ledger.db"), None
    else:
        schema = f"py_{uuid.uuid4().hex[:12]}"
        db = f"{PG_URL}{'&' if '?' in PG_URL else '?'}schema={schema}"
    server = Server(db).start()
    try:
        yield server
    finally:
        server.stop()
        if schema:
            psql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def make_server(ledger) -> Iterator:
    """Start servers on the test's ledger (with extra `serve` arguments)."""
    started: list[Server] = []

    def make(*args: str) -> Server:
        s = Server(ledger.db, list(args)).start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def server(make_server) -> Server:
    return make_server()


@pytest.fixture
def client(server) -> Iterator[gapless.Client]:
    with gapless.Client(server.url) as c:
        yield c


def write_tokens(path: Path) -> dict[str, str]:
    """A tokens file (SPEC §4) with a reader, an `orders` writer and an admin."""
    tokens = {
        "read": "reader-0123456789abcdef",
        "write": "writer-0123456789abcdef",
        "admin": "admin-0123456789abcdefg",
    }
    path.write_text(
        f'[[token]]\nsecret = "{tokens["read"]}"\nscopes = ["read"]\n\n'
        f'[[token]]\nsecret = "{tokens["write"]}"\nscopes = ["read", "write"]\nprefixes = ["orders"]\n\n'
        f'[[token]]\nsecret = "{tokens["admin"]}"\nscopes = ["admin"]\n'
    )
    return tokens
