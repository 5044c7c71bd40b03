"""Import Airflow's asset events that carry intervals into gapless.

Reads ``GET /api/v2/assets/events`` of an Airflow api-server, oldest first,
in pages of 100 (Airflow's cap), and records each event that says which
interval it covers (``extra.interval_start``/``interval_end``, an ISO 8601
interval ``partition_key``, or a discrete key of an asset that declares a
key span in gapless: SPEC §2) as a gapless event:

- ``asset``: the Airflow asset's URI (``name_from="uri"``, the default) or
  its name (``name_from="name"``);
- ``id``: ``airflow:<event id>``, so a rerun, or pages read twice, store
  nothing twice (duplicates, SPEC §2);
- ``extra``: the event's extra as Airflow returns it; ``partition_key`` when
  the key is where the interval is; ``produced_at``: the event's timestamp;
  ``kind`` ``retracted`` when ``extra.interval_kind`` says so.

Events without an interval (no extras, no key; a discrete key of an asset
without a declared key span) are counted as skipped, not sent; an event
whose interval cannot be read (a reversed one, a bad instant) is skipped and
logged with the reason. Each page is one atomic batch.

The **cursor** is the timestamp and id of the newest event read. The next
run reads from that timestamp less ``overlap`` (default 5 minutes: events
whose transaction committed late are still seen; what is read again is a
duplicate), so it continues where the last one stopped. The command line
keeps it in a file (``--state``), :class:`~gapless_airflow.operators.sync.GaplessSyncOperator`
in an Airflow Variable.

Command line (installed as ``gapless-airflow-sync``)::

    gapless-airflow-sync --airflow-url http://airflow:8080 --username gapless \\
        --password ... --gapless-url http://gapless:8080 --state sync.json

prints one line: ``read 230 asset events in 3 pages: sent 200 (accepted
200, duplicates 0), skipped 30 (no interval 30); cursor 2025-06-14T10:00:00Z``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

import gapless

from . import _time as t
from .asset_events import INTERVAL_END, INTERVAL_START, describe, interval_of

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11

log = logging.getLogger("gapless_airflow.sync")

#: Airflow's largest page of ``GET /api/v2/assets/events``.
PAGE = 100


class SyncError(Exception):
    """The sync stopped: the message names the Airflow event or request and why."""


@dataclass(frozen=True)
class Cursor:
    """Where the last sync stopped: the newest event read (its timestamp,
    RFC 3339 text as Airflow gave it, and its id)."""

    timestamp: str | None = None
    last_id: int | None = None

    def to_json(self) -> str:
        return json.dumps({"timestamp": self.timestamp, "last_id": self.last_id})

    @classmethod
    def from_json(cls, text: str | None) -> Cursor:
        """A cursor from :meth:`to_json`'s text (None or empty: from the start)."""
        if not text or not text.strip():
            return cls()
        try:
            d = json.loads(text)
            return cls(d.get("timestamp"), d.get("last_id"))
        except (ValueError, AttributeError) as e:
            raise SyncError(f"cursor {text[:80]!r}: not a sync cursor ({e})") from None


@dataclass
class SyncResult:
    """What one sync did."""

    cursor: Cursor
    read: int = 0
    pages: int = 0
    sent: int = 0
    accepted: int = 0
    duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)

    def summary(self) -> str:
        skipped = sum(self.skipped.values())
        reasons = ", ".join(f"{why} {n}" for why, n in sorted(self.skipped.items()))
        return (
            f"read {self.read} asset events in {self.pages} pages: sent {self.sent} "
            f"(accepted {self.accepted}, duplicates {self.duplicates}), skipped {skipped}"
            + (f" ({reasons})" if reasons else "")
            + f"; cursor {self.cursor.timestamp or 'none'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "pages": self.pages,
            "sent": self.sent,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "skipped": dict(self.skipped),
            "cursor": {"timestamp": self.cursor.timestamp, "last_id": self.cursor.last_id},
        }


