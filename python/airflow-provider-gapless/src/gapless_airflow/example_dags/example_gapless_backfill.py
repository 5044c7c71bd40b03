"""Backfill the incomplete windows: ask gapless which hours of
``orders_hourly`` between two dates are not complete, and rebuild each of
them in a mapped task that records its hour when done.

Trigger it with the range as params (``{"start": "2025-06-01", "end":
"2025-06-08"}``); a window the rebuild completes is no longer listed the
next time, so running it again only redoes what is still missing.
"""

from __future__ import annotations

from typing import Any

import pendulum
from airflow.sdk import DAG, Param, get_current_context, task

from gapless_airflow.hooks.gapless import GaplessHook
from gapless_airflow.operators.record import record

with DAG(
    dag_id="example_gapless_backfill",
    schedule=None,
    start_date=pendulum.datetime(2025, 6, 1, tz="UTC"),
    catchup=False,
    params={
        "asset": Param("orders_hourly", type="string"),
        "start": Param("2025-06-01", type="string", description="first day (UTC)"),
        "end": Param("2025-06-08", type="string", description="day after the last (UTC)"),
        "every": Param("1h", type="string", description="the grid: 1h, 1d, ..."),
    },
    tags=["gapless", "example"],
    doc_md=__doc__,
):

    @task
    def incomplete_windows() -> list[dict[str, str]]:
        params = get_current_context()["params"]
        with GaplessHook().get_conn() as client:
            plan = client.windows(
                params["asset"], params["start"], params["end"], params["every"], incomplete=True
            )
        return [
            {"key": w.key, "start": w.start.isoformat(), "end": w.end.isoformat()}
            for w in plan.windows
        ]

    @task(max_active_tis_per_dagrun=4)
    def rebuild(window: dict[str, str]) -> dict[str, Any]:
        params = get_current_context()["params"]
        # ... recompute the window [start, end) from the raw data ...
        # The id is this run's and this map index's: a retry is a duplicate, a later
        # backfill (after a retraction) a new event that wins.
        return record(params["asset"], window["start"], window["end"])

    rebuild.expand(window=incomplete_windows())
