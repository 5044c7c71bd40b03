"""The provider as Airflow sees it (found through its entry point, its
example DAGs parse), and the parts that need no running DAG: errors that
name the input and the reason in one line, the hook's URL, the trigger's
serialization, policies."""

from __future__ import annotations

import asyncio
import subprocess
import time
from types import SimpleNamespace as C

import pytest
from conftest import AIRFLOW, DAGS, GAPLESS_URL, LOGDIR, WORKDIR

from gapless_airflow import _answer
from gapless_airflow._window import partition_window, resolve
from gapless_airflow.asset_events import coverage_from_asset_events, interval_of
from gapless_airflow.hooks.gapless import GaplessHook
from gapless_airflow.triggers.coverage import GaplessCoverageTrigger

EXAMPLES = ["example_gapless_backfill", "example_gapless_hourly_rule", "example_gapless_wait_for_yesterday"]


def test_airflow_finds_the_provider():
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    pm = ProvidersManager()
    assert "airflow-provider-gapless" in pm.providers
    hook = ProvidersManagerTaskRuntime().hooks["gapless"]
    assert hook.hook_class_name == "gapless_airflow.hooks.gapless.GaplessHook"
    assert hook.connection_id_attribute_name == "gapless_conn_id"
    info = pm.providers["airflow-provider-gapless"].data
    assert info["triggers"][0]["python-modules"] == ["gapless_airflow.triggers.coverage"]


def test_the_example_dags_parse(airflow_db):
    r = subprocess.run(
        [AIRFLOW, "dags", "list-import-errors", "-o", "json"], capture_output=True, text=True, timeout=120, cwd=WORKDIR, check=False
    )
    (LOGDIR / "list-import-errors.log").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, r.stderr
    last = [line for line in r.stdout.splitlines() if line.strip()][-1]  # after Airflow's own warnings
    assert last.strip() == "[]", r.stdout
    listed = subprocess.run(
        [AIRFLOW, "dags", "list", "-o", "plain"], capture_output=True, text=True, timeout=120, cwd=WORKDIR, check=False
    ).stdout
    for dag_id in EXAMPLES:
        assert dag_id in listed, f"{dag_id} missing from `airflow dags list`"
        assert (DAGS / f"{dag_id}.py").exists()


def test_the_connection_is_the_hooks(gapless_server):
    hook = GaplessHook()
    with hook.get_conn() as client:
        assert client.url == GAPLESS_URL
        assert client.health()["status"] == "ok"
    assert hook.test_connection() == (True, "gapless server reachable")
    conn = C(host="gapless.internal", port=None, schema="https", conn_id="g", password="")
    assert GaplessHook.url_of(conn) == "https://gapless.internal:8080"
    assert GaplessHook.url_of(C(host="http://h:9", port=None, schema=None, conn_id="g")) == "http://h:9"
    with pytest.raises(ValueError, match=r"^connection 'g': no host"):
        GaplessHook.url_of(C(host="", port=None, schema=None, conn_id="g"))
    with pytest.raises(ValueError, match=r"^connection 'g': schema 'ftp' is not a URL scheme"):
        GaplessHook.url_of(C(host="h", port=1, schema="ftp", conn_id="g"))


def test_the_trigger_serializes_and_waits(gapless_server, client):
    trig = GaplessCoverageTrigger(
        ["trigger_unit"], "2025-06-14T00:00:00Z", "2025-06-14T01:00:00Z", policy="full", deadline=time.time() + 2,
        poll_interval=1,
    )
    path, kwargs = trig.serialize()
    assert path == "gapless_airflow.triggers.coverage.GaplessCoverageTrigger"
    assert GaplessCoverageTrigger(**kwargs).serialize() == (path, kwargs)
    client.declare("trigger_unit")

    async def first():
        return await anext(GaplessCoverageTrigger(**kwargs).run())

    event = asyncio.run(first())
    assert event.payload["status"] == "timeout"
    assert event.payload["message"].startswith(
        "trigger_unit [2025-06-14T00:00:00Z, 2025-06-14T01:00:00Z) is not complete under full: covered 0.000%, 1 gap"
    )
    kwargs["assets"] = ["no_such_asset_anywhere"]
    event = asyncio.run(first())
    assert event.payload["status"] == "error"
    assert event.payload["message"].startswith('unknown asset "no_such_asset_anywhere"')


