"""Apache Iceberg tables as gapless producers (SPEC §10): ``pip install gapless[iceberg]``.

A writer says which interval each commit covers in the snapshot's summary
(:func:`write_properties`); :func:`sync` records every snapshot since the
last one recorded: an ``append`` landed, a ``delete`` retracted, and the
``delete`` + ``append`` pair of one overwrite in **one atomic batch**, so a
reprocessed hour never shows a gap, never makes a rule fire ``incomplete``
and never fires its window twice.

>>> write_properties("2025-06-01T10:00:00Z", "2025-06-01T10:05:00Z")
{'interval_start': '2025-06-01T10:00:00Z', 'interval_end': '2025-06-01T10:05:00Z'}
>>> table.append(df, snapshot_properties=write_properties(t0, t1))  # doctest: +SKIP
>>> gapless.iceberg.sync(client, table, "clicks")  # doctest: +SKIP
Synced(recorded=1, duplicates=0, skipped=0, cursor=1)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _errors
from ._time import InstantLike, TzLike, format_instant, from_micros, to_datetime

if TYPE_CHECKING:
    from ._client import Client

__all__ = [
    "Plan",
    "Synced",
    "cursor",
    "snapshot_batches",
    "sync",
    "table_metadata",
    "write_properties",
]

START = "interval_start"
END = "interval_end"
#: Events go to the server in requests of at most this many (a pair is never split).
BATCH_EVENTS = 5000


def write_properties(
    start: InstantLike,
    end: InstantLike,
    *,
    tz: TzLike | None = None,
    start_property: str = START,
    end_property: str = END,
) -> dict[str, str]:
    """The ``snapshot_properties`` a writer passes to ``table.append(...)``
    or ``table.overwrite(...)`` to say which interval ``[start, end)`` the
    commit covers (RFC 3339 UTC text; naive values read in ``tz``)."""
    s, e = to_datetime(start, "start", tz), to_datetime(end, "end", tz)
    if not s < e:
        raise ValueError(f"[{format_instant(s)}, {format_instant(e)}) is empty or reversed")
    return {start_property: format_instant(s), end_property: format_instant(e)}


@dataclass(frozen=True)
class Plan:
    """What a table's snapshots map to: atomic batches of events in
    sequence order, the snapshots skipped (no interval, or an operation
    that changes no data such as ``replace``), and the newest sequence
    number looked at."""

    batches: list[list[dict[str, Any]]]
    skipped: int
    cursor: int


@dataclass(frozen=True)
class Synced:
    """What :func:`sync` did: events stored, duplicates (already stored),
    snapshots skipped, and the sequence number synced up to."""

    recorded: int
    duplicates: int
    skipped: int
    cursor: int


def _interval(summary: Mapping[str, Any], sp: str, ep: str) -> tuple[Any, Any] | None:
    s, e = summary.get(sp), summary.get(ep)
    if s is None or e is None:
        return None  # without both properties a snapshot says nothing about time
    return s, e


def _seq(s: Mapping[str, Any]) -> int | None:
    n = s.get("sequence-number")
    return None if n is None else int(n)


def _same(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    return all(
        to_datetime(x, "interval") == to_datetime(y, "interval") for x, y in zip(a, b, strict=True)
    )


def snapshot_batches(
    metadata: Mapping[str, Any],
    asset: str,
    *,
    after: int = 0,
    table_uuid: str | None = None,
    start_property: str = START,
    end_property: str = END,
) -> Plan:
    """The events of a table's snapshots with a sequence number above
    ``after`` (the shared mapping of SPEC §10, the same as ``gapless ingest
    --format iceberg-snapshots``). ``metadata`` is the table metadata as
    JSON (``snapshots`` with ``snapshot-id``, ``parent-snapshot-id``,
    ``sequence-number``, ``summary``); ``table_uuid`` defaults to its
    ``table-uuid``.
    """
    uuid = table_uuid or metadata.get("table-uuid")
    if not uuid:
        raise ValueError("table_uuid: the metadata has no table-uuid; pass table_uuid=")
    # commit order: the sequence number where there is one, else file order
    # (a format-1 table has none: then every snapshot is looked at each time)
    ordered = sorted(
        enumerate(metadata.get("snapshots") or []),
        key=lambda item: (_seq(item[1]) if _seq(item[1]) is not None else 2**63, item[0]),
    )
    snaps = [s for _, s in ordered if (n := _seq(s)) is None or n > after]
    batches: list[list[dict[str, Any]]] = []
    skipped = 0
    cursor = after

    def event(s: Mapping[str, Any], kind: str, iv: tuple[Any, Any]) -> dict[str, Any]:
        sid = int(s["snapshot-id"])
        out: dict[str, Any] = {
            "asset": asset,
            "id": f"iceberg:{uuid}:{sid}",
            "start": iv[0],
            "end": iv[1],
            "kind": kind,
            "extra": {
                "source": "iceberg",
                "snapshot_id": str(sid),
                "operation": s["summary"].get("operation"),
                "sequence_number": _seq(s),
            },
        }
        ms = s.get("timestamp-ms")
        if ms is not None:
            out["produced_at"] = format_instant(from_micros(int(ms) * 1000))
        return out

    i = 0
    while i < len(snaps):
        s = snaps[i]
        i += 1
        cursor = max(cursor, _seq(s) or 0)
        summary = s.get("summary") or {}
        op = summary.get("operation")
        iv = _interval(summary, start_property, end_property)
        if iv is None or op not in ("append", "delete", "overwrite"):
            skipped += 1
            continue
        if op == "delete":
            batch = [event(s, "retracted", iv)]
            if i < len(snaps):
                n = snaps[i]
                nsum = n.get("summary") or {}
                niv = _interval(nsum, start_property, end_property)
                if (
                    nsum.get("operation") == "append"
                    and n.get("parent-snapshot-id") is not None
                    and int(n["parent-snapshot-id"]) == int(s["snapshot-id"])
                    and niv is not None
                    and _same(iv, niv)
                ):
                    batch.append(event(n, "landed", niv))
                    cursor = max(cursor, _seq(n) or 0)
                    i += 1
            batches.append(batch)
        else:
            batches.append([event(s, "landed", iv)])
    return Plan(batches, skipped, cursor)


def cursor(client: Client, asset: str, table_uuid: str) -> int:
    """The sequence number of the newest snapshot of the table recorded
    in ``asset`` (read from its events' ``extra``), 0 when none is."""
    prefix = f"iceberg:{table_uuid}:"
    best = 0
    try:
        for e in client.events(asset, limit=10_000):
            if e.id and e.id.startswith(prefix) and isinstance(e.extra, dict):
                n = e.extra.get("sequence_number")
                if isinstance(n, int) and n > best:
                    best = n
    except _errors.NotFound:
        return 0
    return best


def table_metadata(table: Any) -> dict[str, Any]:
    """A pyiceberg table's current metadata as JSON (ids exact: never floats)."""
    metadata: dict[str, Any] = json.loads(
        table.metadata.model_dump_json(by_alias=True, exclude_none=True)
    )
    return metadata


def sync(
    client: Client,
    table: Any,
    asset: str,
    *,
    start_property: str = START,
    end_property: str = END,
    refresh: bool = True,
) -> Synced:
    """Record in ``asset`` every snapshot of the pyiceberg ``table`` newer
    than the last one recorded (the cursor lives in gapless, see
    :func:`cursor`: nothing to keep on the caller's side, and running it
    again is a no-op). Snapshots map as :func:`snapshot_batches` says; the
    events go in atomic requests of at most 5,000 events, in sequence
    order, an overwrite's ``delete`` + ``append`` always in the same one.
    A failure raises; what was stored before it stays, and the next sync
    goes on from there."""
    if refresh and hasattr(table, "refresh"):
        table.refresh()
    meta = table_metadata(table)
    uuid = str(meta["table-uuid"])
    after = cursor(client, asset, uuid)
    plan = snapshot_batches(
        meta, asset, after=after, start_property=start_property, end_property=end_property
    )
    recorded = duplicates = 0
    chunk: list[dict[str, Any]] = []

    def send() -> None:
        nonlocal recorded, duplicates, chunk
        if chunk:
            r = client.record_many(chunk)
            recorded += r.accepted
            duplicates += r.duplicates
            chunk = []

    for batch in plan.batches:
        if len(chunk) + len(batch) > BATCH_EVENTS:
            send()
        chunk.extend(batch)
    send()
    return Synced(recorded, duplicates, plan.skipped, plan.cursor)
