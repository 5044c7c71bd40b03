"""A real Apache Airflow 3.3.2 and a `gapless serve` that delivers to it.

Started from nothing in a temp dir for the test session, torn down (process
groups killed, the metadata database dropped) however the tests end:

- `airflow`: a fresh PostgreSQL database on the local server for Airflow's
  metadata (GAPLESS_AIRFLOW_PG, default postgresql+psycopg2://postgres@127.0.0.1:5432),
  `airflow db migrate`, `airflow dags reserialize`, then `airflow api-server`,
  `airflow dag-processor` and `airflow scheduler` (LocalExecutor) as three
  processes on free ports, ready once `/api/v2/monitor/health` says the
  scheduler and the dag-processor are healthy and both DAGs of `dags/` are
  known. Auth: the simple auth manager with one admin user `gapless`, its
  password read from the passwords file Airflow generates; API tokens
  expire after 5 s, so the deliverer has to log in again on 401.
  OpenLineage: the provider's transport (in every process's environment:
  LocalExecutor's task runners are the scheduler's children) is a
  composite of `http` to a `gapless serve` on a port chosen here
  (`Airflow.lineage_url`, api_key auth with `LINEAGE_TOKEN`; the test that
  needs it starts that server) and `file`, appending to
  `Airflow.lineage_file`; its emission policy lets only `orders_lineage`
  send events.
- `gapless`: `gapless serve` (GAPLESS_BIN) on a fresh SQLite ledger with a
  targets file naming two Airflow targets: `airflow_asset` (asset_uri
  gapless://orders/hourly) and `airflow_dag` (dag_id orders_hourly_dag),
  logging in with that username and password; each request is given 4 s
  and a failed attempt is tried again 6 s later (see
  test_a_lost_answer_is_not_sent_twice for why that long).

On a failing test the last lines of every process's log are added to the
report. GAPLESS_AIRFLOW_KEEP=1 keeps the temp dir (and says where).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from airflow_harness import (
    LOGS,
    Proc,
    Procs,
    add_logs,
    free_port,
    fresh_database,
    run,
    unwind_on_sigterm,
    wait_for,
    work_dir,
)

HERE = Path(__file__).resolve().parent
# How long Airflow's API tokens last: short, so that the deliverer's expire
# within a test and it has to log in again.
JWT_SECONDS = 5
USER = "gapless"
ASSET_URI = "gapless://orders/hourly"
ASSET_DAG = "orders_hourly_asset"
TRIGGER_DAG = "orders_hourly_dag"
# The one DAG whose OpenLineage events are sent, and the token the transport
# sends (api_key auth).
LINEAGE_DAG = "orders_lineage"
LINEAGE_TOKEN = "airflow-lineage-0123456789abcdef"
@pytest.fixture(scope="session")
def workdir():
    with work_dir("gapless-airflow-") as d:
        yield d


@pytest.fixture(scope="session")
def metadata_db():
    """A fresh PostgreSQL database for Airflow's metadata; dropped after."""
    with fresh_database() as url:
        yield url