@pytest.mark.parametrize(
    "event, message",
    [
        ({"id": 1, "extra": {"interval_start": "2025-06-14T00:00:00Z"}},
         "asset event 1: extra has interval_start without interval_end"),
        ({"id": 2, "extra": {"interval_start": "2025-06-14T00:00Z", "interval_end": "yesterday"}},
         ("asset event 2: extra.interval_end: 'yesterday' is not an instant (RFC 3339 such as "
          "2025-06-14T10:05:00Z, a date-time or a date)")),
        ({"id": 3, "extra": {"interval_start": "2025-06-14T02:00Z", "interval_end": "2025-06-14T01:00Z"}},
         "asset event 3: extra's interval is reversed: [2025-06-14T02:00:00Z, 2025-06-14T01:00:00Z)"),
        ({"id": 4, "partition_key": "2025-06-14T03:00:00"},
         ("asset event 4: partition_key '2025-06-14T03:00:00' is a single instant; give key_span= "
          "(e.g. 'PT1H') to read discrete keys as [key, key + span)")),
        ({"id": 5, "partition_key": "2025-06-14T03:00:00Z/"},
         "asset event 5: partition_key '2025-06-14T03:00:00Z/': the end is missing after '/'"),
        ({"id": 6, "partition_key": "PT1H/PT2H"},
         "asset event 6: partition_key 'PT1H/PT2H': both parts are durations; one must be an instant"),
        ({"id": 7, "partition_key": "2025-06-14/P1X"},
         ("asset event 7: partition_key '2025-06-14/P1X': duration: 'P1X' is not a duration (ISO 8601 "
          "such as PT5M or P1D, or short such as 5m, 1h, 1d, 1mo)")),
        ({"id": 8, "extra": {"interval_start": "2025-06-14", "interval_end": "2025-06-15", "interval_kind": "gone"}},
         "asset event 8: extra.interval_kind 'gone' is neither 'landed' nor 'retracted'"),
        ({"partition_key": "2025-06-14T03:00:00Z/2025-06-14T03:00:00Z"},
         ("asset event #1: partition_key '2025-06-14T03:00:00Z/2025-06-14T03:00:00Z': empty interval "
          "[2025-06-14T03:00:00Z, 2025-06-14T03:00:00Z)")),
    ],
)
def test_unreadable_events_are_named_in_one_line(event, message):
    with pytest.raises(ValueError) as err:
        coverage_from_asset_events([event], "2025-06-14", "2025-06-15")
    assert str(err.value) == message
    assert "\n" not in str(err.value)


def test_interval_sources_and_calendar_spans():
    berlin_day = interval_of({"partition_key": "2025-03-30"}, key_span="P1D", tz="Europe/Berlin")
    assert (berlin_day.start.isoformat(), berlin_day.end.isoformat()) == (
        "2025-03-29T23:00:00+00:00", "2025-03-30T22:00:00+00:00")
    month = interval_of({"partition_key": "2025-01-31T00:00:00Z/P1M"})
    assert month.end.isoformat() == "2025-02-28T00:00:00+00:00" and month.source == "interval_key"
    # extras win over the key
    both = interval_of({"extra": {"interval_start": "2025-06-14T01:00Z", "interval_end": "2025-06-14T02:00Z"},
                        "partition_key": "2025-06-14T05:00:00Z/PT1H"})
    assert (both.start.hour, both.source) == (1, "extra")
    assert interval_of({"id": 9, "extra": {"from_rest_api": True}}) is None


def test_windows_and_their_errors():
    assert [x.isoformat() for x in partition_window("2025-06-14T03:00:00Z/PT1H")] == [
        "2025-06-14T03:00:00+00:00", "2025-06-14T04:00:00+00:00"]
    with pytest.raises(ValueError, match=r"^partition_key '2025-06-14T03:30:00': 2025-06-14T03:30:00Z is not "
                                         r"the start of a window of grid 1h in UTC$"):
        partition_window("2025-06-14T03:30:00", every="1h")
    with pytest.raises(ValueError, match=r"^partition_key '2025-06-14T03:00:00' is a single instant: give every="):
        partition_window("2025-06-14T03:00:00")
    with pytest.raises(ValueError, match=r"^wait: start is given without end; give both or neither$"):
        resolve({}, "2025-06-14", None, what="wait")
    with pytest.raises(ValueError, match=r"^wait: no window to use: give start and end"):
        resolve({"dag_run": C(partition_key=None)}, None, None, what="wait")
    with pytest.raises(ValueError, match=r"^partition_key '2025-06-14T03:00:00': every '90m': 90 is out of range for unit 'm'$"):
        partition_window("2025-06-14T03:00:00", every="90m")


def test_policies_judged_as_the_server_judges_them():
    a = {"covered_ratio": 0.99, "missing_count": 1,
         "missing": [{"start": "2025-06-14T03:00:00Z", "end": "2025-06-14T03:10:00Z"}]}
    assert not _answer.complete_under(a, "full")
    assert _answer.complete_under(a, "ratio>=0.99") and not _answer.complete_under(a, "ratio>=0.995")
    assert _answer.complete_under(a, "gap<11m") and not _answer.complete_under(a, "gap<10m")
    assert _answer.policy_text(max_gap="10m") == "gap<PT600S" or _answer.policy_text(max_gap="10m").startswith("gap<")
    with pytest.raises(ValueError, match=r"^policy 'most': not a policy \(full, ratio>=R, gap<D\)$"):
        _answer.complete_under(a, "most")
    with pytest.raises(ValueError, match=r"^policy: give at most one of policy, min_ratio and max_gap$"):
        _answer.policy_text("full", 0.5)


@pytest.mark.parametrize(
    "module",
    [
        "_time",
        "_window",
        "_answer",
        "asset_events",
        "sync",
        "hooks.gapless",
        "triggers.coverage",
        "plugin.watches",
    ],
)
def test_docstring_examples(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"gapless_airflow.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
