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

A table that Iceberg's Kafka Connect sink writes needs no code in the
producer: the sink stamps its commits with a valid-through timestamp
(``kafka.connect.vtts``), and a snapshot without interval properties maps
to ``[previous vtts, vtts)`` (watermark mode, as :mod:`gapless.spark`'s).

>>> plan = snapshot_batches({"table-uuid": "t", "snapshots": [
...     {"snapshot-id": 1, "sequence-number": 1,
...      "summary": {"operation": "append", "kafka.connect.vtts": "1748772000000"}},
...     {"snapshot-id": 2, "sequence-number": 2,
...      "summary": {"operation": "append", "kafka.connect.vtts": "1748772300000"}}]}, "clicks")
>>> [(e["id"], e["start"], e["end"]) for b in plan.batches for e in b]
[('iceberg:t:2', '2025-06-01T10:00:00Z', '2025-06-01T10:05:00Z')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import _errors
from ._batches import record_batches
from ._time import FIRST, LAST, InstantLike, TzLike, format_instant, from_micros, to_datetime

if TYPE_CHECKING:
    from ._client import Client

__all__ = [
    "Plan",
    "Synced",
    "cursor",
    "last_vtts",
    "snapshot_batches",
    "sync",
    "table_metadata",
    "write_properties",
]

START = "interval_start"
END = "interval_end"
#: The Kafka Connect sink's valid-through timestamp as Tabular's connector
#: writes it: milliseconds since the Unix epoch, decimal text.
VTTS = "kafka.connect.vtts"
#: The same timestamp as Apache Iceberg's connector writes it: ISO 8601 text.
VALID_THROUGH = "kafka.connect.valid-through-ts"
#: The sink's commit id, shared by the snapshots of one commit.
COMMIT_ID = "kafka.connect.commit-id"
# What the sink commits; a vtts on another operation (``replace``:
# compaction) moves nothing, as in the Rust mapping.
_DATA_OPERATIONS = ("append", "overwrite", "delete")
# Exactly what Java's Long.toString writes (``int()`` would also take
# spaces, ``+`` and ``_``, which the Rust mapping refuses).
_MILLIS = re.compile(r"-?[0-9]+", re.ASCII)


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
    that changes no data such as ``replace``), the newest sequence
    number looked at, and the newest Kafka Connect vtts read (None when
    none was)."""

    batches: list[list[dict[str, Any]]]
    skipped: int
    cursor: int
    vtts: datetime | None = None


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


def _text(summary: Mapping[str, Any], key: str) -> str | None:
    v = summary.get(key)
    return v if isinstance(v, str) else None


def _valid_through(summary: Mapping[str, Any]) -> tuple[datetime, str] | str | None:
    """A snapshot's vtts and its text as written; None without either
    property; the reason to skip it when its text is not a timestamp."""
    text = _text(summary, VTTS)
    if text is not None:
        if _MILLIS.fullmatch(text):
            try:
                at = from_micros(int(text) * 1000)
            except OverflowError:
                pass
            else:
                if FIRST <= at <= LAST:
                    return at, text
        return f"{VTTS} is not a timestamp"
    text = _text(summary, VALID_THROUGH)
    if text is None:
        return None
    try:
        return to_datetime(text, VALID_THROUGH), text
    except ValueError:
        return f"{VALID_THROUGH} is not a timestamp"


def _advance(previous: datetime | None, s: Mapping[str, Any]) -> datetime | None:
    """The time line after snapshot ``s``: the newest vtts of a data operation."""
    summary = s.get("summary") or {}
    vt = _valid_through(summary)
    if summary.get("operation") not in _DATA_OPERATIONS or not isinstance(vt, tuple):
        return previous
    return vt[0] if previous is None else max(previous, vt[0])


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
    previous_vtts: datetime | None = None,
    start_property: str = START,
    end_property: str = END,
) -> Plan:
    """The events of a table's snapshots with a sequence number above
    ``after`` (the shared mapping of SPEC §10, the same as ``gapless ingest
    --format iceberg-snapshots``). ``metadata`` is the table metadata as
    JSON (``snapshots`` with ``snapshot-id``, ``parent-snapshot-id``,
    ``sequence-number``, ``summary``); ``table_uuid`` defaults to its
    ``table-uuid``.

    A snapshot without interval properties but with the Kafka Connect
    sink's vtts lands ``[previous vtts, vtts)``; the previous vtts is the
    newest of ``previous_vtts`` (what gapless holds, :func:`last_vtts`)
    and the vtts of the snapshots up to ``after`` and before it here.
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
    # The time line of the vtts: what the snapshots already synced moved it to.
    previous = previous_vtts
    for _, s in ordered:
        if (n := _seq(s)) is not None and n <= after:
            previous = _advance(previous, s)

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

    def vtts_event(
        s: Mapping[str, Any], start: datetime, vt: tuple[datetime, str]
    ) -> dict[str, Any]:
        out = event(s, "landed", (format_instant(start), format_instant(vt[0])))
        out["extra"]["vtts"] = vt[1]
        out["extra"]["commit_id"] = _text(s["summary"], COMMIT_ID)
        return out

    i = 0
    while i < len(snaps):
        s = snaps[i]
        i += 1
        cursor = max(cursor, _seq(s) or 0)
        summary = s.get("summary") or {}
        op = summary.get("operation")
        iv = _interval(summary, start_property, end_property)
        last, previous = previous, _advance(previous, s)
        if iv is None:
            # gapless's own properties win; without them, the sink's vtts
            vt = _valid_through(summary)
            if (
                isinstance(vt, tuple)
                and op in _DATA_OPERATIONS
                and last is not None
                and vt[0] > last
            ):
                batches.append([vtts_event(s, last, vt)])
            else:
                skipped += 1  # none, unreadable, compaction, the first, or not advancing
            continue
        if op not in ("append", "delete", "overwrite"):
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
                    previous = _advance(previous, n)
                    i += 1
            batches.append(batch)
        else:
            batches.append([event(s, "landed", iv)])
    return Plan(batches, skipped, cursor, previous)


def _recorded(client: Client, asset: str, table_uuid: str) -> tuple[int, datetime | None]:
    """One read of the asset's events of the table: the newest sequence
    number and the newest vtts recorded."""
    prefix = f"iceberg:{table_uuid}:"
    best = 0
    vtts: datetime | None = None
    try:
        for e in client.events(asset, limit=10_000):
            if e.id and e.id.startswith(prefix) and isinstance(e.extra, dict):
                n = e.extra.get("sequence_number")
                if isinstance(n, int) and n > best:
                    best = n
                if "vtts" in e.extra and e.kind == "landed" and (vtts is None or e.end > vtts):
                    vtts = e.end
    except _errors.NotFound:
        return 0, None
    return best, vtts


def cursor(client: Client, asset: str, table_uuid: str) -> int:
    """The sequence number of the newest snapshot of the table recorded
    in ``asset`` (read from its events' ``extra``), 0 when none is."""
    return _recorded(client, asset, table_uuid)[0]


def last_vtts(client: Client, asset: str, table_uuid: str) -> datetime | None:
    """The newest Kafka Connect vtts of the table recorded in ``asset``:
    the latest ``end`` of its events that carry ``extra.vtts``; None when
    there is none. What a sync continues from when the table's snapshots
    that carried it have expired."""
    return _recorded(client, asset, table_uuid)[1]


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
    goes on from there.

    The previous vtts of the Kafka Connect mapping is the newer of what
    gapless holds (:func:`last_vtts`) and the vtts of the table's snapshots
    up to the cursor, so a sync that resumes after those snapshots expired
    still continues where the last recorded one ended."""
    if refresh and hasattr(table, "refresh"):
        table.refresh()
    meta = table_metadata(table)
    uuid = str(meta["table-uuid"])
    after, vtts = _recorded(client, asset, uuid)
    plan = snapshot_batches(
        meta,
        asset,
        after=after,
        previous_vtts=vtts,
        start_property=start_property,
        end_property=end_property,
    )
    recorded, duplicates = record_batches(client, plan.batches)
    return Synced(recorded, duplicates, plan.skipped, plan.cursor)
