"""A real Airflow 3.3.2 with its OpenLineage provider (pinned in
python/requirements/airflow.txt) sending to a real `gapless serve` with
tokens (SPEC §4 `POST /api/v1/lineage`, §10 `openlineage`).

The suite's Airflow (conftest.py) runs every process with the provider's
transport set to a composite of `http` (api_key auth, to the server this
module starts on the port conftest chose) and `file`. The DAG
`orders_lineage` (dags/gapless_lineage.py) writes the asset
`file:///lake/orders` for an hourly data interval. Four runs with explicit
data intervals: two that succeed, one whose task fails on its first try and
succeeds on its retry, one whose task fails on both tries. gapless must then
cover exactly the three successful hours, the failed one a gap; and the
events the file transport wrote, replayed with `gapless ingest --format
openlineage` into a fresh ledger, store the same events.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta, timezone

import httpx
import pytest
from conftest import LINEAGE_DAG, LINEAGE_TOKEN

import gapless
from airflow_harness import Procs, wait_for

DAG_ID = LINEAGE_DAG
TASK_ID = "write_orders"
ASSET = "file:///lake/orders"
READ_TOKEN = "lineage-reader-0123456789abcdef"
DAY = datetime(2025, 1, 1, tzinfo=timezone.utc)
# Hour of 2025-01-01 -> how many of the task's tries fail (it has one retry).
RUNS = {1: 0, 2: 1, 3: 2, 4: 0}


def hour(h: int) -> tuple[datetime, datetime]:
    return DAY + timedelta(hours=h), DAY + timedelta(hours=h + 1)


@pytest.fixture(scope="module")
def lineage_server(workdir, airflow):
    """`gapless serve` where Airflow's OpenLineage transport sends: a tokens
    file with the transport's token (a writer of `file:///lake/`) and a
    reader; a fresh SQLite ledger."""
    exe = os.environ.get("GAPLESS_BIN")
    if not exe or not os.access(exe, os.X_OK):
        pytest.fail(f"GAPLESS_BIN must name the gapless binary (got {exe!r})")
    tokens = workdir / "lineage-tokens.toml"
    tokens.write_text(
        f'[[token]]\nsecret = "{LINEAGE_TOKEN}"\nscopes = ["read", "write"]\n'
        'prefixes = ["file:///lake/"]\n\n'
        f'[[token]]\nsecret = "{READ_TOKEN}"\nscopes = ["read"]\n'
    )
    listen = airflow.lineage_url.removeprefix("http://")
    procs = Procs()
    try:
        p = procs.start(
            "gapless-lineage",
            [exe, "serve", "--db", str(workdir / "lineage.db"), "--listen", listen,
             "--tokens-file", str(tokens)],
            dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "info")),
            workdir,
            workdir / "logs" / "gapless-lineage.log",
        )
        wait_for("gapless serve (lineage)",
                 lambda: httpx.get(f"{airflow.lineage_url}/healthz", timeout=5).is_success,
                 30, 0.1, [p])
        yield exe
    finally:
        procs.stop_all()


def events_json(exe: str, *where: str, token: str | None = None) -> list[tuple]:
    """The asset's events as `gapless events --json` gives them (`where`:
    `--db PATH` or `--url URL`): (id, start, end, kind, extra, produced_at)."""
    env = {k: v for k, v in os.environ.items() if k != "GAPLESS_TOKEN"}
    if token:
        env["GAPLESS_TOKEN"] = token
    r = subprocess.run(
        [exe, *where, "events", ASSET, "--json"],
        capture_output=True, text=True, timeout=60, check=False, env=env,
    )
    assert r.returncode == 0, r.stderr
    return sorted(
        (e["id"], e["start"], e["end"], e["kind"], json.dumps(e["extra"], sort_keys=True),
         e["produced_at"])
        for e in json.loads(r.stdout)["events"]
    )


def test_coverage_is_exactly_the_successful_intervals(airflow, lineage_server, workdir):
    wait_for(f"the DAG {DAG_ID}",
             lambda: not airflow.get(f"/api/v2/dags/{DAG_ID}")["is_paused"], 60, 0.5,
             airflow.procs)
    for h, fail_tries in RUNS.items():
        start, end = hour(h)
        airflow.post(
            f"/api/v2/dags/{DAG_ID}/dagRuns",
            {
                "dag_run_id": f"lineage_h{h:02d}",
                "logical_date": start.isoformat(),
                "data_interval_start": start.isoformat(),
                "data_interval_end": end.isoformat(),
                "conf": {"fail_tries": fail_tries},
            },
        )

    def finished():
        runs = {r["dag_run_id"]: r["state"] for r in airflow.runs(DAG_ID)}
        return all(s in ("success", "failed") for s in runs.values()) and len(runs) == 4 and runs

    states = wait_for("the four runs to finish", finished, 300, 1, airflow.procs)
    assert states == {
        "lineage_h01": "success",
        "lineage_h02": "success",
        "lineage_h03": "failed",
        "lineage_h04": "success",
    }
    tries = {
        h: airflow.get(f"/api/v2/dags/{DAG_ID}/dagRuns/lineage_h{h:02d}/taskInstances/{TASK_ID}")
        for h in RUNS
    }
    assert {h: (ti["state"], ti["try_number"]) for h, ti in tries.items()} == {
        1: ("success", 1),
        2: ("success", 2),
        3: ("failed", 2),
        4: ("success", 1),
    }

    with gapless.Client(airflow.lineage_url, token=READ_TOKEN) as reader:
        # The listener sends a task's COMPLETE as the task ends, beside its
        # state: wait for the three successful tries' events.
        def recorded():
            try:
                return len(list(reader.events(ASSET))) >= 3
            except gapless.NotFound:
                return False

        wait_for(f"three events of {ASSET}", recorded, 60, 0.5, airflow.procs)
        events = list(reader.events(ASSET))
        assert sorted((e.start, e.end) for e in events) == [hour(1), hour(2), hour(4)]
        assert len({e.id for e in events}) == 3
        assert all(e.id.startswith("openlineage:") and e.kind == "landed" for e in events)
        assert {e.extra["job_name"] for e in events} == {f"{DAG_ID}.{TASK_ID}"}
        assert {e.extra["job_namespace"] for e in events} == {"gapless-tests"}
        # Exactly the successful hours: the failed one and the hours no run
        # wrote are gaps.
        check = reader.check(ASSET, DAY, DAY + timedelta(hours=6))
        assert [(i.start, i.end) for i in check.missing] == [hour(0), hour(3), hour(5)]
        assert [a.asset for a in reader.assets()] == [ASSET]
    live = events_json(lineage_server, "--url", airflow.lineage_url, token=READ_TOKEN)
    assert len(live) == 3

    # The file transport wrote the same events: replayed into a fresh
    # ledger, they store the same events, id for id.
    def completes_in_file():
        lines = airflow.lineage_file.read_text().splitlines()
        done = [json.loads(line) for line in lines]
        return sum(1 for e in done if e["eventType"] == "COMPLETE" and e.get("outputs")) >= 3

    wait_for("the file transport's three COMPLETEs", completes_in_file, 30, 0.5)
    fresh = workdir / "replayed.db"
    r = subprocess.run(
        [lineage_server, "--db", str(fresh), "ingest", "--format", "openlineage",
         str(airflow.lineage_file), "--json"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"accepted": 3, "duplicates": 0}
    assert "left out" in r.stderr  # the STARTs, FAILs and DAG-level events
    assert events_json(lineage_server, "--db", str(fresh)) == live
