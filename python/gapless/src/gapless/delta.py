"""Delta Lake tables as gapless producers (SPEC §10): ``pip install gapless[delta]``.

A writer says which interval each commit covers in the commit's custom
metadata (:func:`commit_properties`); :func:`sync` records every commit
since the last one recorded: a write (an append, an overwrite, a
``replaceWhere``) lands the interval over what was there (latest wins), a
``DELETE`` retracts it. One commit is one event, so an overwrite of an hour
that twelve 5-minute appends covered never shows a gap, never makes a rule
fire ``incomplete`` and never fires its window twice.

>>> commit_properties("2025-06-01T10:00:00Z", "2025-06-01T10:05:00Z").custom_metadata
{'interval_start': '2025-06-01T10:00:00Z', 'interval_end': '2025-06-01T10:05:00Z'}
>>> write_deltalake(path, df, mode="append", commit_properties=commit_properties(t0, t1))  # doctest: +SKIP
>>> gapless.delta.sync(client, path, "clicks")  # doctest: +SKIP
Synced(recorded=1, duplicates=0, skipped=0, cursor=0)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from . import _errors
from ._batches import record_batches
from ._time import InstantLike, TzLike, format_instant, from_micros, to_datetime

if TYPE_CHECKING:
    from deltalake import CommitProperties, DeltaTable

    from ._client import Client

__all__ = [
    "MissingCommits",
    "Plan",
    "Synced",
    "commit_batches",
    "commit_properties",
    "cursor",
    "log_commits",
    "sync",
]

START = "interval_start"
END = "interval_end"

#: Operations that write data (the interval lands) and that delete it (the
#: interval is retracted); any other operation says nothing about data.
LANDS = frozenset(
    {
        "WRITE",
        "STREAMING UPDATE",
        "MERGE",
        "UPDATE",
        "CREATE TABLE AS SELECT",
        "REPLACE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE AS SELECT",
    }
)
RETRACTS = frozenset({"DELETE", "TRUNCATE"})

_COMMIT_FILE = re.compile(r"^(\d{20})\.json$")


class MissingCommits(ValueError):
    """Commits the sync needs are no longer in the table's log (log
    retention cleaned them up): ``version`` is the first missing one,
    ``oldest`` the oldest commit left. ``from_oldest=True`` starts there."""

    def __init__(self, message: str, version: int, oldest: int) -> None:
        super().__init__(message)
        self.version = version
        self.oldest = oldest


def commit_properties(
    start: InstantLike,
    end: InstantLike,
    *,
    tz: TzLike | None = None,
    start_property: str = START,
    end_property: str = END,
    custom_metadata: Mapping[str, Any] | None = None,
    **properties: Any,
) -> CommitProperties:
    """The ``deltalake.CommitProperties`` a writer passes to
    ``write_deltalake(...)``, ``DeltaTable.delete(...)``, ``merge`` …
    (``commit_properties=``) to say which interval ``[start, end)`` the
    commit covers (RFC 3339 UTC text in the commit's custom metadata; naive
    values read in ``tz``). ``custom_metadata`` is kept beside the interval;
    other keywords (``app_transactions``, ``max_commit_retries``) go to
    ``CommitProperties`` as they are."""
    from deltalake import CommitProperties

    s, e = to_datetime(start, "start", tz), to_datetime(end, "end", tz)
    if not s < e:
        raise ValueError(f"[{format_instant(s)}, {format_instant(e)}) is empty or reversed")
    metadata = dict(custom_metadata or {})
    metadata[start_property] = format_instant(s)
    metadata[end_property] = format_instant(e)
    return CommitProperties(custom_metadata=metadata, **properties)


@dataclass(frozen=True)
class Plan:
    """What a table's commits map to: atomic batches of events in version
    order (one commit each), the commits skipped (no interval, an operation
    that changes no data such as ``OPTIMIZE``, a ``txn`` version already
    recorded), and the newest version looked at (``-1``: none)."""

    batches: list[list[dict[str, Any]]]
    skipped: int
    cursor: int


@dataclass(frozen=True)
class Synced:
    """What :func:`sync` did: events stored, duplicates (already stored),
    commits skipped, and the version synced up to (``-1``: none yet)."""

    recorded: int
    duplicates: int
    skipped: int
    cursor: int


def _actions(version: int, commit: str | Iterable[Any]) -> list[Any]:
    if not isinstance(commit, str):
        return list(commit)
    out = []
    for n, line in enumerate(commit.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError as e:
                raise ValueError(f"version {version}: JSON value {n}: {e}") from None
    return out


def _action(actions: list[Any], name: str) -> dict[str, Any] | None:
    for a in actions:
        if isinstance(a, dict) and isinstance(a.get(name), dict):
            found: dict[str, Any] = a[name]
            return found
    return None


def _text(info: Mapping[str, Any], key: str, version: int) -> str | None:
    value = info.get(key)
    if value is None or isinstance(value, str):
        return value
    shown = json.dumps(value, separators=(",", ":"))
    raise ValueError(f"version {version}: commitInfo {key} is {shown}, not RFC 3339 text")


def _check_versions(versions: list[int], first: int, where: str, from_oldest: bool) -> None:
    expected = versions[0] if from_oldest and versions[0] > first else first
    for v in versions:
        if v != expected:
            if expected == first and not from_oldest:
                raise MissingCommits(
                    f"{where}: version {expected} is not in the log (log retention cleaned it "
                    f"up; the oldest commit left is version {v}): from_oldest=True starts there",
                    expected,
                    v,
                )
            raise MissingCommits(
                f"{where}: version {expected} is not in the log", expected, versions[0]
            )
        expected += 1


def commit_batches(
    commits: Iterable[tuple[int, str | Iterable[Any]]],
    asset: str,
    *,
    table_id: str,
    after: int = -1,
    from_oldest: bool = False,
    txn_versions: Mapping[str, int] | None = None,
    start_property: str = START,
    end_property: str = END,
    where: str = "delta log",
) -> Plan:
    """The events of a Delta table's commits with a version above
    ``after`` (the shared mapping of SPEC §10, the same as ``gapless ingest
    --format delta-log``). ``commits`` are ``(version, commit)`` pairs, the
    commit as the text of its ``_delta_log/<version>.json`` file or as its
    list of actions; ``txn_versions`` the highest ``txn`` version each
    streaming app already recorded. The versions after ``after`` must run
    without a hole (:class:`MissingCommits` names the first missing one;
    with ``from_oldest`` they may start later, at the oldest one given).
    """
    chosen = sorted((v, c) for v, c in commits if v > after)
    plan_cursor = after
    if not chosen:
        return Plan([], 0, plan_cursor)
    _check_versions([v for v, _ in chosen], after + 1, where, from_oldest)
    seen = dict(txn_versions or {})
    batches: list[list[dict[str, Any]]] = []
    skipped = 0
    for version, commit in chosen:
        plan_cursor = version
        actions = _actions(version, commit)
        info = _action(actions, "commitInfo")
        if info is None:
            skipped += 1
            continue
        start, end = _text(info, start_property, version), _text(info, end_property, version)
        op = info.get("operation")
        operation = op if isinstance(op, str) else ""
        if start is None or end is None or operation not in LANDS | RETRACTS:
            skipped += 1
            continue
        extra: dict[str, Any] = {
            "source": "delta",
            "table_id": table_id,
            "version": version,
            "operation": operation,
        }
        parameters = info.get("operationParameters")
        if isinstance(parameters, dict):
            for key in ("mode", "predicate"):
                if parameters.get(key) is not None:
                    extra[key] = parameters[key]
        txn = _action(actions, "txn")
        app, txn_version = (txn or {}).get("appId"), (txn or {}).get("version")
        if (
            isinstance(app, str)
            and isinstance(txn_version, int)
            and not isinstance(txn_version, bool)
        ):
            if app in seen and txn_version <= seen[app]:
                skipped += 1  # a batch the app committed again: already recorded
                continue
            seen[app] = txn_version
            extra["app_id"] = app
            extra["txn_version"] = txn_version
            event_id = f"delta:{table_id}:txn:{app}:{txn_version}"
        else:
            event_id = f"delta:{table_id}:{version}"
        event: dict[str, Any] = {
            "asset": asset,
            "id": event_id,
            "start": start,
            "end": end,
            "kind": "landed" if operation in LANDS else "retracted",
            "extra": extra,
        }
        ms = info.get("timestamp")
        if isinstance(ms, int) and not isinstance(ms, bool):
            try:
                event["produced_at"] = format_instant(from_micros(ms * 1000))
            except (OverflowError, ValueError):
                pass  # out of range: the event goes without it, as the binary's does
        batches.append([event])
    return Plan(batches, skipped, plan_cursor)


def _recorded(client: Client, asset: str, table_id: str) -> tuple[int, dict[str, int]]:
    prefix = f"delta:{table_id}:"
    best = -1
    txns: dict[str, int] = {}
    try:
        for e in client.events(asset, limit=10_000):
            if not (e.id and e.id.startswith(prefix) and isinstance(e.extra, dict)):
                continue
            v = e.extra.get("version")
            if isinstance(v, int) and v > best:
                best = v
            app, n = e.extra.get("app_id"), e.extra.get("txn_version")
            if isinstance(app, str) and isinstance(n, int) and n > txns.get(app, -1):
                txns[app] = n
    except _errors.NotFound:
        pass
    return best, txns


def cursor(client: Client, asset: str, table_id: str) -> int:
    """The version of the newest commit of the table recorded in ``asset``
    (read from its events' ``extra``), ``-1`` when none is."""
    return _recorded(client, asset, table_id)[0]


def _local_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and os.name == "nt"):
        return uri
    return None


