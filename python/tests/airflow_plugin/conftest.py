"""A real Apache Airflow 3.3.2 with the provider (and so its UI plugin)
installed, a `gapless serve` with tokens, and a real headless Chromium.

- `gapless`: `gapless serve` (GAPLESS_BIN) with a tokens file (a read
  token and an admin token) on a SQLite ledger filled with the command line
  before it starts: `orders` on 2025-06-14 03:00-05:00 less 03:10-03:20,
  `orders_hourly` 03:00-04:00, and `orders` over the last 30 hours less two
  hours (so the last days' heat map has every state); then the rule
  `orders_rule` (orders, 1h, that day). It can be stopped and started
  again on its port.
- `airflow`: a fresh PostgreSQL database, `airflow db migrate`, `dags
  reserialize`, then api-server, dag-processor and scheduler (LocalExecutor)
  with the DAGs of `dags/`, the simple auth manager with one admin user,
  and the `gapless_default` connection (the read token) as an environment
  variable. Ready once healthy and `plugin_orders` is known.
- `browser`: Chromium (GAPLESS_CHROMIUM, else /usr/bin/chromium) through
  Playwright; `logged_in` a context logged into Airflow through its login
  form, every request it makes kept in `requests`.

GAPLESS_AIRFLOW_SCREENSHOTS=DIR writes the views' screenshots there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from airflow_harness import (
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
USER = "gapless"
DAG_ID = "plugin_orders"
RULE = "orders_rule"
CHROMIUM = os.environ.get("GAPLESS_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def workdir() -> Iterator[Path]:
    with work_dir("gapless-airflow-plugin-") as d:
        (d / "logs").mkdir()
        yield d


def _z(d: datetime) -> str:
    return d.strftime("%Y-%m-%dT%H:%M:%SZ")


def ledger_lines(now: datetime) -> str:
    hour = now.replace(minute=0, second=0, microsecond=0)
    events = [
        {"asset": "orders", "id": "a", "start": "2025-06-14T03:00:00Z", "end": "2025-06-14T03:10:00Z"},
        {"asset": "orders", "id": "b", "start": "2025-06-14T03:20:00Z", "end": "2025-06-14T05:00:00Z"},
        {"asset": "orders_hourly", "id": "h", "start": "2025-06-14T03:00:00Z", "end": "2025-06-14T04:00:00Z"},
        # The last 30 hours but two, one of them half: complete, partial
        # and empty windows in the heat map of the last days.
        {"asset": "orders", "id": "r1", "start": _z(hour - timedelta(hours=30)), "end": _z(hour - timedelta(hours=12))},
        {"asset": "orders", "id": "r2", "start": _z(hour - timedelta(hours=10, minutes=30)), "end": _z(hour)},
    ]
    return "".join(json.dumps(e) + "\n" for e in events)


@dataclass
class Gapless:
    bin: str
    url: str
    port: int
    db: Path
    read_token: str
    argv: list[str]
    workdir: Path
    procs: Procs = field(default_factory=Procs)
    proc: Proc | None = None

    def start(self) -> None:
        self.proc = self.procs.start("gapless-serve", self.argv, dict(os.environ), self.workdir,
                                     self.workdir / "logs" / "gapless-serve.log")
        wait_for("gapless serve", lambda: httpx.get(f"{self.url}/healthz", timeout=5).is_success,
                 30, 0.1, [self.proc])

    def stop(self) -> None:
        self.procs.stop_all()
        self.proc = None

    def json(self, *args: str) -> dict:
        """The command line against the server with the read token."""
        r = subprocess.run([self.bin, *args, "--url", self.url, "--json"], capture_output=True, text=True,
                           timeout=60, check=False, env=dict(os.environ, GAPLESS_TOKEN=self.read_token))
        assert r.returncode in (0, 1), f"gapless {' '.join(args)}: exit {r.returncode}: {r.stderr}"
        return json.loads(r.stdout)


@pytest.fixture(scope="session")
def gapless(workdir) -> Iterator[Gapless]:
    exe = os.environ.get("GAPLESS_BIN")
    if not exe or not os.access(exe, os.X_OK):
        pytest.fail(f"GAPLESS_BIN must name the gapless binary (got {exe!r})")
    db = workdir / "ledger.db"
    done = subprocess.run([exe, "--db", str(db), "ingest", "-"], input=ledger_lines(datetime.now(timezone.utc)),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    read, admin = uuid.uuid4().hex, uuid.uuid4().hex
    tokens = workdir / "tokens.toml"
    tokens.write_text(f'[[token]]\nsecret = "{read}"\nscopes = ["read"]\n\n'
                      f'[[token]]\nsecret = "{admin}"\nscopes = ["admin"]\n')
    port = free_port()
    g = Gapless(exe, f"http://127.0.0.1:{port}", port, db, read,
                [exe, "serve", "--db", str(db), "--listen", f"127.0.0.1:{port}", "--tokens-file", str(tokens)],
                workdir)
    g.start()
    # A rule on `orders` over that day: its firing of 04:00 is complete, and
    # a run the `dag_id` target would make for it names it (SPEC §7).
    rule = subprocess.run(
        [exe, "rule", "set", RULE, "--assets", "orders", "--every", "1h", "--from", "2025-06-14",
         "--until", "2025-06-15", "--url", g.url],
        capture_output=True, text=True, timeout=60, check=False, env=dict(os.environ, GAPLESS_TOKEN=admin),
    )
    assert rule.returncode == 0, rule.stderr
    try:
        yield g
    finally:
        g.stop()


@dataclass
class Airflow:
    url: str
    username: str
    password: str
    bin: str
    env: dict
    _token: str | None = None

    def token(self) -> str:
        if self._token is None:
            r = httpx.post(f"{self.url}/auth/token", json={"username": self.username, "password": self.password},
                           timeout=30)
            r.raise_for_status()
            self._token = r.json()["access_token"]
        return self._token

    def request(self, method: str, path: str, **kw) -> httpx.Response:
        return httpx.request(method, f"{self.url}{path}", headers={"Authorization": f"Bearer {self.token()}"},
                             timeout=30, **kw)


@pytest.fixture(scope="session")
def airflow(workdir, gapless) -> Iterator[Airflow]:
    home = workdir / "airflow"
    dags = home / "dags"
    shutil.copytree(HERE / "dags", dags, ignore=shutil.ignore_patterns("__pycache__"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW__") and k != "AIRFLOW_HOME"}
    env.update({
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": f"{USER}:admin",
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"{url}/execution/",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": url,
        "AIRFLOW__API_AUTH__JWT_SECRET": uuid.uuid4().hex,
        "AIRFLOW__API__SECRET_KEY": uuid.uuid4().hex,
        "AIRFLOW_CONN_GAPLESS_DEFAULT": json.dumps({"conn_type": "gapless", "host": "127.0.0.1",
                                                    "port": gapless.port, "password": gapless.read_token}),
        "PYTHONUNBUFFERED": "1",
    })
    airflow_bin = str(Path(sys.executable).parent / "airflow")
    logs = workdir / "logs"
    with fresh_database("gapless_airflow_plugin") as metadata:
        env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] = metadata
        run([airflow_bin, "db", "migrate"], env, workdir, logs / "db-migrate.log", 300)
        run([airflow_bin, "dags", "reserialize"], env, workdir, logs / "dags-reserialize.log", 300)
        procs = Procs()
        try:
            started = [
                procs.start("api-server", [airflow_bin, "api-server", "-w", "1"], env, workdir,
                            logs / "api-server.log"),
                procs.start("dag-processor", [airflow_bin, "dag-processor"], env, workdir,
                            logs / "dag-processor.log"),
                procs.start("scheduler", [airflow_bin, "scheduler", "--skip-serve-logs"], env, workdir,
                            logs / "scheduler.log"),
            ]

            def healthy():
                h = httpx.get(f"{url}/api/v2/monitor/health", timeout=5).json()
                return all(h.get(c, {}).get("status") == "healthy"
                           for c in ("metadatabase", "scheduler", "dag_processor"))

            wait_for("Airflow's health", healthy, 180, 0.5, started)
            passwords = home / "simple_auth_manager_passwords.json.generated"
            password = wait_for("the generated passwords file",
                                lambda: json.loads(passwords.read_text()).get(USER), 30, procs=started)
            af = Airflow(url, USER, password, airflow_bin, env)
            wait_for(f"DAG {DAG_ID}", lambda: af.request("GET", f"/api/v2/dags/{DAG_ID}").is_success,
                     120, 0.5, started)
            yield af
        finally:
            procs.stop_all()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium, or set GAPLESS_CHROMIUM")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield b
        b.close()


@dataclass
class Session:
    context: BrowserContext
    requests: list[str]


@pytest.fixture
def logged_in(browser, airflow) -> Iterator[Session]:
    """A browser context logged into Airflow through its login form."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.goto(f"{airflow.url}/")
    page.locator("input[name='username']").fill(airflow.username)
    page.locator("input[name='password']").fill(airflow.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda u: "/auth/" not in u, timeout=60_000)
    wait_for("the session cookie", lambda: any(c["name"] == "_token" for c in context.cookies()), 30)
    page.close()
    yield Session(context, requests)
    context.close()


def screenshot(page, name: str) -> None:
    out = os.environ.get("GAPLESS_AIRFLOW_SCREENSHOTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(out) / name))


def pytest_configure(config):
    unwind_on_sigterm()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    add_logs(outcome.get_result())
