"""The provider against a real Apache Airflow 3.3.2 and a real `gapless serve`.

Set up from nothing in a temp dir for the test session, torn down however
the tests end:

- Airflow's configuration is this process's environment, set here before
  anything imports Airflow: AIRFLOW_HOME in the temp dir, its DAGs folder
  holding `dags/` of this directory and the provider's example DAGs, the
  metadata in a fresh PostgreSQL database (GAPLESS_AIRFLOW_PG, dropped
  after), the connection `gapless_default` (AIRFLOW_CONN_GAPLESS_DEFAULT)
  naming the gapless server below.
- `airflow_db` (session): `airflow db migrate` and `airflow dags
  reserialize` (which registers the DAGs' assets and records import
  errors). `dag.test()` runs in this process on that database: no
  scheduler, api-server or triggerer (dag.test runs triggers inline).
- `api` (session, for the sync tests and the example DAGs' import errors):
  one `airflow api-server`, an admin user `gapless` of the simple auth
  manager with its generated password.
- `gapless` (session): `gapless serve` (GAPLESS_BIN) on a fresh SQLite
  ledger; each test uses assets of its own names, so tests stay apart.

The provider and the client must be installed in the running Python as
distributions (scripts/test-airflow does it): Airflow finds the provider
through its `apache_airflow_provider` entry point.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
from airflow_harness import (  # noqa: E402
    Procs,
    add_logs,
    free_port,
    fresh_database,
    run,
    unwind_on_sigterm,
    wait_for,
)

os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(ROOT / "target" / "hypothesis"))
from hypothesis import settings  # noqa: E402

settings.register_profile("gapless", database=None, deadline=None)
settings.load_profile("gapless")

USER = "gapless"
WORKDIR = Path(tempfile.mkdtemp(prefix="gapless-provider-"))
HOME = WORKDIR / "airflow"
DAGS = HOME / "dags"
LOGDIR = WORKDIR / "logs"
OUT = WORKDIR / "out"
GAPLESS_PORT = free_port()
API_PORT = free_port()
API_URL = f"http://127.0.0.1:{API_PORT}"
GAPLESS_URL = f"http://127.0.0.1:{GAPLESS_PORT}"

for d in (DAGS, LOGDIR, OUT):
    d.mkdir(parents=True, exist_ok=True)
shutil.copytree(HERE / "dags", DAGS, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
_EXAMPLES = ROOT / "python" / "airflow-provider-gapless" / "src" / "gapless_airflow" / "example_dags"
for f in _EXAMPLES.glob("example_*.py"):
    shutil.copy(f, DAGS / f.name)

_DB = fresh_database("gapless_provider")
METADATA_DB = _DB.__enter__()

for k in [k for k in os.environ if k.startswith(("AIRFLOW__", "AIRFLOW_CONN_"))]:
    del os.environ[k]
os.environ.update(
    {
        "AIRFLOW_HOME": str(HOME),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "True",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{API_URL}/execution/",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": METADATA_DB,
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(API_PORT),
        "AIRFLOW__API__BASE_URL": API_URL,
        "AIRFLOW__API_AUTH__JWT_SECRET": uuid.uuid4().hex,
        "AIRFLOW__API__SECRET_KEY": uuid.uuid4().hex,
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(LOGDIR / "tasks"),
        "AIRFLOW_CONN_GAPLESS_DEFAULT": json.dumps(
            {"conn_type": "gapless", "host": "127.0.0.1", "port": GAPLESS_PORT}
        ),
        "GAPLESS_PROVIDER_OUT": str(OUT),
        "PYTHONUNBUFFERED": "1",
    }
)
AIRFLOW = str(Path(sys.executable).parent / "airflow")
PROCS = Procs()


def pytest_configure(config):
    unwind_on_sigterm()


def pytest_unconfigure(config):
    PROCS.stop_all()
    try:
        _DB.__exit__(None, None, None)
    except Exception as e:  # noqa: BLE001 (said, not raised, at the very end)
        print(f"dropping {METADATA_DB}: {e}", file=sys.stderr)
    if os.environ.get("GAPLESS_AIRFLOW_KEEP"):
        print(f"\nkept {WORKDIR}", file=sys.stderr)
    else:
        shutil.rmtree(WORKDIR, ignore_errors=True)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    add_logs(outcome.get_result())


# -- the gapless server ---------------------------------------------------------------


@dataclass
class Gapless:
    url: str
    bin: str

    def client(self):
        import gapless

        return gapless.Client(self.url)


@pytest.fixture(scope="session")
def gapless_server() -> Gapless:
    exe = os.environ.get("GAPLESS_BIN")
    if not exe or not os.access(exe, os.X_OK):
        pytest.fail(f"GAPLESS_BIN must name the gapless binary (got {exe!r})")
    p = PROCS.start(
        "gapless-serve",
        [exe, "serve", "--db", str(WORKDIR / "ledger.db"), "--listen", f"127.0.0.1:{GAPLESS_PORT}"],
        dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "info")),
        WORKDIR,
        LOGDIR / "gapless-serve.log",
    )
    wait_for("gapless serve", lambda: httpx.get(f"{GAPLESS_URL}/healthz", timeout=5).is_success, 30, 0.1, [p])
    return Gapless(GAPLESS_URL, exe)


@pytest.fixture(scope="session")
def client(gapless_server):
    c = gapless_server.client()
    yield c
    c.close()


# -- Airflow ------------------------------------------------------------------------


TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="session")
def airflow_db():
    """The metadata database migrated and the DAGs folder serialized."""
    env = dict(os.environ)
    TIMINGS["db migrate"] = run([AIRFLOW, "db", "migrate"], env, WORKDIR, LOGDIR / "db-migrate.log", 300)
    TIMINGS["dags reserialize"] = run(
        [AIRFLOW, "dags", "reserialize"], env, WORKDIR, LOGDIR / "dags-reserialize.log", 300
    )
    return METADATA_DB


@dataclass
class Api:
    """Airflow's REST API as the admin user (logged in again on a 401)."""

    url: str
    username: str
    password: str
    http: httpx.Client
    _token: str | None = None

    def token(self) -> str:
        if self._token is None:
            r = self.http.post(f"{self.url}/auth/token", json={"username": self.username, "password": self.password})
            r.raise_for_status()
            self._token = r.json()["access_token"]
        return self._token

    def request(self, method: str, path: str, **kw) -> httpx.Response:
        for _ in range(2):
            r = self.http.request(method, f"{self.url}{path}", headers={"Authorization": f"Bearer {self.token()}"}, **kw)
            if r.status_code != 401:
                return r
            self._token = None
        return r

    def get(self, path: str, **params) -> dict:
        r = self.request("GET", path, params=params)
        r.raise_for_status()
        return r.json()

    def asset_id(self, uri: str) -> int:
        assets = self.get("/api/v2/assets", uri_pattern=uri, limit=100)["assets"]
        for a in assets:
            if a["uri"] == uri:
                return a["id"]
        raise KeyError(f"no Airflow asset {uri}")

    def post_event(self, asset_id: int, partition_key: str | None = None, extra: dict | None = None) -> dict:
        body: dict = {"asset_id": asset_id, "extra": extra or {}}
        if partition_key is not None:
            body["partition_key"] = partition_key
        r = self.request("POST", "/api/v2/assets/events", json=body)
        assert r.status_code == 200, f"POST /api/v2/assets/events {body}: {r.status_code} {r.text}"
        return r.json()


