"""SPEC §7 against a real Airflow 3.3.2: a rule's firings start downstream
work exactly once per complete hour, however the hour's data arrived.

Two rules on asset `orders`, `--every 1h`, one delivering to the
`asset_uri` target (DAG `orders_hourly_asset` is scheduled on the window
asset) and one to the `dag_id` target (DAG `orders_hourly_dag`, triggered
through the REST API). Upstream lands six hours in 15-minute batches in
random order (GAPLESS_AIRFLOW_SEED repeats an order), with:

- one quarter of hour 3 missing until late: no run for hour 3 until it
  lands, then exactly one;
- hour 1 reprocessed as one whole-hour event after its quarters landed: no
  firing, no second run;
- a quarter of hour 4 retracted (an `incomplete` firing, which the targets
  do not take: no run) and landed again: a `complete` firing of generation
  2 and exactly one new run.

Every wait is bounded polling of Airflow's REST API; no sleep stands in for
synchronisation. The run counts are checked once more at the end, after
every run has finished, so a late extra run would still be caught.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from conftest import ASSET_DAG, ASSET_URI, JWT_SECONDS, TRIGGER_DAG, wait_for

DAY = datetime(2025, 6, 14, tzinfo=timezone.utc)
HOURS = 6
GAP_HOUR, GAP_QUARTER = 3, 2  # 03:30-03:45 lands late
REPROCESSED_HOUR = 1
RETRACTED_HOUR, RETRACTED_QUARTER = 4, 1  # 04:15-04:30
LOST_HOURS = (7, 8)  # test_a_lost_answer_is_not_sent_twice's own hours
RULES = {"orders_asset": ("airflow_asset", ASSET_DAG), "orders_dag": ("airflow_dag", TRIGGER_DAG)}
WAIT = 90  # seconds: the most any single step may take


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def key(hour: int) -> str:
    return (DAY + timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%S")


LOST_KEYS = {key(h) for h in LOST_HOURS}


def quarter(hour: int, q: int) -> tuple[str, str]:
    start = DAY + timedelta(hours=hour, minutes=15 * q)
    return iso(start), iso(start + timedelta(minutes=15))


def emit(gapless, start: str, end: str, ident: str, *extra: str):
    gapless.cli("emit", "orders", "--start", start, "--end", end, "--id", ident, *extra)


def run_counts(airflow, dag_id: str) -> Counter:
    """Runs per partition key, but for the other test's hour."""
    return Counter(
        r["partition_key"] for r in airflow.runs(dag_id) if r["partition_key"] not in LOST_KEYS
    )


def wait_runs(airflow, want: dict[str, int], what: str):
    """Wait until, on both DAGs, each key of `want` has that many runs
    (found with Airflow's partition_key filter); fail at once on more."""

    def reached():
        for _, dag_id in RULES.values():
            for k, n in want.items():
                got = len(airflow.runs_for_key(dag_id, k))
                assert got <= n, f"{dag_id}: {got} runs for partition_key {k}, expected {n}"
                if got < n:
                    return False
        return True

    wait_for(what, reached, WAIT, 0.25, airflow.procs)


def wait_delivered(gapless, count: int, what: str) -> list[dict]:
    """Wait until the ledger has `count` firings, every one delivered."""

    def done():
        f = gapless.firings()
        assert len(f) <= count, f"{len(f)} firings, expected {count}: {f}"
        states = [x["delivery"]["state"] for x in f]
        assert "failed" not in states, f
        return len(f) == count and all(s == "delivered" for s in states) and f

    return wait_for(what, done, WAIT, 0.2)


@pytest.fixture(scope="module")
def rules(gapless):
    """The two rules, one per target, made before any data lands."""
    gapless.cli("asset", "set", "orders", "--tz", "UTC")
    for rule, (target, _) in RULES.items():
        made = gapless.json(
            "rule", "set", rule, "--assets", "orders", "--every", "1h",
            "--from", iso(DAY), "--target", target,
        )
        assert made["outcome"] == "created" and made["firings"] == 0, made


