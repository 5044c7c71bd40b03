"""Record in gapless the interval a task wrote: :func:`record` in a task's
code, :class:`GaplessRecordOperator` as a task of its own."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from airflow.sdk import BaseOperator

from .. import _time as t
from .. import _window
from ..hooks.gapless import GaplessHook


def run_id_of(context: Mapping[str, Any]) -> str:
    """The event id a task's record gets: ``airflow:<dag_id>/<run_id>/<task_id>``
    (and ``[<map_index>]`` for a mapped task). A retry of the task has the
    same id, so its record is a duplicate (SPEC §2), never a second event."""
    ti = context.get("ti") or context.get("task_instance")
    dag_run = context.get("dag_run")
    dag_id = getattr(ti, "dag_id", None) or getattr(dag_run, "dag_id", None)
    run_id = (
        getattr(ti, "run_id", None) or getattr(dag_run, "run_id", None) or context.get("run_id")
    )
    task_id = getattr(ti, "task_id", None)
    if not (dag_id and run_id and task_id):
        raise ValueError("record: no DAG run in the context to derive an id from; give id=")
    ident = f"airflow:{dag_id}/{run_id}/{task_id}"
    map_index = getattr(ti, "map_index", -1)
    if map_index is not None and map_index >= 0:
        ident += f"[{map_index}]"
    return ident


def record(
    asset: str | Sequence[str],
    start: Any = None,
    end: Any = None,
    *,
    context: Mapping[str, Any] | None = None,
    id: str | None = None,
    extra: Mapping[str, Any] | None = None,
    retract: bool = False,
    every: str | None = None,
    key_span: Any = None,
    tz: str | None = None,
    gapless_conn_id: str = GaplessHook.default_conn_name,
) -> dict[str, Any]:
    """Record that the running task wrote ``[start, end)`` of ``asset`` (or
    of each of several assets, in one atomic batch). ``start``/``end``
    default to the DAG run's partition window (``every`` or ``key_span``
    reads a discrete key) or data interval; ``id`` to the task's own
    (:func:`run_id_of`), so a retry records a duplicate. ``extra`` is kept
    with the event. Answers
    ``{"accepted", "duplicates"}``.

    >>> from airflow.sdk import task  # doctest: +SKIP
    >>> @task
    ... def aggregate_hour():  # doctest: +SKIP
    ...     write_the_hour()
    ...     record("orders_hourly", every="1h")
    """
    if context is None:
        from airflow.sdk import get_current_context

        context = get_current_context()
    s, e, where = _window.resolve(
        context, start, end, every=every, key_span=key_span, tz=tz, what="record"
    )
    ident = id or run_id_of(context)
    names = [asset] if isinstance(asset, str) else list(asset)
    if not names:
        raise ValueError("record: no asset given")
    events = []
    for name in names:
        event: dict[str, Any] = {"asset": name, "id": ident, "start": s, "end": e}
        if retract:
            event["kind"] = "retracted"
        if extra is not None:
            event["extra"] = dict(extra)
        events.append(event)
    with GaplessHook(gapless_conn_id).get_conn() as client:
        recorded = client.record_many(events)
    _log().info(
        "recorded %s [%s, %s) (window from %s) as %r: %d accepted, %d duplicates",
        "+".join(names),
        t.text(s),
        t.text(e),
        where,
        ident,
        recorded.accepted,
        recorded.duplicates,
    )
    return {
        "accepted": recorded.accepted,
        "duplicates": recorded.duplicates,
        "id": ident,
        "start": t.text(s),
        "end": t.text(e),
    }


def _log() -> logging.Logger:
    return logging.getLogger("airflow.task.gapless")


class GaplessRecordOperator(BaseOperator):
    """Record in gapless the interval a DAG run produced, as a task after
    the task that wrote it.

    :param asset: the asset (or a list: one atomic batch).
    :param start: the interval's start (templated); with ``end`` left out,
        the DAG run's partition window (``every`` or ``key_span`` reads a
        discrete key) or its data interval.
    :param end: the interval's end (templated).
    :param id: the event id (templated); by default derived from the DAG
        run and this task (:func:`run_id_of`), so a retry is a duplicate.
    :param extra: a JSON object kept with the event (templated).
    :param retract: record a retraction instead (the interval is no longer valid).

    The XCom is ``{"accepted", "duplicates", "id", "start", "end"}``.

    >>> GaplessRecordOperator(task_id="record_hour", asset="orders_hourly", every="1h")  # doctest: +SKIP
    """

    template_fields: Sequence[str] = (
        "asset",
        "start",
        "end",
        "id",
        "extra",
        "every",
        "key_span",
        "tz",
    )
    ui_color = "#d6f5e3"

    def __init__(
        self,
        *,
        asset: str | Sequence[str],
        start: Any = None,
        end: Any = None,
        id: str | None = None,
        extra: Mapping[str, Any] | None = None,
        retract: bool = False,
        every: str | None = None,
        key_span: Any = None,
        tz: str | None = None,
        gapless_conn_id: str = GaplessHook.default_conn_name,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.asset = asset
        self.start = start
        self.end = end
        self.id = id
        self.extra = extra
        self.retract = retract
        self.every = every
        self.key_span = key_span
        self.tz = tz
        self.gapless_conn_id = gapless_conn_id

    def execute(self, context: Any) -> dict[str, Any]:
        return record(
            self.asset,
            self.start,
            self.end,
            context=context,
            id=self.id or None,
            extra=self.extra,
            retract=self.retract,
            every=self.every,
            key_span=self.key_span,
            tz=self.tz,
            gapless_conn_id=self.gapless_conn_id,
        )
