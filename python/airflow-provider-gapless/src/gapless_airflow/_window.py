"""The window a task is about: given ``start``/``end``, else the DAG run's
partition window, else its data interval.

The partition window comes from ``dag_run.partition_key``:

- an ISO 8601 interval key (``2025-06-14T03:00:00Z/PT1H``) is the window;
- a discrete key (``2025-06-14T03:00:00``, the key a gapless rule's
  firing or Airflow's temporal mappers give) is the start of a window:
  of grid ``every`` (``1h``, ``1d``…, the boundaries a cron schedule has in
  ``tz``) or ``[key, key + key_span)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import _time as t


def resolve(
    context: Mapping[str, Any],
    start: t.InstantLike | None,
    end: t.InstantLike | None,
    *,
    every: str | None = None,
    key_span: t.DurationLike | None = None,
    tz: t.TzLike | None = None,
    what: str = "task",
) -> tuple[datetime, datetime, str]:
    """``(start, end, where)``: the window as aware UTC datetimes and a few
    words saying where it came from (for logs). ``start``/``end`` both or
    neither; an error names what is missing."""
    if (start is None or start == "") != (end is None or end == ""):
        given = "start" if end in (None, "") else "end"
        raise ValueError(
            f"{what}: {given} is given without {'end' if given == 'start' else 'start'}; give both or neither"
        )
    if start not in (None, "") and end not in (None, ""):
        s, e = t.instant(start, "start", tz), t.instant(end, "end", tz)
        _order(s, e, what)
        return s, e, "start/end"
    dag_run = context.get("dag_run")
    key = getattr(dag_run, "partition_key", None) if dag_run is not None else None
    if key:
        s, e = partition_window(key, every=every, key_span=key_span, tz=tz)
        return s, e, f"partition_key {key!r}"
    dis, die = context.get("data_interval_start"), context.get("data_interval_end")
    if dis is not None and die is not None:
        s, e = t.instant(dis, "data_interval_start", tz), t.instant(die, "data_interval_end", tz)
        if s < e:
            return s, e, "the data interval"
    raise ValueError(
        f"{what}: no window to use: give start and end, or run it in a DAG run with a "
        "partition_key or a non-empty data interval"
    )


def partition_window(
    key: str,
    *,
    every: str | None = None,
    key_span: t.DurationLike | None = None,
    tz: t.TzLike | None = None,
) -> tuple[datetime, datetime]:
    """The window of a partition key (see the module's text).

    >>> [t.text(x) for x in partition_window("2025-06-14T03:00:00", every="1h")]
    ['2025-06-14T03:00:00Z', '2025-06-14T04:00:00Z']
    >>> [t.text(x) for x in partition_window("2025-03-30", every="1d", tz="Europe/Berlin")]
    ['2025-03-29T23:00:00Z', '2025-03-30T22:00:00Z']
    """
    if t.looks_like_interval(key):
        return t.interval(key, "partition_key", tz)
    start = t.instant(key, "partition_key", tz)
    if every is not None:
        try:
            return t.window_from(start, every, tz)
        except ValueError as e:
            raise ValueError(f"partition_key {key!r}: {e}") from None
    if key_span is not None:
        span = t.duration(key_span, "key_span")
        return start, span.add_to(start, tz)
    raise ValueError(
        f"partition_key {key!r} is a single instant: give every= (the grid, such as '1h') "
        "or key_span= so its window is known, or give start and end"
    )


def _order(s: datetime, e: datetime, what: str) -> None:
    if s >= e:
        raise ValueError(f"{what}: start {t.text(s)} is not before end {t.text(e)}")
