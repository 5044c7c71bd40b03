"""What the real-Airflow suites share (python/tests/airflow and
python/tests/airflow_provider, python/tests/airflow_plugin): free ports,
bounded waiting, processes in their own process groups stopped together,
commands run to their end, a work folder, a fresh PostgreSQL database, and the pytest hooks that unwind on SIGTERM and
add the processes' logs to a failing test's report.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PG_BASE = os.environ.get("GAPLESS_AIRFLOW_PG", "postgresql+psycopg2://postgres@127.0.0.1:5432")

# Every process this session started, with its log: torn down at the end,
# the logs' tails shown when a test fails.
LOGS: dict[str, Path] = {}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what: str, check, timeout: float, interval: float = 0.2, procs=()):
    """Call `check` until it returns something truthy (returned) or
    `timeout` seconds pass (a failure naming `what` and the last value or
    error). A process of `procs` that exits is a failure at once."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        for p in procs:
            if p.popen.poll() is not None:
                pytest.fail(f"{p.name} exited with {p.popen.returncode} while waiting for {what}")
        try:
            got = check()
            if got:
                return got
            last = got
        except Exception as e:  # noqa: BLE001 (kept to say what went wrong)
            last = f"{type(e).__name__}: {e}"
        if time.monotonic() >= deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
        time.sleep(interval)


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log: Path


@dataclass
class Procs:
    """Processes started in their own process group, stopped together."""

    started: list[Proc] = field(default_factory=list)

    def start(self, name: str, argv: list[str], env: dict, cwd: Path, log: Path) -> Proc:
        with open(log, "ab") as out:
            popen = subprocess.Popen(
                argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        p = Proc(name, popen, log)
        self.started.append(p)
        LOGS[name] = log
        return p

    def stop_all(self, grace: float = 10.0):
        for p in reversed(self.started):
            signal_group(p.popen, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in reversed(self.started):
            try:
                p.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            # The group may hold children (task runners, gunicorn workers)
            # after its leader exited: kill whatever is left.
            signal_group(p.popen, signal.SIGKILL)
            try:
                p.popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.started.clear()


def signal_group(popen: subprocess.Popen, sig: int):
    try:
        os.killpg(popen.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: list[str], env: dict, cwd: Path, log: Path, timeout: float) -> float:
    """Run a command to its end (its output appended to `log`); its seconds."""
    t0 = time.monotonic()
    with open(log, "ab") as out:
        r = subprocess.run(
            argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
        )
    LOGS[Path(log).stem] = log
    if r.returncode != 0:
        pytest.fail(f"{' '.join(argv)} exited with {r.returncode} (see {log})")
    return time.monotonic() - t0



@contextmanager
def work_dir(prefix: str):
    """A fresh temporary folder, removed after unless GAPLESS_AIRFLOW_KEEP
    is set (then its path is printed, to read the processes' files)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield d
    finally:
        if os.environ.get("GAPLESS_AIRFLOW_KEEP"):
            print(f"\nkept {d}", file=sys.stderr)
        else:
            shutil.rmtree(d, ignore_errors=True)


@contextmanager
def fresh_database(prefix: str = "gapless_airflow"):
    """A fresh PostgreSQL database on PG_BASE (its SQLAlchemy URL); dropped after."""
    import psycopg2

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    dsn = PG_BASE.replace("postgresql+psycopg2://", "postgresql://", 1)
    admin = psycopg2.connect(f"{dsn}/postgres")
    admin.autocommit = True
    with admin.cursor() as c:
        c.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{PG_BASE}/{name}"
    finally:
        with admin.cursor() as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def unwind_on_sigterm():
    """A SIGTERM (a CI job's time limit, a ^C'd script) unwinds like ^C, so
    the fixtures still stop Airflow and drop its database: the processes
    run in their own sessions and would outlive pytest otherwise."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


def add_logs(report, lines: int = 60):
    """On a failed test, the last lines of every process's log."""
    if report.failed:
        for name, path in LOGS.items():
            try:
                tail = Path(path).read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            report.sections.append((f"log of {name} ({path})", "\n".join(tail)))
