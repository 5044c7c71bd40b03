"""The DAG of the plugin's test (python/tests/airflow_plugin): it waits on
`orders` and records `orders_hourly`, both on the hourly grid of its
partition key; triggered only through the REST API (`PartitionedAtRuntime`).
The sensor gives up at once (soft fail): the test looks at what the plugin
shows for the run, not at the run."""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, PartitionedAtRuntime

from gapless_airflow.operators.record import GaplessRecordOperator
from gapless_airflow.sensors.coverage import GaplessCoverageSensor

with DAG(
    dag_id="plugin_orders",
    schedule=PartitionedAtRuntime(),
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
    tags=["gapless"],
):
    wait = GaplessCoverageSensor(
        task_id="wait_orders", asset="orders", every="1h", timeout=1, soft_fail=True, mode="reschedule"
    )
    record = GaplessRecordOperator(task_id="record_hourly", asset="orders_hourly", every="1h")
    wait >> record

with DAG(
    dag_id="plugin_plain",
    schedule=None,
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
):
    pass
