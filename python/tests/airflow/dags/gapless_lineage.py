"""The OpenLineage DAG of the gapless Airflow test (python/tests/airflow,
test_airflow_openlineage.py).

`orders_lineage` has an hourly data interval and one task, `write_orders`,
whose output is the `Asset` `file:///lake/orders` in its `outlets`: the
common-io provider (installed with Airflow) turns a `file://` asset into the
OpenLineage dataset `file` / `/lake/orders`, which the OpenLineage provider
sends on the task's events with the `nominalTime` facet of the data
interval; gapless records it on the asset `file:///lake/orders` when the
task's `COMPLETE` arrives.

The test triggers runs with explicit data intervals; its `end_date` in the
past keeps the scheduler from making runs of its own. A run's conf
`{"fail_tries": N}` makes the task's first N tries fail (1: it succeeds on
its retry; 2: it fails for good). The suite's `[openlineage] emission_policy`
lets this DAG alone send events (conftest.py).
"""

from __future__ import annotations

import pendulum
from airflow.sdk import DAG, Asset, task

ORDERS = Asset("file:///lake/orders")


@task(outlets=[ORDERS], retries=1, retry_delay=pendulum.duration(seconds=1))
def write_orders(dag_run=None, ti=None):
    fail_tries = int((dag_run.conf or {}).get("fail_tries", 0))
    if ti.try_number <= fail_tries:
        raise RuntimeError(f"try {ti.try_number} of {dag_run.run_id} fails on purpose")


with DAG(
    dag_id="orders_lineage",
    schedule="@hourly",
    start_date=pendulum.datetime(2025, 1, 1, tz="UTC"),
    end_date=pendulum.datetime(2025, 1, 2, tz="UTC"),
    catchup=False,
    tags=["gapless"],
):
    write_orders()
