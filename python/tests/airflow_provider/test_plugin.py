"""The UI plugin's parts that need no api-server (SPEC §9, "The UI
plugin"): what it reads from a DAG's serialized form (the DAG serialized by
Airflow's own serializer, as the dag-processor stores it for the
api-server), and the one line a view shows when gapless cannot answer."""

from __future__ import annotations

import json

import pendulum
import pytest
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG
from airflow.serialization.serialized_objects import DagSerialization

from gapless_airflow.operators.record import GaplessRecordOperator
from gapless_airflow.plugin.render import percent
from gapless_airflow.plugin.upstream import Refused, Unavailable, Upstream
from gapless_airflow.plugin.watches import Watch, rule_of_run_id, rules_of_events, task_watches
from gapless_airflow.sensors.coverage import GaplessCoverageSensor


def serialized() -> dict:
    with DAG("watched", schedule=None, start_date=pendulum.datetime(2025, 1, 1, tz="UTC")) as dag:
        GaplessCoverageSensor(
            task_id="wait", assets=["orders", "clicks"], every="1h", tz="Europe/Berlin", policy="gap<10m"
        )
        GaplessCoverageSensor(
            task_id="wait_day",
            asset="orders",
            start="{{ data_interval_start }}",
            end="{{ data_interval_end }}",
        )
        GaplessRecordOperator(
            task_id="record", asset=["out_a", "out_b"], start="2025-06-14T00:00Z", end="2025-06-15T00:00Z"
        )
        EmptyOperator(task_id="other")
    return DagSerialization.to_dict(dag)


def test_the_watches_of_a_serialized_dag():
    assert task_watches(serialized()) == [
        Watch("orders", "task wait", every="1h", tz="Europe/Berlin", policy="gap<10m"),
        Watch("clicks", "task wait", every="1h", tz="Europe/Berlin", policy="gap<10m"),
        Watch("out_a", "task record", start="2025-06-14T00:00Z", end="2025-06-15T00:00Z"),
        Watch("out_b", "task record", start="2025-06-14T00:00Z", end="2025-06-15T00:00Z"),
    ]


def test_rules_from_run_ids_and_consumed_events():
    assert rule_of_run_id("gapless__a__b__2025-06-14T03:00:00__12", "2025-06-14T03:00:00") == "a__b"
    assert rule_of_run_id("gapless__a__2025-06-14T03:00:00__x", "2025-06-14T03:00:00") is None
    assert rule_of_run_id("gapless__a__2025-06-14T03:00:00__1", "2025-06-14T04:00:00") is None
    assert rules_of_events([{"rule": "r1"}, None, {"rule": "r1"}, {"x": 1}, {"rule": "r2"}]) == ["r1", "r2"]


def test_the_ratio_is_never_rounded_up():
    assert percent(0.99999) == "99.99 %"
    assert percent(50 / 60) == "83.33 %"
    assert percent(1.0) == "100.00 %"


def test_no_connection_is_one_line(airflow_db):
    with pytest.raises(Unavailable) as e:
        Upstream("gapless_nowhere")
    assert str(e.value) == (
        "gapless is unavailable: there is no Airflow connection 'gapless_nowhere' (add one of type gapless)"
    )


def test_an_unreachable_server_is_one_line(airflow_db, monkeypatch):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = {"conn_type": "gapless", "host": "127.0.0.1", "port": port, "extra": {"timeout": 2}}
    monkeypatch.setenv("AIRFLOW_CONN_GAPLESS_DOWN", json.dumps(conn))
    with Upstream("gapless_down") as up, pytest.raises(Unavailable) as e:
        up.get("/v1/assets")
    line = str(e.value)
    assert line.startswith(f"gapless is unavailable: cannot reach http://127.0.0.1:{port}: ") and "\n" not in line


def test_the_connection_asks_the_server(airflow_db, gapless_server):
    with Upstream() as up:
        assert up.get("/v1/assets", limit=1)["assets"] is not None
        with pytest.raises(Refused) as e:
            up.get("/v1/assets/never-seen-asset")
    assert e.value.status == 404