def log_commits(
    table_uri: str,
    *,
    after: int = -1,
    storage_options: Mapping[str, str] | None = None,
) -> list[tuple[int, str]]:
    """The ``(version, text)`` of each commit file of the table's
    ``_delta_log`` with a version above ``after``. A local table is read
    from disk; one in an object store through ``deltalake.fs`` (which
    needs ``pyarrow``) with ``storage_options``."""
    local = _local_path(table_uri)
    out: list[tuple[int, str]] = []
    if local is not None:
        log = os.path.join(local, "_delta_log")
        for name in os.listdir(log):
            m = _COMMIT_FILE.match(name)
            if m and int(m.group(1)) > after:
                with open(os.path.join(log, name), encoding="utf-8") as f:
                    out.append((int(m.group(1)), f.read()))
        return sorted(out)
    return _store_commits(table_uri, after=after, storage_options=storage_options)


def _store_commits(
    table_uri: str, *, after: int, storage_options: Mapping[str, str] | None
) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    try:
        from pyarrow import fs
    except ImportError as e:  # pragma: no cover: pyarrow is in the test environment
        raise ImportError(f"reading the log of {table_uri} from its store needs pyarrow") from e
    from deltalake.fs import DeltaStorageHandler

    store = fs.PyFileSystem(DeltaStorageHandler(table_uri, dict(storage_options or {})))
    for info in store.get_file_info(fs.FileSelector("_delta_log")):
        m = _COMMIT_FILE.match(info.base_name)
        if m and int(m.group(1)) > after:
            with store.open_input_stream(info.path) as stream:
                out.append((int(m.group(1)), stream.read().decode("utf-8")))
    return sorted(out)


