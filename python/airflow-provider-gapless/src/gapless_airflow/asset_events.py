"""Coverage from Airflow asset events, in the task, with no gapless server.

An asset event says which interval it covers in one of the forms of SPEC
§2 that an Airflow asset event can carry, tried in this order:

1. ``extra.interval_start`` / ``extra.interval_end`` (both, instants);
2. ``partition_key`` as an ISO 8601 interval (``2025-06-14T10:00:00Z/PT5M``,
   ``start/end``, ``duration/end``);
3. ``partition_key`` as a discrete key (``2025-06-14T10:00:00``): the
   interval ``[key, key + key_span)``, only when a ``key_span`` is given.

An event with none of them (no interval extras, no partition key) says
nothing about time and is left out. ``extra.interval_kind = "retracted"``
makes an event withdraw its interval (as a ``retracted`` gapless event);
``"landed"`` (the default) records it. Naive instants and keys are read in
``tz`` (UTC by default), and calendar spans (``P1D``, ``P1M``) follow its
calendar.

Coverage is decided per instant by the latest event containing it (the
last in the order given: ``inlet_events[asset]`` and the REST API's
``GET /api/v2/assets/events`` list the oldest first), half-open intervals,
exactly as the ledger decides it.

>>> events = [
...     {"id": 1, "extra": {"interval_start": "2025-06-14T00:00:00Z",
...                         "interval_end": "2025-06-14T12:00:00Z"}},
...     {"id": 2, "partition_key": "2025-06-14T12:00:00Z/PT6H"},
...     {"id": 3, "partition_key": "2025-06-14T18:00:00"},
... ]
>>> c = coverage_from_asset_events(events, "2025-06-14", "2025-06-15", key_span="PT3H")
>>> c.covered, c.covered_ratio, [(g.start.hour, g.end.hour) for g in c.missing]
(False, 0.875, [(21, 0)])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import gapless

from . import _time as t

#: The interval extras (SPEC §2's ``extra`` convention) and the kind.
INTERVAL_START = "interval_start"
INTERVAL_END = "interval_end"
INTERVAL_KIND = "interval_kind"
_KINDS = ("landed", "retracted")


@dataclass(frozen=True)
class EventInterval:
    """The interval one asset event covers, and where it was read from:
    ``source`` is ``"extra"``, ``"interval_key"`` or ``"discrete_key"``."""

    start: datetime
    end: datetime
    kind: str
    source: str
    event_id: Any = None


def field(event: Any, name: str) -> Any:
    """A field of an asset event given as a mapping (the REST API's JSON)
    or an object (``inlet_events``' ``AssetEventResult``)."""
    if isinstance(event, Mapping):
        return event.get(name)
    return getattr(event, name, None)


def describe(event: Any, position: int | None = None) -> str:
    """How an error names an event: by its id, else by its position."""
    ident = field(event, "id")
    if ident is not None:
        return f"asset event {ident}"
    return f"asset event #{position}" if position is not None else "asset event"


def interval_of(
    event: Any,
    *,
    key_span: t.DurationLike | t.Duration | None = None,
    tz: t.TzLike | None = None,
    position: int | None = None,
) -> EventInterval | None:
    """The interval an asset event covers (see the module's text), or None
    when it carries none. A ``ValueError`` names the event and why its
    interval cannot be read: one of ``interval_start``/``interval_end``
    without the other, a bad instant or key, an empty or reversed interval,
    a discrete key without ``key_span``.

    >>> iv = interval_of({"id": 7, "partition_key": "2025-06-14T10:00:00"}, key_span="5m")
    >>> iv.source, t.text(iv.start), t.text(iv.end)
    ('discrete_key', '2025-06-14T10:00:00Z', '2025-06-14T10:05:00Z')
    """
    name = describe(event, position)
    extra = field(event, "extra") or {}
    if not isinstance(extra, Mapping):
        # A ValueError, as every unreadable event is: the sync skips those.
        raise ValueError(f"{name}: extra is {type(extra).__name__}, not an object")  # noqa: TRY004
    kind = extra.get(INTERVAL_KIND)
    if kind is None:
        kind = "landed"
    elif kind not in _KINDS:
        raise ValueError(
            f"{name}: extra.{INTERVAL_KIND} {kind!r} is neither 'landed' nor 'retracted'"
        )
    ident = field(event, "id")
    s_raw, e_raw = extra.get(INTERVAL_START), extra.get(INTERVAL_END)
    if s_raw is not None or e_raw is not None:
        if s_raw is None or e_raw is None:
            missing = INTERVAL_START if s_raw is None else INTERVAL_END
            raise ValueError(
                f"{name}: extra has {INTERVAL_END if s_raw is None else INTERVAL_START} without {missing}"
            )
        try:
            s = t.instant(s_raw, f"extra.{INTERVAL_START}", tz)
            e = t.instant(e_raw, f"extra.{INTERVAL_END}", tz)
        except (ValueError, TypeError) as err:
            raise ValueError(f"{name}: {err}") from None
        if s >= e:
            what = "empty" if s == e else "reversed"
            raise ValueError(f"{name}: extra's interval is {what}: [{t.text(s)}, {t.text(e)})")
        return EventInterval(s, e, kind, "extra", ident)
    key = field(event, "partition_key")
    if key is None or key == "":
        return None
    if not isinstance(key, str):
        raise ValueError(f"{name}: partition_key is {type(key).__name__}, not text")  # noqa: TRY004
    if t.looks_like_interval(key):
        try:
            s, e = t.interval(key, "partition_key", tz)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        return EventInterval(s, e, kind, "interval_key", ident)
    if key_span is None:
        raise ValueError(
            f"{name}: partition_key {key!r} is a single instant; give key_span= "
            "(e.g. 'PT1H') to read discrete keys as [key, key + span)"
        )
    try:
        s = t.instant(key, "partition_key", tz)
        span = key_span if isinstance(key_span, t.Duration) else t.duration(key_span, "key_span")
        e = span.add_to(s, tz)
    except (ValueError, TypeError, OverflowError) as err:
        raise ValueError(f"{name}: {err}") from None
    if s >= e:
        raise ValueError(
            f"{name}: partition_key {key!r} + {t.iso_duration(span)} is not after the key"
        )
    return EventInterval(s, e, kind, "discrete_key", ident)


def intervals_of(
    events: Iterable[Any],
    *,
    key_span: t.DurationLike | None = None,
    tz: t.TzLike | None = None,
) -> list[EventInterval]:
    """The intervals of the events that carry one, in the order given."""
    span = t.duration(key_span, "key_span") if key_span is not None else None
    out = []
    for n, event in enumerate(events, 1):
        iv = interval_of(event, key_span=span, tz=tz, position=n)
        if iv is not None:
            out.append(iv)
    return out


def coverage_from_asset_events(
    events: Iterable[Any],
    start: t.InstantLike,
    end: t.InstantLike,
    *,
    key_span: t.DurationLike | None = None,
    tz: t.TzLike | None = None,
) -> gapless.Coverage:
    """The coverage of ``[start, end)`` by asset events: ``inlet_events[asset]``
    in a task, or the ``asset_events`` of ``GET /api/v2/assets/events``
    (mappings), oldest first. Answers :class:`gapless.Coverage` (``covered``,
    ``covered_ratio``, ``missing``, ``missing_count``), computed by
    :func:`gapless.coverage`: latest wins, half-open.

    ``start``/``end`` are datetimes or text; naive ones, like naive keys,
    are read in ``tz``. ``key_span`` reads discrete partition keys.

    >>> from airflow.sdk import Asset, task  # doctest: +SKIP
    >>> @task(inlets=[Asset("s3://lake/orders")])  # doctest: +SKIP
    ... def report(inlet_events=None, data_interval_start=None, data_interval_end=None):
    ...     c = coverage_from_asset_events(inlet_events[Asset("s3://lake/orders")],
    ...                                    data_interval_start, data_interval_end)
    ...     if not c.covered:
    ...         raise ValueError(f"orders has {c.missing_count} gaps, the first {c.missing[0]}")
    """
    s = t.instant(start, "start", tz)
    e = t.instant(end, "end", tz)
    if s >= e:
        raise ValueError(f"start {t.text(s)} is not before end {t.text(e)}")
    ivs = intervals_of(events, key_span=key_span, tz=tz)
    return gapless.coverage([(iv.start, iv.end, iv.kind) for iv in ivs], s, e)
