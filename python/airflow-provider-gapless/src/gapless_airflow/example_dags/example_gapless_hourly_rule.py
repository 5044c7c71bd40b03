"""Hourly aggregation triggered by a gapless rule: one run per complete hour
of ``orders``, exactly once, however the hour's data arrived (SPEC §7).

In gapless, a rule fires when an hour of ``orders`` becomes complete and
its deliverer posts an Airflow asset event for ``gapless://orders/hourly``
with ``partition_key`` = the hour's key (``2025-06-14T03:00:00``)::

    gapless rule set orders_hourly --assets orders --every 1h \\
        --from 2025-06-01 --target airflow

    # targets.toml, read by `gapless serve --targets-file targets.toml`
    [[target]]
    name = "airflow"
    kind = "airflow"
    url = "http://airflow-api:8080"
    username = "gapless"
    password = "..."
    asset_uri = "gapless://orders/hourly"

This DAG is scheduled on that asset with a ``PartitionedAssetTimetable``,
so each firing makes one run whose ``dag_run.partition_key`` is the hour.
The aggregation reads the hour (the key plus the ``1h`` grid), writes its
output and records the hour of ``orders_hourly`` in gapless; a retry
records a duplicate, not a second event.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Asset, PartitionedAssetTimetable, task

from gapless_airflow.operators.record import record
from gapless_airflow.sensors.coverage import GaplessCoverageSensor

HOURS = Asset(uri="gapless://orders/hourly", name="gapless_orders_hourly")

with DAG(
    dag_id="example_gapless_hourly_rule",
    schedule=PartitionedAssetTimetable(assets=HOURS),
    start_date=pendulum.datetime(2025, 6, 1, tz="UTC"),
    catchup=False,
    tags=["gapless", "example"],
    doc_md=__doc__,
):
    # Not needed after a `complete` firing; a cheap guard if the hour was
    # retracted in between (a poke that answers at once when complete).
    hour_complete = GaplessCoverageSensor(
        task_id="hour_complete", asset="orders", every="1h", poke_interval=30, timeout=600
    )

    @task
    def aggregate() -> dict[str, Any]:
        # ... read orders of the hour, write the aggregate ...
        return record("orders_hourly", every="1h", extra={"source": "orders"})

    hour_complete >> aggregate()
