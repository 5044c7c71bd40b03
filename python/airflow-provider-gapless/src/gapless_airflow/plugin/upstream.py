"""The gapless server behind the plugin: the ``gapless_default`` connection
read in the api-server, read-only requests with its token, and every
failure as one line that says gapless is unavailable and why."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx

from ..hooks.gapless import GaplessHook

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11

CONN_ID = GaplessHook.default_conn_name
# How long a view waits for gapless: a view the user looks at, not a batch.
DEFAULT_TIMEOUT = 10.0


class Unavailable(Exception):
    """gapless cannot answer (no connection, unreachable, token refused, a
    5xx): the text is the one line the view shows."""


class Refused(Exception):
    """gapless answered a question with a 4xx (an asset it has never seen, a
    bad range): the text is its ``error``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Upstream:
    """An HTTP client for the connection's server (use it as a context
    manager).

    # Errors

    :class:`Unavailable` when the connection is missing or unusable.
    """

    def __init__(self, conn_id: str = CONN_ID) -> None:
        from airflow.models.connection import Connection
        from airflow.sdk.exceptions import AirflowNotFoundException

        try:
            conn = Connection.get_connection_from_secrets(conn_id)
        except AirflowNotFoundException:
            raise Unavailable(
                f"gapless is unavailable: there is no Airflow connection {conn_id!r} "
                "(add one of type gapless)"
            ) from None
        try:
            kwargs = GaplessHook.client_kwargs(conn)
        except ValueError as e:
            raise Unavailable(f"gapless is unavailable: {e}") from None
        self.url: str = kwargs["url"]
        headers = {"Accept": "application/json", "User-Agent": "gapless-airflow-plugin"}
        if kwargs.get("token"):
            headers["Authorization"] = f"Bearer {kwargs['token']}"
        self._http = httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=float(kwargs.get("timeout") or DEFAULT_TIMEOUT),
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def send(
        self, method: str, path: str, params: Any = None, body: bytes | None = None
    ) -> httpx.Response:
        """One request as it is; a transport failure, a refused token or a
        5xx is :class:`Unavailable`."""
        try:
            r = self._http.request(
                method,
                path,
                params=params,
                content=body,
                headers={"Content-Type": "application/json"} if body is not None else None,
            )
        except httpx.HTTPError as e:
            reason = str(e) or type(e).__name__
            raise Unavailable(
                f"gapless is unavailable: cannot reach {self.url}: {reason}"
            ) from None
        if r.status_code in (401, 403):
            raise Unavailable(
                f"gapless is unavailable: {self.url} refused the connection's token "
                f"(HTTP {r.status_code}: {_error(r)})"
            )
        if r.status_code >= 500:
            raise Unavailable(
                f"gapless is unavailable: {self.url} answered HTTP {r.status_code}: {_error(r)}"
            )
        return r

    def get(self, path: str, **params: Any) -> Any:
        """The JSON of a GET (parameters that are None left out).

        # Errors

        :class:`Unavailable`, or :class:`Refused` for a 4xx.
        """
        r = self.send("GET", path, {k: v for k, v in params.items() if v is not None})
        if r.status_code >= 400:
            raise Refused(r.status_code, _error(r))
        return r.json()


def _error(r: httpx.Response) -> str:
    try:
        answer = r.json()
    except ValueError:
        return r.text.strip().splitlines()[0] if r.text.strip() else r.reason_phrase
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        return str(answer["error"])
    return r.reason_phrase