@dataclass
class Airflow:
    url: str
    home: Path
    username: str
    password: str
    record: Path
    timings: dict
    client: httpx.Client = None
    # The environment and the `airflow` command its processes run with, for
    # a test that starts another of them (an api-server over HTTPS).
    env: dict | None = None
    bin: str = "airflow"
    # Where the OpenLineage transport sends (nothing listens until a test
    # starts gapless there) and the file it appends to.
    lineage_url: str = ""
    lineage_file: Path | None = None
    _token: str | None = None

    def token(self) -> str:
        if self._token is None:
            r = httpx.post(
                f"{self.url}/auth/token",
                json={"username": self.username, "password": self.password},
                timeout=30,
            )
            r.raise_for_status()
            self._token = r.json()["access_token"]
        return self._token

    def get(self, path: str, **params) -> dict:
        for _ in range(2):
            r = self.client.get(
                f"{self.url}{path}",
                params=params,
                headers={"Authorization": f"Bearer {self.token()}"},
            )
            if r.status_code != 401:
                break
            self._token = None  # expired (they last 5 s here): log in again
        r.raise_for_status()
        return r.json()

    def post(self, path: str, body: dict) -> dict:
        for _ in range(2):
            r = self.client.post(
                f"{self.url}{path}",
                json=body,
                headers={"Authorization": f"Bearer {self.token()}"},
            )
            if r.status_code != 401:
                break
            self._token = None  # expired: log in again
        if r.is_error:
            pytest.fail(f"POST {path} answered {r.status_code}: {r.text}")
        return r.json()

    def answers(self, path: str, status: int) -> int:
        """How many requests to `path` the api-server answered `status`
        (from its access log)."""
        log = LOGS["api-server"].read_text(errors="replace")
        return sum(
            1 for line in log.splitlines()
            if "request finished" in line and f" path={path} " in line
            and f"status_code={status}" in line
        )

    def runs(self, dag_id: str) -> list[dict]:
        """Every run of `dag_id` (paged)."""
        out, offset = [], 0
        while True:
            page = self.get(f"/api/v2/dags/{dag_id}/dagRuns", limit=100, offset=offset)
            out += page["dag_runs"]
            offset += 100
            if offset >= page["total_entries"] or not page["dag_runs"]:
                return out

    def runs_for_key(self, dag_id: str, key: str) -> list[dict]:
        """The runs whose partition_key is `key` (Airflow's filter is a
        substring match with `_` a wildcard: the exact key is kept here)."""
        page = self.get(
            f"/api/v2/dags/{dag_id}/dagRuns", partition_key_pattern=key, limit=100
        )
        return [r for r in page["dag_runs"] if r.get("partition_key") == key]


@pytest.fixture(scope="session")
def airflow(workdir, metadata_db):
    home = workdir / "airflow"
    dags = home / "dags"
    shutil.copytree(HERE / "dags", dags, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    record = workdir / "runs.txt"
    lineage_url = f"http://127.0.0.1:{free_port()}"
    lineage_file = workdir / "openlineage.ndjson"
    transport = {
        "type": "composite",
        "transports": {
            "gapless": {
                "type": "http",
                "url": lineage_url,
                "endpoint": "api/v1/lineage",
                "auth": {"type": "api_key", "apiKey": LINEAGE_TOKEN},
            },
            "file": {"type": "file", "log_file_path": str(lineage_file), "append": True},
        },
    }
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__") and k != "AIRFLOW_HOME"
    }
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
            "AIRFLOW__CORE__PARALLELISM": "2",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{url}/execution/",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": metadata_db,
            "AIRFLOW__API__HOST": "127.0.0.1",
            "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__API__BASE_URL": url,
            # One secret for the api-server and the scheduler: the tokens the
            # scheduler gives task runners are checked by the api-server.
            "AIRFLOW__API_AUTH__JWT_SECRET": uuid.uuid4().hex,
            "AIRFLOW__API__SECRET_KEY": uuid.uuid4().hex,
            # API tokens last JWT_SECONDS, so the deliverer's expire during the
            # tests: each 401 must make it log in again (SPEC §7 Delivery).
            "AIRFLOW__API_AUTH__JWT_EXPIRATION_TIME": str(JWT_SECONDS),
            "AIRFLOW__API_AUTH__JWT_LEEWAY": "0",
            "GAPLESS_AIRFLOW_RECORD": str(record),
            "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps(transport),
            "AIRFLOW__OPENLINEAGE__NAMESPACE": "gapless-tests",
            # Only LINEAGE_DAG sends events: the other tests' DAGs run as
            # they did without the provider.
            "AIRFLOW__OPENLINEAGE__EMISSION_POLICY": json.dumps(
                [
                    {"scope": {}, "controls": {"emit": False}},
                    {"scope": {"dag_id": LINEAGE_DAG}, "controls": {"emit": True}},
                ]
            ),
            "PYTHONUNBUFFERED": "1",
        }
    )
    airflow_bin = str(Path(sys.executable).parent / "airflow")
    logs = workdir / "logs"
    logs.mkdir()
    timings = {}
    t0 = time.monotonic()
    timings["db migrate"] = run(
        [airflow_bin, "db", "migrate"], env, workdir, logs / "db-migrate.log", 300
    )
    timings["dags reserialize"] = run(
        [airflow_bin, "dags", "reserialize"], env, workdir, logs / "dags-reserialize.log", 300
    )
    procs = Procs()
    try:
        t1 = time.monotonic()
        started = [
            procs.start("api-server", [airflow_bin, "api-server", "-w", "1"], env, workdir,
                        logs / "api-server.log"),
            procs.start("dag-processor", [airflow_bin, "dag-processor"], env, workdir,
                        logs / "dag-processor.log"),
            procs.start("scheduler", [airflow_bin, "scheduler", "--skip-serve-logs"], env,
                        workdir, logs / "scheduler.log"),
        ]

        def healthy():
            h = httpx.get(f"{url}/api/v2/monitor/health", timeout=5).json()
            return all(h.get(c, {}).get("status") == "healthy"
                       for c in ("metadatabase", "scheduler", "dag_processor")) and h

        wait_for("Airflow's health", healthy, 180, 0.5, started)
        passwords = home / "simple_auth_manager_passwords.json.generated"
        password = wait_for(
            "the generated passwords file",
            lambda: json.loads(passwords.read_text()).get(USER),
            30,
            procs=started,
        )
        af = Airflow(url, home, USER, password, record, timings, httpx.Client(timeout=30),
                     env=env, bin=airflow_bin, lineage_url=lineage_url,
                     lineage_file=lineage_file)

        def dags_known():
            for d in (ASSET_DAG, TRIGGER_DAG):
                info = af.get(f"/api/v2/dags/{d}")
                if info.get("is_paused"):
                    return False
            assets = af.get("/api/v2/assets", uri_pattern=ASSET_URI)["assets"]
            return any(a["uri"] == ASSET_URI for a in assets)

        wait_for("both DAGs and the window asset", dags_known, 120, 0.5, started)
        timings["processes to healthy"] = time.monotonic() - t1
        timings["airflow start"] = time.monotonic() - t0
        af.procs = started
        yield af
        af.client.close()
    finally:
        procs.stop_all()


