"""The DAG of the plugin's test (python/tests/airflow_plugin): it waits on
`orders` and records `orders_hourly`, both on the hourly grid of its
partition key; triggered only through the REST API (`PartitionedAtRuntime`).
The sensor gives up at once (soft fail): the test looks at what the plugin
shows for the run, not at the run. `plugin_rule_asset` is scheduled on the
asset a rule's `asset_uri` target posts to (its runs consume the firing),
with no gapless task of its own; `plugin_plain` has nothing of gapless."""

from __future__ import annotations

import pendulum
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime

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

with DAG(
    dag_id="plugin_rule_asset",
    schedule=PartitionedAssetTimetable(assets=Asset(uri="gapless://orders/rule", name="gapless_orders_rule")),
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    catchup=False,
):
    EmptyOperator(task_id="aggregate")