class AirflowAPI:
    """The few requests the sync makes of Airflow's REST API (``/api/v2``),
    with a JWT from ``POST /auth/token`` (``username``/``password``; logged
    in again on a 401) or a fixed ``token``.

    >>> api = AirflowAPI("http://127.0.0.1:8080", username="gapless", password="...")  # doctest: +SKIP
    >>> api.get("/api/v2/assets/events", limit=1)["total_entries"]  # doctest: +SKIP
    8637
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not url or not url.startswith(("http://", "https://")):
            raise ValueError(f"airflow url {url!r}: not an http:// URL")
        if token and username:
            raise ValueError("airflow: give a token or a username and password, not both")
        if username and password is None:
            raise ValueError(f"airflow: username {username!r} without a password")
        self.url = url.rstrip("/")
        self.username, self.password = username, password
        self._token = token
        self._fixed = token is not None
        self._http = httpx.Client(base_url=self.url, timeout=timeout, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _login(self) -> str | None:
        if self._fixed or not self.username:
            return self._token
        r = self._http.post(
            "/auth/token", json={"username": self.username, "password": self.password}
        )
        if r.status_code not in (200, 201):
            raise SyncError(
                f"airflow {self.url}: login as {self.username!r} refused ({r.status_code}: {r.text[:200]})"
            )
        self._token = r.json()["access_token"]
        return self._token

    def get(self, path: str, **params: Any) -> dict[str, Any]:
        """GET ``path`` with ``params``; its JSON, or a :class:`SyncError`."""
        for attempt in range(2):
            token = self._token if self._token is not None else self._login()
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            try:
                r = self._http.get(
                    path, params={k: v for k, v in params.items() if v is not None}, headers=headers
                )
            except httpx.HTTPError as e:
                raise SyncError(f"airflow {self.url}{path}: {e or type(e).__name__}") from e
            if r.status_code == 401 and not self._fixed and self.username and attempt == 0:
                self._token = None  # expired: log in again, once
                continue
            if r.status_code != 200:
                raise SyncError(f"airflow {self.url}{path}: {r.status_code}: {r.text[:200]}")
            answer: dict[str, Any] = r.json()
            return answer
        raise SyncError(f"airflow {self.url}{path}: 401 after logging in again")  # pragma: no cover


def gapless_event(
    event: dict[str, Any],
    *,
    name_from: str = "uri",
    key_spans: dict[str, tuple[str | None, str | None]] | None = None,
    id_prefix: str = "airflow:",
) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """The gapless event for one Airflow asset event (a JSON object of the
    REST API), or ``(None, reason)`` when it is skipped. ``key_spans`` maps a
    gapless asset to its declared ``(key_span, tz)``.

    >>> gapless_event({"id": 7, "uri": "s3://lake/orders", "name": "orders", "timestamp": "2025-06-14T10:06:00Z",
    ...                "partition_key": "2025-06-14T10:00:00Z/PT5M", "extra": {"from_rest_api": True}})[0]["id"]
    'airflow:7'
    """
    name = event.get(name_from)
    if not name:
        return None, f"no asset {name_from}"
    span, tz = (key_spans or {}).get(name, (None, None))
    extra = event.get("extra") or {}
    key = event.get("partition_key")
    has_extra = isinstance(extra, dict) and (
        extra.get(INTERVAL_START) is not None or extra.get(INTERVAL_END) is not None
    )
    if not has_extra and key and not t.looks_like_interval(key) and span is None:
        return None, "discrete key, no key span"
    try:
        iv = interval_of(event, key_span=span, tz=tz)
    except ValueError as e:
        log.warning("skipped: %s", e)
        return None, "unreadable interval"
    if iv is None:
        return None, "no interval"
    out: dict[str, Any] = {"asset": name, "id": f"{id_prefix}{event['id']}", "extra": extra}
    if iv.source != "extra":
        out["partition_key"] = key
    if iv.kind == "retracted":
        out["kind"] = "retracted"
    if event.get("timestamp"):
        out["produced_at"] = event["timestamp"]
    return out, None


def sync(
    airflow: AirflowAPI,
    client: gapless.Client,
    *,
    cursor: Cursor | None = None,
    name_from: str = "uri",
    assets: Iterable[str] | None = None,
    overlap: t.DurationLike = "PT5M",
    id_prefix: str = "airflow:",
    save: Callable[[Cursor], None] | None = None,
    max_pages: int | None = None,
) -> SyncResult:
    """Import the asset events after ``cursor`` (all of them without one)
    into gapless; the new cursor is in the answer, and handed to ``save``
    after each page is stored (so a sync cut short continues from there).

    :param name_from: ``"uri"`` or ``"name"``: which of the Airflow asset's
        identities is the gapless asset's name.
    :param assets: import only these assets (as named by ``name_from``).
    :param overlap: how far before the cursor's timestamp to read again.
    :param max_pages: stop after this many pages (the rest is for the next run).

    >>> with AirflowAPI(url, username="gapless", password=pw) as api, gapless.Client(gurl) as g:  # doctest: +SKIP
    ...     result = sync(api, g, cursor=Cursor.from_json(saved))
    ...     saved = result.cursor.to_json()
    """
    if name_from not in ("uri", "name"):
        raise ValueError(f"name_from {name_from!r}: expected 'uri' or 'name'")
    cursor = cursor or Cursor()
    wanted = set(assets) if assets is not None else None
    key_spans = {a.asset: (a.key_span, a.tz) for a in client.assets()}
    since = None
    if cursor.timestamp:
        back = t.duration(overlap, "overlap", allow_zero=True)
        since = t.text(back.add_to(t.instant(cursor.timestamp, "cursor"), None, -1))
    result = SyncResult(cursor=cursor)
    offset = 0
    while max_pages is None or result.pages < max_pages:
        page = airflow.get(
            "/api/v2/assets/events",
            order_by="timestamp",
            limit=PAGE,
            offset=offset,
            timestamp_gte=since,
        )
        events = page.get("asset_events", [])
        result.pages += 1
        result.read += len(events)
        batch, origin = [], []
        for ev in events:
            name = ev.get(name_from)
            if wanted is not None and name not in wanted:
                result.skipped["not selected"] += 1
                continue
            got = gapless_event(ev, name_from=name_from, key_spans=key_spans, id_prefix=id_prefix)
            if got[1] is not None:  # skipped, and why
                result.skipped[got[1]] += 1
                continue
            batch.append(got[0])
            origin.append(ev)
        if batch:
            try:
                recorded = client.record_many(batch)
            except gapless.GaplessError as e:
                pos = e.position
                where = ""
                if pos and pos[0] == "event" and 1 <= pos[1] <= len(origin):
                    bad = origin[pos[1] - 1]
                    where = f" at {describe(bad)} ({bad.get(name_from)})"
                raise SyncError(
                    f"gapless refused the page at offset {offset}{where}: {e.message}"
                ) from e
            result.sent += len(batch)
            result.accepted += recorded.accepted
            result.duplicates += recorded.duplicates
        if events:
            last = events[-1]
            result.cursor = Cursor(last.get("timestamp"), last.get("id"))
            if save is not None:
                save(result.cursor)
        if len(events) < PAGE:
            break
        offset += len(events)
    return result


# -- the command line ---------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """``gapless-airflow-sync``: one sync, its cursor kept in ``--state``."""
    p = argparse.ArgumentParser(
        prog="gapless-airflow-sync",
        description="Import Airflow asset events that carry intervals into gapless (a rerun is a no-op).",
    )
    p.add_argument(
        "--airflow-url",
        default=os.environ.get("AIRFLOW_URL"),
        help="Airflow's base URL (AIRFLOW_URL)",
    )
    p.add_argument(
        "--username", default=os.environ.get("AIRFLOW_USERNAME"), help="(AIRFLOW_USERNAME)"
    )
    p.add_argument(
        "--password", default=os.environ.get("AIRFLOW_PASSWORD"), help="(AIRFLOW_PASSWORD)"
    )
    p.add_argument(
        "--token", default=os.environ.get("AIRFLOW_TOKEN"), help="a fixed API token (AIRFLOW_TOKEN)"
    )
    p.add_argument("--gapless-url", default=os.environ.get("GAPLESS_URL"), help="(GAPLESS_URL)")
    p.add_argument("--gapless-token", default=None, help="(GAPLESS_TOKEN)")
    p.add_argument(
        "--state", type=Path, help="the cursor's file: read, and written after each page"
    )
    p.add_argument("--name-from", choices=("uri", "name"), default="uri")
    p.add_argument(
        "--asset", action="append", dest="assets", help="import only this asset (repeat)"
    )
    p.add_argument(
        "--overlap", default="PT5M", help="read again this far before the cursor (default PT5M)"
    )
    p.add_argument("--id-prefix", default="airflow:")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = p.parse_args(argv)
    try:
        if not args.airflow_url:
            raise SyncError("--airflow-url (or AIRFLOW_URL) is required")
        cursor = Cursor.from_json(
            args.state.read_text() if args.state and args.state.exists() else None
        )

        def save(c: Cursor) -> None:
            if args.state:
                tmp = args.state.with_name(args.state.name + ".tmp")
                tmp.write_text(c.to_json() + "\n")
                tmp.replace(args.state)

        with (
            AirflowAPI(
                args.airflow_url, username=args.username, password=args.password, token=args.token
            ) as api,
            gapless.Client(args.gapless_url, args.gapless_token) as client,
        ):
            result = sync(
                api,
                client,
                cursor=cursor,
                name_from=args.name_from,
                assets=args.assets,
                overlap=args.overlap,
                id_prefix=args.id_prefix,
                save=save,
            )
    except (SyncError, gapless.GaplessError, ValueError, OSError) as e:
        print(f"gapless-airflow-sync: {e}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_dict()) if args.json else result.summary())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
