"""Fixtures of the producer adapters' tests (scripts/test-producers).

The `gapless serve` processes are the client tests' own: `Server`, the
`ledger` fixture (SQLite and PostgreSQL) and friends are imported from
python/tests/client/conftest.py (loaded under another module name, so the
two conftest files never clash), not copied.

- `spark`: one SparkSession for the test module (local[2], two shuffle
  partitions, no UI), stopped after it.
- `module_server`: one `gapless serve` on a SQLite ledger for a module (the
  Spark tests: a fresh asset name per test keeps them apart).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"

_spec = importlib.util.spec_from_file_location(
    "gapless_client_conftest", HERE.parent / "client" / "conftest.py"
)
assert _spec is not None and _spec.loader is not None
shared = importlib.util.module_from_spec(_spec)
sys.modules["gapless_client_conftest"] = shared
_spec.loader.exec_module(shared)

import gapless  # noqa: E402  (from python/gapless/src: the shared conftest put it on sys.path)

# The fixtures reused as they are: a ledger on each backend, servers on it.
ledger = shared.ledger
make_server = shared.make_server
server = shared.server
client = shared.client
Server = shared.Server
pytest_configure = shared.pytest_configure


def load(name: str):
    return json.loads((DATA / name).read_text())


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[Server]:
    s = Server(str(tmp_path_factory.mktemp("ledger") / "ledger.db")).start()
    yield s
    s.stop()


@pytest.fixture(scope="module")
def module_client(module_server) -> Iterator[gapless.Client]:
    with gapless.Client(module_server.url) as c:
        yield c


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    warehouse = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("gapless-producers")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(warehouse / "warehouse"))
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