def sync(
    client: Client,
    table: DeltaTable | str,
    asset: str,
    *,
    from_oldest: bool = False,
    storage_options: Mapping[str, str] | None = None,
    start_property: str = START,
    end_property: str = END,
) -> Synced:
    """Record in ``asset`` every commit of the Delta ``table`` (a
    ``DeltaTable`` or a table URI) newer than the last one recorded (the
    cursor lives in gapless, see :func:`cursor`: nothing to keep on the
    caller's side, and running it again is a no-op). Commits map as
    :func:`commit_batches` says, read from the ``_delta_log`` files (they,
    not ``DeltaTable.history()``, hold the streaming ``txn`` actions); the
    events go in version order in atomic requests of at most 5,000 events.

    Raises :class:`MissingCommits` naming the first version the sync needs
    that log retention cleaned up, unless ``from_oldest=True``: then it
    starts at the oldest commit left (what was between is not recorded). A
    failure raises; what was stored before it stays, and the next sync goes
    on from there."""
    from deltalake import DeltaTable

    if isinstance(table, DeltaTable):
        dt = table
    else:
        dt = DeltaTable(table, storage_options=dict(storage_options or {}) or None)
    uri = dt.table_uri
    table_id = str(dt.metadata().id)
    after, txns = _recorded(client, asset, table_id)
    commits = log_commits(uri, after=after, storage_options=storage_options)
    plan = commit_batches(
        commits,
        asset,
        table_id=table_id,
        after=after,
        from_oldest=from_oldest,
        txn_versions=txns,
        start_property=start_property,
        end_property=end_property,
        where=f"delta table {uri}",
    )
    recorded, duplicates = record_batches(client, plan.batches)
    return Synced(recorded, duplicates, plan.skipped, plan.cursor)
