"""Spark Structured Streaming as a gapless producer (SPEC §10): ``pip install gapless[spark]``.

Two ways to record what a streaming query wrote:

- :class:`GaplessListener`, a ``StreamingQueryListener``: in ``mode="watermark"``
  one landed event ``[previous watermark, watermark)`` per progress whose
  watermark moved, id ``<query id>:<batch id>``. The watermark is Spark's
  own statement of completeness (no row older than it will be processed any
  more), so these events tile time without holes and the frontier is the
  query's watermark. Use it for event-time queries with ``withWatermark``.
- :func:`record_batch`, called inside ``foreachBatch``: the interval given
  explicitly, or ``[floor(min), floor(max) + resolution)`` of an event-time
  column. Min/max only states what the batch *saw*, not that nothing older
  is still to come: use it when the query has no watermark, or when the
  batch's own bounds are what a consumer needs (and pick the resolution so
  consecutive batches touch, see :func:`record_batch`).

>>> events, _ = progress_events([
...     {"id": "q", "runId": "r", "batchId": 1, "numInputRows": 5, "sources": [],
...      "eventTime": {"watermark": "2026-11-30T11:30:50.416Z"}},
...     {"id": "q", "runId": "r", "batchId": 2, "numInputRows": 7, "sources": [],
...      "eventTime": {"watermark": "2026-11-30T11:30:54.416Z"}}], "clicks")
>>> [(e["id"], e["start"], e["end"]) for e in events]
[('q:2', '2026-11-30T11:30:50.416Z', '2026-11-30T11:30:54.416Z')]
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, TypeVar

from . import _errors
from ._time import DurationLike, InstantLike, format_instant, from_micros, seconds, to_datetime

try:
    from pyspark.sql.streaming import StreamingQueryListener
except ImportError:  # the mappings work without pyspark; the listener does not
    StreamingQueryListener = object  # type: ignore[assignment,misc]
    _HAVE_PYSPARK = False
else:
    _HAVE_PYSPARK = True

_NO_PYSPARK = "gapless.spark needs pyspark (>= 3.5) for this: pip install 'gapless[spark]'"

if TYPE_CHECKING:
    from ._client import Client
    from ._models import Recorded

__all__ = [
    "GaplessListener",
    "last_watermark",
    "progress_events",
    "record_batch",
    "snap",
    "watermark",
]

log = logging.getLogger("gapless.spark")

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_T = TypeVar("_T")
MODES = ("watermark",)


def watermark(progress: Mapping[str, Any]) -> datetime | None:
    """A progress's ``eventTime.watermark``, or None when it has none yet
    (absent, null, or Spark's placeholder ``1970-01-01T00:00:00.000Z``)."""
    text = (progress.get("eventTime") or {}).get("watermark")
    if not text:
        return None
    w = to_datetime(text, "eventTime.watermark")
    return None if w == _EPOCH else w


def _extra(progress: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "source": "spark",
        "query_id": progress["id"],
        "run_id": progress.get("runId"),
        "batch_id": progress["batchId"],
        "num_input_rows": progress.get("numInputRows"),
        "offsets": [
            {
                "description": s.get("description"),
                "start": s.get("startOffset"),
                "end": s.get("endOffset"),
            }
            for s in progress.get("sources") or []
        ],
    }


def progress_events(
    progresses: Iterable[Mapping[str, Any]],
    asset: str,
    *,
    previous: Mapping[str, datetime] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, datetime]]:
    """The watermark-mode events of ``StreamingQueryProgress`` JSON objects
    (the shared mapping of SPEC §10, the same as ``gapless ingest --format
    spark-progress``): per query ``id``, in ``batchId`` order, a batch whose
    watermark moved past the previous batch's real watermark gives
    ``[previous, watermark)``, id ``<id>:<batchId>``. ``previous`` maps a
    query id to the watermark before the first of its progresses here (a
    restart); the answer is the events and each query's last watermark.

    A progress repeated with the same ``batchId`` (a batch run again after a
    restart) maps to the same id and interval as the first one; only the
    first is returned.
    """
    by_query: dict[str, list[Mapping[str, Any]]] = {}
    for p in progresses:
        by_query.setdefault(p["id"], []).append(p)
    events: list[dict[str, Any]] = []
    last: dict[str, datetime] = dict(previous or {})
    for qid, ps in by_query.items():
        ps = sorted(ps, key=lambda p: int(p["batchId"]))  # stable: the first run first
        seen: set[int] = set()
        before = (previous or {}).get(qid)  # the real watermark before the current batch
        for p in ps:
            b = int(p["batchId"])
            if b in seen:
                continue
            seen.add(b)
            w = watermark(p)
            if w is not None and before is not None and w > before:
                events.append(_event(asset, p, before, w))
            if w is not None and (before is None or w > before):
                before = w
        if before is not None:
            last[qid] = before
    return events, last


