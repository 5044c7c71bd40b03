"""The DAGs python/tests/airflow_provider runs with dag.test().

Each sensor DAG has one sensor (task `wait`) and, after it, a task `keep`
that writes the sensor's XCom to $GAPLESS_PROVIDER_OUT/<dag_id>.json, so
the test reads the coverage answer the sensor returned. Assets are named
after their DAG, so each test has its own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pendulum
from airflow.sdk import DAG, Asset, task

from gapless_airflow.operators.record import GaplessRecordOperator, record
from gapless_airflow.sensors.asset_events import AssetEventCoverageSensor
from gapless_airflow.sensors.coverage import GaplessCoverageSensor

START = pendulum.datetime(2025, 1, 1, tz="UTC")
DAY = "2025-06-14"
EVENTS_ASSET = Asset(uri="gapless-test://provider/events", name="provider_events")


@task(trigger_rule="all_done")
def keep(answer=None, dag_run=None):
    out = os.environ.get("GAPLESS_PROVIDER_OUT")
    if out:
        Path(out, f"{dag_run.dag_id}.json").write_text(json.dumps({"wait": answer}))
    return answer


def sensor_dag(dag_id: str, **sensor):
    with DAG(dag_id=dag_id, schedule=None, start_date=START, catchup=False, tags=["gapless-test"]) as dag:
        wait = GaplessCoverageSensor(task_id="wait", asset=sensor.pop("asset", dag_id), **sensor)
        keep(wait.output)
    return dag


# The ledger becomes complete while these wait (the test lands the last
# hour a few seconds in).
sensor_dag("sensor_poke", start=f"{DAY}T00:00:00Z", end=f"{DAY}T06:00:00Z", mode="poke", poke_interval=1, timeout=60)
sensor_dag("sensor_reschedule", start=f"{DAY}T00:00:00Z", end=f"{DAY}T06:00:00Z", mode="reschedule", poke_interval=1, timeout=60)
# A poke interval far longer than the test: only the long poll can wake it.
sensor_dag("sensor_deferrable", start=f"{DAY}T00:00:00Z", end=f"{DAY}T06:00:00Z", deferrable=True, poke_interval=600, timeout=120)
sensor_dag(
    "sensor_joint",
    asset=None,
    assets=["sensor_joint_a", "sensor_joint_b"],
    start=f"{DAY}T00:00:00Z",
    end=f"{DAY}T06:00:00Z",
    deferrable=True,
    poke_interval=2,
    timeout=120,
)
# Never complete: they time out naming the gaps.
sensor_dag("sensor_timeout_poke", start=DAY, end="2025-06-15", mode="poke", poke_interval=1, timeout=3)
sensor_dag("sensor_timeout_deferrable", start=DAY, end="2025-06-15", deferrable=True, timeout=3)
sensor_dag("sensor_timeout_reschedule", start=DAY, end="2025-06-15", mode="reschedule", poke_interval=1, timeout=3)
# Two assets in poke mode under a ratio: their joint coverage, judged here.
sensor_dag(
    "sensor_joint_ratio",
    asset=None,
    assets=["sensor_joint_ratio_b", "sensor_joint_ratio_a"],
    start=f"{DAY}T00:00:00Z",
    end=f"{DAY}T06:00:00Z",
    min_ratio=0.5,
    mode="poke",
    poke_interval=1,
    timeout=30,
)
# Templated range in Berlin days, a policy.
sensor_dag(
    "sensor_templated",
    start="{{ params.day }}",
    end="{{ macros.ds_add(params.day, 1) }}",
    tz="Europe/Berlin",
    policy="gap<10m",
    params={"day": DAY},
    mode="poke",
    poke_interval=1,
    timeout=30,
)
# The window from dag_run.partition_key and the 1h grid.
sensor_dag("sensor_partition", every="1h", mode="poke", poke_interval=1, timeout=30)


with DAG(dag_id="record_dag", schedule=None, start_date=START, catchup=False, tags=["gapless-test"]):

    @task(retries=1, retry_delay=0)
    def produce(ti=None):
        recorded = record("record_dag_out", every="1h", extra={"rows": 42})
        if ti.try_number == 1:
            raise RuntimeError("the first try fails after recording; the retry records a duplicate")
        return recorded

    produced = produce()
    GaplessRecordOperator(
        task_id="record_op", asset=["record_dag_op_a", "record_dag_op_b"], key_span="PT1H", extra={"by": "operator"}
    ).set_upstream(produced)


with DAG(dag_id="asset_events_sensor", schedule=None, start_date=START, catchup=False, tags=["gapless-test"]):
    wait = AssetEventCoverageSensor(
        task_id="wait",
        asset=EVENTS_ASSET,
        start=f"{DAY}T00:00:00Z",
        end=f"{DAY}T04:00:00Z",
        key_span="PT1H",
        mode="poke",
        poke_interval=1,
        timeout=60,
    )
    keep(wait.output)


# Assets for the sync tests: a DAG that names them, so `airflow dags
# reserialize` registers them (asset events can only be posted to known assets).
SYNC_ASSETS = [
    Asset(uri="s3://lake/sync_extra", name="sync_extra"),
    Asset(uri="s3://lake/sync_interval", name="sync_interval"),
    Asset(uri="s3://lake/sync_discrete", name="sync_discrete"),
    Asset(uri="s3://lake/sync_paged", name="sync_paged"),
]

with DAG(dag_id="sync_assets", schedule=None, start_date=START, catchup=False, tags=["gapless-test"]):

    @task(outlets=SYNC_ASSETS)
    def produce_sync_assets():
        return None

    produce_sync_assets()


with DAG(dag_id="sync_dag", schedule=None, start_date=START, catchup=False, tags=["gapless-test"]):
    from gapless_airflow.operators.sync import GaplessSyncOperator

    GaplessSyncOperator(task_id="sync", airflow_conn_id="airflow_api", assets=["s3://lake/sync_extra"])
