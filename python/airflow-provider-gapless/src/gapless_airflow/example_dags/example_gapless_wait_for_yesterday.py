"""Wait for yesterday: each morning, report on yesterday's orders once the
gapless ledger says the whole day landed (gaps shorter than 5 minutes
tolerated), without holding a worker slot while waiting.

The sensor defers to the triggerer, which waits on the gapless server's
long poll: it wakes as soon as the batch that completes the day is stored.
If the day is still incomplete at 10:00 (after 6 hours), the task fails
with the gaps in its log and error. Its XCom is the coverage answer.

Connection: ``gapless_default`` (type ``gapless``: host, port, token).
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, task

from gapless_airflow.sensors.coverage import GaplessCoverageSensor

with DAG(
    dag_id="example_gapless_wait_for_yesterday",
    schedule="0 4 * * *",
    start_date=pendulum.datetime(2025, 6, 1, tz="UTC"),
    catchup=False,
    tags=["gapless", "example"],
    doc_md=__doc__,
):
    yesterday = GaplessCoverageSensor(
        task_id="wait_for_yesterday",
        asset="orders",
        # The local day before the run's date (the grid's zone: Berlin days
        # are 23 or 25 hours long around DST changes).
        start="{{ macros.ds_add(ds, -1) }}",
        end="{{ ds }}",
        tz="Europe/Berlin",
        policy="gap<5m",
        deferrable=True,
        timeout=6 * 3600,
    )

    @task
    def report(answer: dict[str, Any]) -> str:
        return f"orders {answer['start']}..{answer['end']}: {100 * answer['covered_ratio']:.2f}% covered"

    # The sensor's XCom, the answer, stands in for it until the task runs.
    report(yesterday.output)  # type: ignore[arg-type]
