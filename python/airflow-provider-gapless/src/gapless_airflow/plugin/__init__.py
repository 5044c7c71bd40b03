"""The gapless plugin of Airflow's UI (Airflow ≥ 3.1 plugin views), found
through the ``airflow.plugins`` entry point: on as soon as the provider is
installed.

- a FastAPI app the api-server mounts under ``/gapless``
  (:mod:`gapless_airflow.plugin.app`): the views below as HTML, and a
  read-only proxy to the gapless server of the ``gapless_default``
  connection, for Airflow's authenticated users only;
- external views pointing at it: **Coverage** in the navigation bar
  (gapless's own page, proxied), **Coverage** on a DAG run (the coverage
  of the run's window for each gapless asset the DAG waits on or records)
  and on a DAG (the heat map of its windows for the last days).

The browser only ever talks to Airflow; the connection's token stays in
the api-server.
"""

from __future__ import annotations

from typing import Any

from airflow.plugins_manager import AirflowPlugin

from .app import PREFIX, app

ICON = f"{PREFIX}/static/icon.svg"


class GaplessPlugin(AirflowPlugin):
    """Coverage from gapless inside Airflow's UI (see the module's text)."""

    name = "gapless"
    fastapi_apps: list[Any] = [  # noqa: RUF012 (AirflowPlugin's own shape)
        {"app": app, "url_prefix": PREFIX, "name": "gapless coverage"}
    ]
    external_views: list[Any] = [  # noqa: RUF012
        {
            "name": "Coverage",
            "href": f"{PREFIX}/page/",
            "destination": "nav",
            "url_route": "gapless-coverage",
            "icon": ICON,
        },
        {
            "name": "Coverage",
            "href": f"{PREFIX}/dags/{{DAG_ID}}/runs/{{RUN_ID}}",
            "destination": "dag_run",
            "url_route": "gapless-dag-run",
            "icon": ICON,
        },
        {
            "name": "Coverage",
            "href": f"{PREFIX}/dags/{{DAG_ID}}",
            "destination": "dag",
            "url_route": "gapless-dag",
            "icon": ICON,
        },
    ]
