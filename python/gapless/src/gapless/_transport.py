"""What both clients do around one HTTP exchange: reading the answer, and
deciding whether a failed attempt is sent again and after how long.

Sending again is safe when nothing was stored: after a 503 (SPEC §4: a
request that fails stores nothing) and after a connection that was never
made. When the request went out and no answer came back (a timeout, a
reset) it may have been stored, so it is sent again only when it is
idempotent: a question, a declaration, a rule, and events that all carry
an ``id`` (a second copy is a duplicate, SPEC §2).
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from ._api import LONG_POLL_MARGIN, Call, T
from ._errors import Fault, Unavailable, error_for

#: Attempts after the first, and the first pause (doubled each time, at
#: most MAX_BACKOFF seconds).
DEFAULT_RETRIES = 5
DEFAULT_BACKOFF = 0.25
MAX_BACKOFF = 8.0
#: Seconds for one request (connect, each read and write).
DEFAULT_TIMEOUT = 30.0

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
_MAYBE_SENT = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def base_url(url: str | None) -> str:
    url = url or os.environ.get("GAPLESS_URL")
    if not url:
        raise ValueError("url: give the server's URL (http://HOST:PORT) or set GAPLESS_URL")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"url: {url!r} is not an http:// URL")
    return url.rstrip("/")


def headers(token: str | None, extra: dict[str, str] | None) -> dict[str, str]:
    if token is None:
        token = os.environ.get("GAPLESS_TOKEN") or None
    h = {"Accept": "application/json", "User-Agent": f"gapless-python/{_version()}"}
    if token:
        h["Authorization"] = f"Bearer {token}"
    h.update(extra or {})
    return h


def _version() -> str:
    from . import __version__

    return __version__


def timeout_for(call: Call[Any], timeout: float) -> httpx.Timeout | None:
    """The request's time limits: the client's, with room for a long poll."""
    if call.waits <= 0:
        return None  # the client's own
    return httpx.Timeout(timeout, read=call.waits + max(timeout, LONG_POLL_MARGIN))


def retry_after(exc: Exception, call: Call[Any]) -> bool:
    """Whether a transport failure may be sent again."""
    if isinstance(exc, _NOT_SENT):
        return True
    if isinstance(exc, _MAYBE_SENT):
        return call.idempotent
    return False


def pause(attempt: int, backoff: float) -> float:
    """Seconds to wait before attempt ``attempt + 1`` (0-based)."""
    return min(MAX_BACKOFF, backoff * 2.0**attempt)


def unreachable(url: str, exc: Exception) -> Unavailable:
    why = str(exc) or type(exc).__name__
    err = Unavailable(f"cannot reach the server at {url}: {why}")
    err.__cause__ = exc
    return err


def answer(call: Call[T], status: int, content: bytes) -> T:
    """The answer of ``call``, or the error its status and body say."""
    try:
        body: Any = json.loads(content) if content else None
    except ValueError:
        body = None
    if 200 <= status < 300:
        if body is None:
            raise Fault(f"the server's answer ({status}) is not JSON", status)
        try:
            return call.parse(body)
        except (KeyError, TypeError, ValueError) as e:
            raise Fault(f"the server's answer is not what was expected: {e!r}", status) from e
    raise error_for(status, body)
