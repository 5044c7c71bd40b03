"""The errors a server answers (SPEC §4), as exceptions.

Every error of a request is a :class:`GaplessError` carrying the server's
one-line ``message`` (the words the command line prints), the HTTP
``status`` (None when no answer came) and ``detail`` (None or an object,
e.g. ``{"event": 3}`` for the bad item of a batch). Its class says what
kind of failure it is, as the status does::

    try:
        client.check("ordres", start, end)
    except gapless.NotFound as e:
        print(e.message)   # unknown asset "ordres" (did you mean "orders"?)
        print(e.status)    # 404
"""

from __future__ import annotations

from typing import Any


class GaplessError(Exception):
    """An error answered by a gapless server, or no answer at all.

    ``kind`` is one of ``"bad_input"``, ``"not_found"``, ``"conflict"``,
    ``"denied"``, ``"unavailable"``, ``"fault"`` (the subclass's name in
    snake case).
    """

    kind: str = "fault"

    def __init__(
        self, message: str, status: int | None = None, detail: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.detail = detail

    @property
    def position(self) -> tuple[str, int] | None:
        """Where in a batch the error is, from ``detail``: ``("event", 3)``
        or ``("line", 3)`` (1-based), None when it is not about one item."""
        if not self.detail:
            return None
        for unit in ("event", "line"):
            n = self.detail.get(unit)
            if isinstance(n, int):
                return (unit, n)
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r}, detail={self.detail!r})"


class BadInput(GaplessError):
    """The input is wrong: an instant, a range, a policy, an event, a body
    too large or of the wrong type (400, 405, 413, 414, 415, 431)."""

    kind = "bad_input"


class NotFound(GaplessError):
    """An asset the ledger has never seen, an unknown rule or route (404)."""

    kind = "not_found"


class Conflict(GaplessError):
    """An event id already recorded with other content, a rule that exists
    with another definition (409)."""

    kind = "conflict"


class Denied(GaplessError):
    """No or an unknown token (401), or a token whose scope or prefixes do
    not allow the request (403)."""

    kind = "denied"


class Unavailable(GaplessError):
    """The ledger or the server cannot be used now (503), or the server
    could not be reached (``status`` None); trying again later may work."""

    kind = "unavailable"


class Fault(GaplessError):
    """A fault of the server (500) or an answer that is not gapless's."""

    kind = "fault"


def error_for(status: int, body: Any) -> GaplessError:
    """The exception for an error answer of ``status`` whose JSON is ``body``."""
    if status in (401, 403):
        cls: type[GaplessError] = Denied
    elif status == 404:
        cls = NotFound
    elif status == 409:
        cls = Conflict
    elif 400 <= status < 500:
        cls = BadInput
    elif status in (503, 507):
        cls = Unavailable
    else:
        cls = Fault
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        detail = body.get("detail")
        return cls(body["error"], status, detail if isinstance(detail, dict) else None)
    return cls(f"the server answered {status}", status, None)