@pytest.fixture(scope="session")
def api(airflow_db) -> Api:
    t0 = time.monotonic()
    p = PROCS.start("api-server", [AIRFLOW, "api-server", "-w", "1"], dict(os.environ), WORKDIR, LOGDIR / "api-server.log")
    wait_for(
        "Airflow's api-server",
        lambda: httpx.get(f"{API_URL}/api/v2/monitor/health", timeout=5).json()["metadatabase"]["status"] == "healthy",
        180,
        0.5,
        [p],
    )
    passwords = HOME / "simple_auth_manager_passwords.json.generated"
    password = wait_for("the generated passwords file", lambda: json.loads(passwords.read_text()).get(USER), 30, procs=[p])
    TIMINGS["api-server start"] = time.monotonic() - t0
    a = Api(API_URL, USER, password, httpx.Client(timeout=30))
    yield a
    a.http.close()


# -- dag.test() in this process --------------------------------------------------------


def load_dag(dag_id: str):
    """The DAG object of `dag_id` from the DAGs folder (as dag.test() needs
    it: the file's own object, which the bundle sync also finds)."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS))
    assert dag_id in bag.dags, f"{dag_id} not in {sorted(bag.dags)} (import errors: {bag.import_errors})"
    return bag.dags[dag_id]


def out(dag_id: str) -> dict:
    """What the DAG's `keep` task wrote: {task_id: xcom} of the sensor it follows."""
    path = OUT / f"{dag_id}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def clear_out(dag_id: str) -> None:
    (OUT / f"{dag_id}.json").unlink(missing_ok=True)


def ti_states(dr) -> dict[str, str]:
    from airflow.utils.session import create_session

    with create_session() as session:
        return {ti.task_id: str(ti.state) for ti in dr.get_task_instances(session=session)}


@pytest.fixture
def partition_key(monkeypatch):
    """`set(key)`: the next dag.test() run gets that partition_key (dag.test
    takes none of its own)."""
    import airflow.models.dagrun as dagrun_mod

    original = dagrun_mod.get_or_create_dagrun
    holder: dict[str, str] = {}

    def with_key(**kw):
        dr = original(**kw)
        if holder.get("key"):
            session = kw["session"]
            dr.partition_key = holder["key"]
            session.merge(dr)
            session.commit()
        return dr

    monkeypatch.setattr(dagrun_mod, "get_or_create_dagrun", with_key)
    return lambda key: holder.__setitem__("key", key)


def served(path: str) -> int:
    """How many requests whose path starts with `path` the gapless server
    has answered (from its log: one line per answered request)."""
    log = LOGDIR / "gapless-serve.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return sum(1 for line in text.splitlines() if "finished processing request" in line and f"uri={path}" in line)


def later(seconds: float, fn, after: str | None = None):
    """Run `fn` on a thread `seconds` after the gapless server has answered
    a request to `after` (a path prefix: the sensor has seen the range
    incomplete) or after `seconds` when None; join() it after the run."""
    import threading

    errors: list[BaseException] = []
    before = served(after) if after else 0

    def go():
        try:
            if after:
                deadline = time.monotonic() + 120
                while served(after) <= before:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"no request to {after} in 120 s")
                    time.sleep(0.05)
            time.sleep(seconds)
            fn()
        except BaseException as e:  # noqa: BLE001 (raised again by join)
            errors.append(e)

    th = threading.Thread(target=go, daemon=True)
    th.start()

    class Handle:
        def join(self):
            th.join(60)
            if errors:
                raise errors[0]

    return Handle()


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.write_line(
            "airflow set-up: " + ", ".join(f"{k} {v:.1f}s" for k, v in TIMINGS.items())
        )
