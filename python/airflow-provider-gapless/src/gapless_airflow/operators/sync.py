"""Run :func:`gapless_airflow.sync.sync` as a task, its cursor in an Airflow Variable."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseHook, BaseOperator, Variable

from ..hooks.gapless import GaplessHook
from ..sync import AirflowAPI, Cursor, sync


class GaplessSyncOperator(BaseOperator):
    """Import Airflow's asset events that carry intervals into gapless
    (see :mod:`gapless_airflow.sync`); schedule it (``@hourly``) and each run
    continues from the last one's cursor.

    :param airflow_conn_id: a connection to Airflow's REST API: ``host`` the
        base URL (``http://airflow-api:8080``; or host, ``port`` and
        ``schema`` as the scheme), ``login``/``password`` a user, or only
        ``password`` as a fixed token.
    :param gapless_conn_id: the gapless connection.
    :param cursor_variable: the Airflow Variable holding the cursor.
    :param name_from: ``"uri"`` (default) or ``"name"``: which identity of
        the Airflow asset names the gapless asset.
    :param assets: import only these assets.

    The XCom is the result: ``{"read", "pages", "sent", "accepted",
    "duplicates", "skipped", "cursor"}``.

    >>> GaplessSyncOperator(task_id="sync", airflow_conn_id="airflow_api")  # doctest: +SKIP
    """

    template_fields: Sequence[str] = ("cursor_variable", "assets")

    def __init__(
        self,
        *,
        airflow_conn_id: str = "airflow_api",
        gapless_conn_id: str = GaplessHook.default_conn_name,
        cursor_variable: str = "gapless_sync_cursor",
        name_from: str = "uri",
        assets: Sequence[str] | None = None,
        overlap: str = "PT5M",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.airflow_conn_id = airflow_conn_id
        self.gapless_conn_id = gapless_conn_id
        self.cursor_variable = cursor_variable
        self.name_from = name_from
        self.assets = assets
        self.overlap = overlap

    def _api(self) -> AirflowAPI:
        conn = BaseHook.get_connection(self.airflow_conn_id)
        host = (conn.host or "").rstrip("/")
        if "://" not in host:
            host = f"{conn.schema or 'http'}://{host}" + (f":{conn.port}" if conn.port else "")
        elif conn.port and host.count(":") < 2:
            host = f"{host}:{conn.port}"
        if conn.login:
            return AirflowAPI(host, username=conn.login, password=conn.password or "")
        return AirflowAPI(host, token=conn.password or None)

    def execute(self, context: Any) -> dict[str, Any]:
        cursor = Cursor.from_json(Variable.get(self.cursor_variable, default=None))

        def save(c: Cursor) -> None:
            Variable.set(self.cursor_variable, c.to_json())

        with self._api() as api, GaplessHook(self.gapless_conn_id).get_conn() as client:
            result = sync(
                api,
                client,
                cursor=cursor,
                name_from=self.name_from,
                assets=self.assets,
                overlap=self.overlap,
                save=save,
            )
        self.log.info("%s", result.summary())
        return result.to_dict()