def test_one_run_per_complete_hour(airflow, gapless, rules):
    seed = int(os.environ.get("GAPLESS_AIRFLOW_SEED") or random.randrange(1 << 30))
    print(f"seed {seed} (GAPLESS_AIRFLOW_SEED={seed} repeats this order)")
    rng = random.Random(seed)
    t0 = time.monotonic()
    base = len(gapless.firings())
    # The api-server's log is shared with the other tests: count from here.
    logins_before = airflow.answers("/auth/token", 201)
    refused_before = airflow.answers("/api/v2/assets/events", 401) + airflow.answers(
        f"/api/v2/dags/{TRIGGER_DAG}/dagRuns", 401
    )

    # Six hours of quarters in random order, hour 3's third one held back.
    quarters = [(h, q) for h in range(HOURS) for q in range(4)]
    rng.shuffle(quarters)
    for h, q in quarters:
        if (h, q) != (GAP_HOUR, GAP_QUARTER):
            emit(gapless, *quarter(h, q), f"q-{h}-{q}")
    complete = [h for h in range(HOURS) if h != GAP_HOUR]
    firings = wait_delivered(gapless, base + 2 * len(complete), "the first complete firings")
    assert sorted((f["rule"], f["key"], f["kind"], f["generation"]) for f in firings[base:]) == sorted(
        (rule, key(h), "complete", 1) for rule in RULES for h in complete
    )
    wait_runs(airflow, {key(h): 1 for h in complete}, "one run per complete hour")
    # Every other hour has its run by now: the hour with the gap has none.
    for _, dag_id in RULES.values():
        assert airflow.runs_for_key(dag_id, key(GAP_HOUR)) == [], dag_id
    t_first = time.monotonic() - t0

    # Hour 1 reprocessed as a whole: still complete, no firing.
    emit(gapless, iso(DAY + timedelta(hours=REPROCESSED_HOUR)),
         iso(DAY + timedelta(hours=REPROCESSED_HOUR + 1)), "reprocess-1")
    # Let the deliverer's token expire, whatever the pace of this machine:
    # the next deliveries are refused once and log in again.
    time.sleep(max(0.0, JWT_SECONDS + 1 - (time.monotonic() - t0 - t_first)))
    # The late quarter closes hour 3: one firing per rule, one run each. The
    # deliverer sends in ledger order, so once hour 3's runs exist a firing
    # of the reprocessing (recorded before) would have been sent too.
    emit(gapless, *quarter(GAP_HOUR, GAP_QUARTER), f"q-{GAP_HOUR}-{GAP_QUARTER}-late")
    firings = wait_delivered(gapless, base + 2 * HOURS, "hour 3's firings")
    assert sorted((f["rule"], f["key"], f["generation"]) for f in firings[-2:]) == [
        (rule, key(GAP_HOUR), 1) for rule in sorted(RULES)
    ]
    wait_runs(airflow, {key(h): 1 for h in range(HOURS)}, "hour 3's run")
    for _, dag_id in RULES.values():
        assert run_counts(airflow, dag_id)[key(REPROCESSED_HOUR)] == 1, dag_id

    # A quarter of hour 4 retracted: `incomplete` (not taken by the targets,
    # so delivered without a request), then landed again: generation 2.
    emit(gapless, *quarter(RETRACTED_HOUR, RETRACTED_QUARTER), "retract-4-1", "--retract")
    firings = wait_delivered(gapless, base + 2 * HOURS + 2, "the incomplete firings")
    for f in firings[-2:]:
        assert (f["kind"], f["key"], f["generation"]) == ("incomplete", key(RETRACTED_HOUR), 1), f
        assert f["delivery"]["attempts"] == 0, f
    emit(gapless, *quarter(RETRACTED_HOUR, RETRACTED_QUARTER), "reland-4-1")
    firings = wait_delivered(gapless, base + 2 * HOURS + 4, "the generation-2 firings")
    for f in firings[-2:]:
        assert (f["kind"], f["key"], f["generation"]) == ("complete", key(RETRACTED_HOUR), 2), f
    want = {key(h): 1 for h in range(HOURS)} | {key(RETRACTED_HOUR): 2}
    wait_runs(airflow, want, "hour 4's second run")
    t_scenario = time.monotonic() - t0

    # Every run finishes, its task having seen its partition key.
    runs = {}

    def all_finished():
        for _, dag_id in RULES.values():
            runs[dag_id] = [
                r for r in airflow.runs(dag_id) if r["partition_key"] not in LOST_KEYS
            ]
            states = [r["state"] for r in runs[dag_id]]
            assert "failed" not in states, runs[dag_id]
            if any(s != "success" for s in states):
                return False
        return True

    wait_for("every run to succeed", all_finished, 180, 0.5, airflow.procs)

    # Once more, with every run over: exactly the runs expected, no others.
    for _, dag_id in RULES.values():
        assert run_counts(airflow, dag_id) == Counter(want), dag_id
    trigger_ids = sorted(r["dag_run_id"] for r in runs[TRIGGER_DAG])
    assert trigger_ids == sorted(
        [f"gapless__orders_dag__{key(h)}__1" for h in range(HOURS)]
        + [f"gapless__orders_dag__{key(RETRACTED_HOUR)}__2"]
    )
    for r in runs[TRIGGER_DAG]:
        assert r["conf"]["rule"] == "orders_dag" and r["conf"]["key"] == r["partition_key"], r
    # The window asset's events: one per complete firing, each carrying it.
    asset_id = next(
        a["id"] for a in airflow.get("/api/v2/assets", uri_pattern=ASSET_URI)["assets"]
        if a["uri"] == ASSET_URI
    )
    events = airflow.get("/api/v2/assets/events", asset_id=asset_id, limit=100)["asset_events"]
    got = sorted(
        (e["partition_key"], e["extra"]["generation"])
        for e in events
        if e["partition_key"] not in LOST_KEYS
    )
    assert got == sorted([(key(h), 1) for h in range(HOURS)] + [(key(RETRACTED_HOUR), 2)])
    assert all(e["extra"]["gapless_firing"].endswith(f":orders_asset:{e['extra']['seq']}")
               for e in events), events
    # The tasks' own record of the keys they saw.
    seen = Counter(
        (dag_id, k)
        for dag_id, k, _ in map(str.split, airflow.record.read_text().splitlines())
        if k not in LOST_KEYS
    )
    assert seen == Counter(
        {(dag_id, k): n for _, dag_id in RULES.values() for k, n in want.items()}
    )
    # Tokens expired: the deliverer was refused some and logged in again.
    assert airflow.answers("/auth/token", 201) - logins_before >= 1
    assert airflow.answers("/api/v2/assets/events", 401) + airflow.answers(
        f"/api/v2/dags/{TRIGGER_DAG}/dagRuns", 401
    ) - refused_before >= 1
    # And the ledger: every firing delivered.
    firings = [f for f in gapless.firings() if f["key"] not in LOST_KEYS]
    assert len(firings) == 2 * HOURS + 4
    assert all(f["delivery"]["state"] == "delivered" for f in firings), firings
    t_total = time.monotonic() - t0

    print(
        f"airflow start {airflow.timings['airflow start']:.1f}s "
        f"(db migrate {airflow.timings['db migrate']:.1f}s, dags reserialize "
        f"{airflow.timings['dags reserialize']:.1f}s, processes to healthy "
        f"{airflow.timings['processes to healthy']:.1f}s); scenario: first runs "
        f"{t_first:.1f}s, all runs created {t_scenario:.1f}s, all runs succeeded "
        f"{t_total:.1f}s"
    )


