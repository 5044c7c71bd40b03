"""The downstream DAGs of the gapless Airflow test (python/tests/airflow).

- `orders_hourly_asset`: scheduled on the gapless window asset
  `gapless://orders/hourly` with a partitioned timetable; the deliverer's
  `asset_uri` target posts one asset event per complete window with
  `partition_key` = the window's key, and Airflow makes one run per event.
- `orders_hourly_dag`: triggered only through the REST API by the
  deliverer's `dag_id` target (`POST /api/v2/dags/{id}/dagRuns` with a
  `partition_key`). Airflow refuses a `partition_key` (400, "not a
  partitioned Dag") unless the DAG's timetable is partitioned;
  `PartitionedAtRuntime()` is the partitioned timetable that schedules
  nothing by itself, so the DAG runs only when triggered.

Each task appends `<dag_id> <partition_key> <run_id>` to the file named by
GAPLESS_AIRFLOW_RECORD (the test reads it besides Airflow's REST API).
"""

from __future__ import annotations

import os

import pendulum
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, PartitionedAtRuntime, task

WINDOW_ASSET = Asset(uri="gapless://orders/hourly", name="gapless_orders_hourly")
START = pendulum.datetime(2025, 1, 1, tz="UTC")


@task
def aggregate(dag_run=None):
    key = dag_run.partition_key
    if not key:
        raise ValueError(f"run {dag_run.run_id} has no partition_key")
    path = os.environ.get("GAPLESS_AIRFLOW_RECORD")
    if path:
        with open(path, "a") as f:
            f.write(f"{dag_run.dag_id} {key} {dag_run.run_id}\n")
    return key


with DAG(
    dag_id="orders_hourly_asset",
    schedule=PartitionedAssetTimetable(assets=WINDOW_ASSET),
    start_date=START,
    catchup=False,
    tags=["gapless"],
):
    aggregate()

with DAG(
    dag_id="orders_hourly_dag",
    schedule=PartitionedAtRuntime(),
    start_date=START,
    catchup=False,
    tags=["gapless"],
):
    aggregate()
