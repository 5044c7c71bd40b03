"""The gapless connection and hook: a :class:`gapless.Client` (or
:class:`gapless.AsyncClient`) for the server an Airflow connection names.

A connection of type ``gapless`` (default id ``gapless_default``):

=========  ==========================================================
host       the server's host (``gapless.internal``; a full
           ``http://host:port`` URL works too)
port       its port (8080 when empty)
schema     the URL scheme: ``http`` (default) or ``https``
password   the token, sent as ``Authorization: Bearer`` (empty: none)
extra      optional ``{"timeout": 30, "retries": 5}`` for the client
=========  ==========================================================

As an environment variable::

    AIRFLOW_CONN_GAPLESS_DEFAULT='{"conn_type": "gapless", "host": "gapless.internal",
                                   "port": 8080, "password": "TOKEN"}'
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook

import gapless

from ..provider_info import ui_field_behaviour


class GaplessHook(BaseHook):
    """Talk to a gapless server through an Airflow connection.

    :param gapless_conn_id: the connection (type ``gapless``), by default
        ``gapless_default``.

    >>> hook = GaplessHook()  # doctest: +SKIP
    >>> with hook.get_conn() as client:  # doctest: +SKIP
    ...     client.check("orders", "2025-06-14", "2025-06-15").missing
    []
    """

    conn_name_attr = "gapless_conn_id"
    default_conn_name = "gapless_default"
    conn_type = "gapless"
    hook_name = "gapless"

    def __init__(self, gapless_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gapless_conn_id = gapless_conn_id

    @classmethod
    def get_ui_field_behaviour(cls) -> dict[str, Any]:
        """The connection form: host, port, scheme and token (provider
        info's form, with the hook's snake_case keys)."""
        return {key.replace("-", "_"): value for key, value in ui_field_behaviour().items()}

    @staticmethod
    def url_of(conn: Any) -> str:
        """The server's base URL from a connection's host, port and schema.

        >>> from types import SimpleNamespace as C
        >>> GaplessHook.url_of(C(host="gapless.internal", port=9000, schema=None, conn_id="g"))
        'http://gapless.internal:9000'
        """
        host = (conn.host or "").strip().rstrip("/")
        if not host:
            raise ValueError(
                f"connection {conn.conn_id!r}: no host (the gapless server's host name)"
            )
        if "://" in host:
            scheme, _, rest = host.partition("://")
            if conn.port and ":" not in rest:
                rest = f"{rest}:{conn.port}"
            return f"{scheme}://{rest}"
        scheme = (conn.schema or "http").strip() or "http"
        if scheme not in ("http", "https"):
            raise ValueError(
                f"connection {conn.conn_id!r}: schema {scheme!r} is not a URL scheme (http or https)"
            )
        return f"{scheme}://{host}:{conn.port or 8080}"

    @staticmethod
    def client_kwargs(conn: Any) -> dict[str, Any]:
        """The client's arguments (url, token, timeout, retries) from a connection."""
        extra = conn.extra_dejson if hasattr(conn, "extra_dejson") else {}
        # An empty password is no token ("" keeps the client from falling
        # back to GAPLESS_TOKEN): the connection says everything.
        kwargs: dict[str, Any] = {"url": GaplessHook.url_of(conn), "token": conn.password or ""}
        for key in ("timeout", "retries", "backoff"):
            if key in extra:
                kwargs[key] = extra[key]
        return kwargs

    def get_conn(self) -> gapless.Client:
        """A :class:`gapless.Client` for the connection's server (close it,
        or use it as a context manager)."""
        conn = self.get_connection(self.gapless_conn_id)
        return gapless.Client(**self.client_kwargs(conn))

    async def get_async_conn(self) -> gapless.AsyncClient:
        """A :class:`gapless.AsyncClient` for the connection's server, for
        triggers: the connection is read without blocking the event loop."""
        conn = await self.aget_connection(self.gapless_conn_id)
        return gapless.AsyncClient(**self.client_kwargs(conn))

    def test_connection(self) -> tuple[bool, str]:
        """Airflow's "Test" button: the server's ``/healthz``."""
        try:
            with self.get_conn() as client:
                client.health()
                client.assets()  # the token is good for reading
            return True, "gapless server reachable"
        except Exception as e:  # noqa: BLE001 (the UI shows the reason)
            return False, str(e)


def client_for(conn_id: str | None) -> gapless.Client:
    """A :class:`gapless.Client` for connection ``conn_id`` (``gapless_default`` when None)."""
    return GaplessHook(conn_id or GaplessHook.default_conn_name).get_conn()