def test_a_lost_answer_is_not_sent_twice(airflow, gapless, rules):
    """SPEC §7 Delivery: after an attempt whose outcome is unknown, the
    deliverer looks for the firing before sending it again. Hour 7 is
    delivered first (the deliverer then holds a token and the asset's id);
    then Airflow's api-server is stopped (SIGSTOP) while hour 8 completes,
    so each target's POST reaches its socket and times out. Resumed,
    Airflow may still handle the POSTs it had queued (or drop them: their
    clients are gone); the next attempts look for the asset event among the
    asset's events (`asset_uri`) or get 409 for the run id (`dag_id`), so
    each DAG gets exactly one run for hour 8.

    Airflow has no idempotency key: a look that Airflow answers while it is
    still handling the stale POST misses it, and the firing is sent twice.
    Only the backoff separates the two (the targets file's 6 s base against
    the 4 s request timeout: the POSTs time out at about 4 s and 8 s, the
    api-server is resumed just after, the first look comes at about 10 s)."""
    warm, hour = LOST_HOURS
    api = next(p for p in airflow.procs if p.name == "api-server")
    for q in range(4):
        emit(gapless, *quarter(warm, q), f"q-{warm}-{q}")
    before = len(gapless.firings())
    wait_delivered(gapless, before, "hour 7's firings")
    os.killpg(api.popen.pid, signal.SIGSTOP)
    try:
        for q in range(4):
            emit(gapless, *quarter(hour, q), f"q-{hour}-{q}")

        def both_timed_out():
            f = gapless.firings()[before:]
            errors = [x["delivery"]["last_error"] or "" for x in f]
            return len(f) == 2 and all(
                ("/api/v2/assets/events: no answer" in e or "/dagRuns: no answer" in e)
                for e in errors
            )

        wait_for("both POSTs to time out", both_timed_out, WAIT, 0.2)
    finally:
        os.killpg(api.popen.pid, signal.SIGCONT)
    firings = wait_delivered(gapless, before + 2, "hour 8's firings after Airflow resumed")
    for f in firings[before:]:
        assert f["delivery"]["attempts"] >= 2, f
    wait_runs(airflow, {key(warm): 1, key(hour): 1}, "hour 7's and hour 8's runs")

    def finished():
        runs = [r for _, d in RULES.values() for h in LOST_HOURS
                for r in airflow.runs_for_key(d, key(h))]
        assert all(r["state"] != "failed" for r in runs), runs
        return all(r["state"] == "success" for r in runs) and runs

    wait_for("hours 7 and 8's runs to succeed", finished, 120, 0.5, airflow.procs)
    for _, dag_id in RULES.values():
        for h in LOST_HOURS:
            assert len(airflow.runs_for_key(dag_id, key(h))) == 1, (dag_id, h)
    asset_id = next(
        a["id"] for a in airflow.get("/api/v2/assets", uri_pattern=ASSET_URI)["assets"]
        if a["uri"] == ASSET_URI
    )
    events = airflow.get("/api/v2/assets/events", asset_id=asset_id, limit=100)["asset_events"]
    assert [e["partition_key"] for e in events].count(key(hour)) == 1, events