def _event(asset: str, p: Mapping[str, Any], start: datetime, end: datetime) -> dict[str, Any]:
    return {
        "asset": asset,
        "id": f"{p['id']}:{p['batchId']}",
        "start": format_instant(start),
        "end": format_instant(end),
        "extra": _extra(p),
    }


def last_watermark(
    client: Client, asset: str, query_id: str, before_batch: int | None = None
) -> datetime | None:
    """What gapless holds for a query: the end of its newest recorded
    watermark event (the highest batch id, below ``before_batch`` when
    given), i.e. the last watermark recorded; None when there is none (or
    the asset is unknown). Reads every event of the asset (client-side
    filter on the id prefix ``<query id>:``)."""
    prefix = f"{query_id}:"
    best: tuple[int, datetime] | None = None
    try:
        for e in client.events(asset, limit=10_000):
            if not e.id or not e.id.startswith(prefix) or e.kind != "landed":
                continue
            try:
                b = int(e.id[len(prefix) :])
            except ValueError:
                continue
            if before_batch is not None and b >= before_batch:
                continue
            if best is None or b > best[0]:
                best = (b, e.end)
    except _errors.NotFound:
        return None
    return None if best is None else best[1]


class GaplessListener(StreamingQueryListener):
    """Records a streaming query's progress in gapless, never in its way.

    ``spark.streams.addListener(GaplessListener(client, "clicks"))``: in
    ``mode="watermark"`` (the one mode) each progress whose watermark moved
    from the previous batch's real watermark records the landed event
    ``[previous, watermark)``, id ``<query id>:<batch id>``, ``extra`` the
    batch id, run id, input rows and offsets (SPEC §10). The epoch
    placeholder Spark reports before the first watermark, and batches
    whose watermark did not move, record nothing (an empty batch moves
    nothing).

    Progresses are queued and recorded by one background thread, in order,
    so the query never waits for gapless; a failure to record
    (:class:`gapless.Unavailable`, a fault) is logged and retried with
    backoff (``retry_backoff`` seconds doubled, at most ``max_backoff``),
    one the server refuses (bad input, denied) is logged and dropped.

    Restart from a checkpoint: the query id stays, the run id changes.
    The first time the listener sees a query it asks gapless for the end
    of that query's newest event below the batch (:func:`last_watermark`),
    so the first batch after a restart continues exactly where the last
    recorded one ended: no overlap, no gap. A batch Spark runs again
    after a restart maps to the same id and interval; since its run id
    differs the server calls it a conflict, which the listener checks
    and counts as the duplicate it is (``duplicates``). If the query
    stopped before it recorded anything, the interval up to its first
    watermark is lost (nothing in gapless says where it started).

    :meth:`flush` waits until everything queued is recorded; :meth:`close`
    flushes and stops the thread.
    """

    def __init__(
        self,
        client: Client,
        asset: str,
        *,
        mode: str = "watermark",
        retry_backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        if not _HAVE_PYSPARK:
            raise ImportError(_NO_PYSPARK)
        if mode not in MODES:
            raise ValueError(
                f"mode: {mode!r} is not one of {', '.join(MODES)} "
                "(for min/max of an event-time column use gapless.spark.record_batch in foreachBatch)"
            )
        super().__init__()
        self.client = client
        self.asset = asset
        self.mode = mode
        self.retry_backoff = retry_backoff
        self.max_backoff = max_backoff
        self.recorded = 0
        self.duplicates = 0
        self.failures = 0
        self.dropped = 0
        #: query id -> the newest batch id whose progress was queued
        self.last_batch: dict[str, int] = {}
        self._warned: set[str] = set()
        # query id -> (batch, real watermark)
        self._last: dict[str, tuple[int, datetime | None]] = {}
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._closed = False
        self._worker = threading.Thread(target=self._run, name="gapless-listener", daemon=True)
        self._worker.start()

    # -- StreamingQueryListener -------------------------------------------

    def onQueryStarted(self, event: Any) -> None:
        pass

    def onQueryProgress(self, event: Any) -> None:
        try:
            progress = json.loads(event.progress.json)
            self.last_batch[progress["id"]] = int(progress["batchId"])
            self._queue.put(progress)
        except Exception:  # never let a listener error reach the query
            log.exception("gapless: could not read a streaming progress")

    def onQueryIdle(self, event: Any) -> None:
        pass

    def onQueryTerminated(self, event: Any) -> None:
        pass

    # -- the background thread --------------------------------------------

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every progress queued so far is recorded (or dropped);
        False when ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if deadline is not None and time.monotonic() > deadline:
                return False
            time.sleep(0.02)
        return True

    def close(self, timeout: float | None = 30.0) -> None:
        """Flush, then stop the background thread."""
        self.flush(timeout)
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._worker.join(timeout)

    def _run(self) -> None:
        while True:
            progress = self._queue.get()
            try:
                if progress is None:
                    return
                self._handle(progress)
            except Exception:  # pragma: no cover - a bug here must not kill the thread
                log.exception("gapless: dropped a streaming progress")
                self.dropped += 1
            finally:
                self._queue.task_done()

    def _retrying(self, what: str, fn: Callable[[], _T]) -> _T:
        pause = self.retry_backoff
        while True:
            try:
                return fn()
            except (_errors.Unavailable, _errors.Fault) as e:
                self.failures += 1
                log.warning("gapless: %s failed (%s); trying again in %.1fs", what, e, pause)
                time.sleep(pause)
                pause = min(pause * 2, self.max_backoff)

    def _handle(self, p: dict[str, Any]) -> None:
        qid, b = p["id"], int(p["batchId"])
        w = watermark(p)
        if "watermark" not in (p.get("eventTime") or {}) and qid not in self._warned:
            self._warned.add(qid)
            log.warning(
                "gapless: query %s reports no watermark (no withWatermark?): "
                "watermark mode records nothing for it",
                qid,
            )
        known = self._last.get(qid)
        if known is not None and b > known[0]:
            prev = known[1]
        else:
            # first sight of the query (a start or a restart), or a batch run again
            prev = self._retrying(
                f"reading the last watermark of query {qid}",
                lambda: last_watermark(self.client, self.asset, qid, before_batch=b),
            )
        moved = w is not None and (prev is None or w > prev)
        if not moved or prev is None or w is None:  # (w is None only when it has not moved)
            self._last[qid] = (b, w if moved else prev)
            return
        event = _event(self.asset, p, prev, w)
        try:
            r = self._retrying(
                f"recording batch {b} of query {qid}", lambda: self.client.record_many([event])
            )
            self.recorded += r.accepted
            self.duplicates += r.duplicates
        except _errors.Conflict as e:
            if self._same_interval(event):
                self.duplicates += 1  # a batch run again after a restart (another run id)
            else:
                self.dropped += 1
                log.error("gapless: batch %s of query %s not recorded: %s", b, qid, e)
        except _errors.GaplessError as e:
            self.dropped += 1
            log.error("gapless: batch %s of query %s not recorded: %s", b, qid, e)
        self._last[qid] = (b, w)

    def _same_interval(self, event: Mapping[str, Any]) -> bool:
        start, end = to_datetime(event["start"], "start"), to_datetime(event["end"], "end")
        for e in self.client.events(self.asset, start, end):
            if e.id == event["id"]:
                return e.start == start and e.end == end and e.kind == "landed"
        return False


def _resolution(resolution: DurationLike) -> int:
    us = round(seconds(resolution, "resolution") * 1_000_000)
    if us <= 0:
        raise ValueError("resolution: must be positive")
    return us


def snap(min_us: int, max_us: int, resolution: DurationLike) -> tuple[datetime, datetime]:
    """``[floor(min), floor(max) + resolution)`` of microseconds since the
    epoch, the grid anchored at the Unix epoch.

    >>> snap(1_000_000, 61_000_000, 60)
    (datetime.datetime(1970, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), datetime.datetime(1970, 1, 1, 0, 2, tzinfo=datetime.timezone.utc))
    """
    r = _resolution(resolution)
    return from_micros(min_us // r * r), from_micros(max_us // r * r + r)


def record_batch(
    client: Client,
    asset: str,
    batch_df: Any,
    batch_id: int,
    *,
    start: InstantLike | None = None,
    end: InstantLike | None = None,
    column: str | None = None,
    resolution: DurationLike | None = None,
    id: str | None = None,
    query_id: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Recorded | None:
    """Record what one ``foreachBatch`` batch wrote; call it after the
    batch's write succeeded. Answers :class:`gapless.Recorded`, or None when
    there was nothing to record (an empty batch with ``column``).

    The interval is either given (``start``, ``end``: e.g. the hour a batch
    job rewrote), or computed from the event-time ``column`` (a timestamp)
    snapped to ``resolution``: ``[floor(min), floor(max) + resolution)``,
    computed exactly in Spark (``unix_micros``), so no local time zone is
    involved. The trade-off: min and max only say what the batch saw.
    Snapping to a resolution at least the spacing of rows makes consecutive
    batches touch (Spark's closed min/max leave holes between batches
    otherwise), but it also claims the whole last bucket as written when
    rows of it may still arrive in a later batch (that batch then records
    an overlapping interval; coverage is unchanged). A watermark
    (:class:`GaplessListener`) is the statement that nothing older will
    come; min/max is not.

    The id is ``id``, else ``<query id>:<batch_id>`` (``query_id``, else the
    running query's id, which Spark sets on the batch's thread), so a batch
    run again after a restart is a duplicate (the listener's ids have the
    same form: record the two into different assets). ``extra`` is kept with
    ``{"source": "spark", "batch_id": ..., "rows": ...}``.
    """
    if (start is None) != (end is None):
        raise ValueError("give both start and end, or neither")
    if start is not None and column is not None:
        raise ValueError("give either start/end or column, not both")
    if start is None and (column is None or resolution is None):
        raise ValueError("give start and end, or column and resolution")
    body: dict[str, Any] = {"source": "spark", "batch_id": int(batch_id)}
    if column is not None:
        if not _HAVE_PYSPARK:
            raise ImportError(_NO_PYSPARK)
        from pyspark.sql import functions as F

        row = batch_df.agg(
            F.min(F.unix_micros(F.col(column))).alias("lo"),
            F.max(F.unix_micros(F.col(column))).alias("hi"),
            F.count(F.lit(1)).alias("rows"),
        ).first()
        if row is None or row["lo"] is None:
            return None
        start, end = snap(int(row["lo"]), int(row["hi"]), resolution)  # type: ignore[arg-type]
        body["rows"] = int(row["rows"])
    if id is None:
        qid = query_id or _running_query_id(batch_df)
        if not qid:
            raise ValueError("id: no streaming query id found; pass id= or query_id=")
        id = f"{qid}:{int(batch_id)}"
    if extra:
        body = {**extra, **body}
    return client.record(asset, start, end, id=id, extra=body)  # type: ignore[arg-type]


def _running_query_id(batch_df: Any) -> str | None:
    try:
        qid: str | None = batch_df.sparkSession.sparkContext.getLocalProperty(
            "sql.streaming.queryId"
        )
        return qid
    except Exception:  # noqa: BLE001 (no query id is an answer: the caller asks for id=)
        return None