@dataclass
class Gapless:
    bin: str
    url: str
    db: Path
    proc: Proc

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        r = subprocess.run(
            [self.bin, *args, "--url", self.url], capture_output=True, text=True, timeout=60, check=False
        )
        if check and r.returncode != 0:
            pytest.fail(
                f"gapless {' '.join(args)} exited with {r.returncode}: {r.stderr.strip()}"
            )
        return r

    def json(self, *args: str) -> dict:
        return json.loads(self.cli(*args, "--json").stdout)

    def firings(self) -> list[dict]:
        out, after = [], None
        while True:
            page = self.json("firings", *(["--after", str(after)] if after else []))
            out += page["firings"]
            after = page["next"]
            if after is None:
                return out


@pytest.fixture(scope="session")
def gapless(workdir, airflow):
    exe = os.environ.get("GAPLESS_BIN")
    if not exe or not os.access(exe, os.X_OK):
        pytest.fail(f"GAPLESS_BIN must name the gapless binary (got {exe!r})")
    port = free_port()
    targets = workdir / "targets.toml"
    common = f"""kind = "airflow"
url = "{airflow.url}"
username = "{airflow.username}"
password = "{airflow.password}"
timeout = "4s"
backoff = {{ base = "6s", max = "30s" }}
"""
    targets.write_text(
        'poll = "200ms"\n\n'
        f'[[target]]\nname = "airflow_asset"\n{common}asset_uri = "{ASSET_URI}"\n\n'
        f'[[target]]\nname = "airflow_dag"\n{common}dag_id = "{TRIGGER_DAG}"\n'
    )
    db = workdir / "ledger.db"
    procs = Procs()
    try:
        p = procs.start(
            "gapless-serve",
            [exe, "serve", "--db", str(db), "--listen", f"127.0.0.1:{port}",
             "--targets-file", str(targets)],
            dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "info")),
            workdir,
            workdir / "logs" / "gapless-serve.log",
        )
        url = f"http://127.0.0.1:{port}"
        wait_for("gapless serve", lambda: httpx.get(f"{url}/healthz", timeout=5).is_success,
                 30, 0.1, [p])
        yield Gapless(exe, url, db, p)
    finally:
        procs.stop_all()


def pytest_configure(config):
    unwind_on_sigterm()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    add_logs(outcome.get_result())
