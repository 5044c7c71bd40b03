"""The answers, as frozen dataclasses with the SPEC's field names (§3, §4, §7).

Instants are aware UTC :class:`datetime.datetime` values; every answer
keeps the JSON it was read from as ``raw`` (not compared, not printed).
The one renamed field is a rule's ``from``, a Python keyword: ``from_``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ._time import parse_instant


def _t(value: Any) -> datetime:
    return parse_instant(value)


def _opt_t(value: Any) -> datetime | None:
    return None if value is None else parse_instant(value)


def _raw() -> Any:
    return field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Interval:
    """A half-open interval ``[start, end)``."""

    start: datetime
    end: datetime

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Interval:
        return cls(_t(d["start"]), _t(d["end"]))

    @property
    def duration(self) -> timedelta:
        """``end - start``."""
        return self.end - self.start


def _intervals(items: list[dict[str, Any]]) -> list[Interval]:
    return [Interval.from_json(i) for i in items]


@dataclass(frozen=True)
class Recorded:
    """The answer to recording events: how many were stored (`accepted`),
    and how many were duplicates of events already stored (same id, same
    content), counted apart and not stored again."""

    accepted: int
    duplicates: int
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Recorded:
        return cls(d["accepted"], d["duplicates"], raw=d)


@dataclass(frozen=True)
class Coverage:
    """The coverage of ``[start, end)``: ``covered`` when nothing is
    missing, the covered share, and the gaps in time order (at most the
    first 10,000 from a server; ``missing_count`` counts them all).

    :func:`gapless.coverage` answers this; :class:`Check` and
    :class:`MultiCheck` add to it."""

    start: datetime
    end: datetime
    covered: bool
    covered_ratio: float
    missing: list[Interval]
    missing_count: int


@dataclass(frozen=True)
class Check(Coverage):
    """The check answer (``gapless check --json``, ``GET
    /v1/assets/{asset}/coverage``, the wait route): coverage, the policy
    (canonical text) and whether the range is ``complete`` under it."""

    asset: str = ""
    policy: str = "full"
    complete: bool = False
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Check:
        return cls(
            start=_t(d["start"]),
            end=_t(d["end"]),
            covered=d["covered"],
            covered_ratio=d["covered_ratio"],
            missing=_intervals(d["missing"]),
            missing_count=d["missing_count"],
            asset=d["asset"],
            policy=d["policy"],
            complete=d["complete"],
            raw=d,
        )


@dataclass(frozen=True)
class MultiCheck(Coverage):
    """The joint coverage of several assets (``POST /v1/coverage``): an
    instant counts only where every asset covers it."""

    assets: list[str] = field(default_factory=list)
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> MultiCheck:
        return cls(
            start=_t(d["start"]),
            end=_t(d["end"]),
            covered=d["covered"],
            covered_ratio=d["covered_ratio"],
            missing=_intervals(d["missing"]),
            missing_count=d["missing_count"],
            assets=list(d["assets"]),
            raw=d,
        )


@dataclass(frozen=True)
class Window:
    """One grid window: its partition key, bounds, coverage and whether it
    is complete under the policy."""

    key: str
    start: datetime
    end: datetime
    covered_ratio: float
    complete: bool
    missing: list[Interval]
    missing_count: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Window:
        return cls(
            d["key"],
            _t(d["start"]),
            _t(d["end"]),
            d["covered_ratio"],
            d["complete"],
            _intervals(d["missing"]),
            d["missing_count"],
        )


@dataclass(frozen=True)
class Windows:
    """The windows answer: the grid windows overlapping the range, in time
    order, each reported whole."""

    asset: str
    every: str
    tz: str
    policy: str
    windows: list[Window]
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Windows:
        return cls(
            d["asset"],
            d["every"],
            d["tz"],
            d["policy"],
            [Window.from_json(w) for w in d["windows"]],
            raw=d,
        )


@dataclass(frozen=True)
class RuleWindows:
    """A rule's windows overlapping the range, each judged now on the joint
    coverage of its assets under its policy (``gapless rule windows``)."""

    rule: str
    assets: list[str]
    every: str
    tz: str
    policy: str
    windows: list[Window]
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RuleWindows:
        return cls(
            d["rule"],
            list(d["assets"]),
            d["every"],
            d["tz"],
            d["policy"],
            [Window.from_json(w) for w in d["windows"]],
            raw=d,
        )


@dataclass(frozen=True)
class Bucket:
    """One equal part of a range: its covered, missing (no event) and
    retracted (latest event a retraction) microseconds, which add up to its
    length."""

    start: datetime
    end: datetime
    covered_us: int
    missing_us: int
    retracted_us: int

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Bucket:
        return cls(
            _t(d["start"]), _t(d["end"]), d["covered_us"], d["missing_us"], d["retracted_us"]
        )


@dataclass(frozen=True)
class Buckets:
    """The buckets answer: the range in equal parts, and the sums over it."""

    asset: str
    start: datetime
    end: datetime
    covered_us: int
    missing_us: int
    retracted_us: int
    buckets: list[Bucket]
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Buckets:
        return cls(
            d["asset"],
            _t(d["start"]),
            _t(d["end"]),
            d["covered_us"],
            d["missing_us"],
            d["retracted_us"],
            [Bucket.from_json(b) for b in d["buckets"]],
            raw=d,
        )


@dataclass(frozen=True)
class EventRef:
    """Which event provides a segment: its id (None without one) and sequence."""

    id: str | None
    seq: int


@dataclass(frozen=True)
class Segment:
    """A part of the time line on which one event is the latest; ``event``
    is None before the asset's ``pruned_before`` (its detail was pruned)."""

    start: datetime
    end: datetime
    kind: str
    event: EventRef | None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Segment:
        e = d["event"]
        return cls(
            _t(d["start"]),
            _t(d["end"]),
            d["kind"],
            None if e is None else EventRef(e["id"], e["seq"]),
        )


@dataclass(frozen=True)
class SegmentsPage:
    """One page of segments, clipped to the range and the page; ``next`` is
    the instant the page ended at (pass it as ``after``), None on the last."""

    asset: str
    start: datetime
    end: datetime
    segments: list[Segment]
    next: str | None
    #: The asset's ``pruned_before`` when the page starts before it, else None.
    pruned_before: datetime | None = None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> SegmentsPage:
        return cls(
            d["asset"],
            _t(d["start"]),
            _t(d["end"]),
            [Segment.from_json(s) for s in d["segments"]],
            d["next"],
            _opt_t(d.get("pruned_before")),
            raw=d,
        )


@dataclass(frozen=True)
class Event:
    """A recorded event, as ``events`` answers it."""

    id: str | None
    seq: int
    start: datetime
    end: datetime
    kind: str
    extra: dict[str, Any] | None
    produced_at: datetime | None
    received_at: datetime

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Event:
        return cls(
            d["id"],
            d["seq"],
            _t(d["start"]),
            _t(d["end"]),
            d["kind"],
            d["extra"],
            _opt_t(d["produced_at"]),
            _t(d["received_at"]),
        )


@dataclass(frozen=True)
class EventsPage:
    """One page of events in sequence order; ``next`` is an opaque cursor
    for ``after``, None on the last page."""

    asset: str
    events: list[Event]
    next: str | None
    #: The asset's ``pruned_before`` when the range starts before it (events
    #: that ended by then may have been pruned), else None.
    pruned_before: datetime | None = None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EventsPage:
        return cls(
            d["asset"],
            [Event.from_json(e) for e in d["events"]],
            d["next"],
            _opt_t(d.get("pruned_before")),
            raw=d,
        )


@dataclass(frozen=True)
class Frontier:
    """Complete up to when: the end of the covered run from ``origin``
    (``origin`` itself when it is not covered)."""

    asset: str
    origin: datetime
    frontier: datetime
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Frontier:
        return cls(d["asset"], _t(d["origin"]), _t(d["frontier"]), raw=d)


@dataclass(frozen=True)
class Asset:
    """An asset: its stored events, first and last covered instants,
    declaration (``key_span`` as ISO 8601, ``tz`` None when never declared),
    and when its last event was stored (``last_received``, None before the
    first or from an older server). In a listing, also its overview:
    ``frontier`` (the end of its first covered run, None when nothing is
    covered) and ``covered_ratio_day``, ``covered_ratio_week`` (the covered
    share of the day and week before the page's ``as_of``); these three
    are None from ``asset()`` and from an older server. ``pruned_before``: the
    latest instant a prune removed some of its events before, None when none
    was."""

    asset: str
    events: int
    first_covered: datetime | None
    last_covered: datetime | None
    key_span: str | None
    tz: str | None
    last_received: datetime | None = None
    frontier: datetime | None = None
    covered_ratio_day: float | None = None
    covered_ratio_week: float | None = None
    pruned_before: datetime | None = None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Asset:
        return cls(
            d["asset"],
            d["events"],
            _opt_t(d["first_covered"]),
            _opt_t(d["last_covered"]),
            d["key_span"],
            d["tz"],
            _opt_t(d.get("last_received")),
            _opt_t(d.get("frontier")),
            d.get("covered_ratio_day"),
            d.get("covered_ratio_week"),
            _opt_t(d.get("pruned_before")),
            raw=d,
        )


@dataclass(frozen=True)
class Pruned:
    """What a prune removed (``gapless prune``): events, firings, and of how
    many assets it removed events; ``asset`` None when every asset was
    pruned."""

    before: datetime
    asset: str | None
    events_removed: int
    firings_removed: int
    assets_touched: int
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Pruned:
        return cls(
            _t(d["before"]),
            d["asset"],
            d["events_removed"],
            d["firings_removed"],
            d["assets_touched"],
            raw=d,
        )


@dataclass(frozen=True)
class AssetsPage:
    """One page of assets in name order; ``next`` is an opaque cursor for
    ``after``, None on the last page; ``as_of`` the server's clock the
    overviews' day and week end at."""

    assets: list[Asset]
    next: str | None
    as_of: datetime | None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AssetsPage:
        return cls(
            [Asset.from_json(a) for a in d["assets"]],
            d.get("next"),
            _opt_t(d.get("as_of")),
            raw=d,
        )


@dataclass(frozen=True)
class Declaration:
    """An asset's declaration now in force (``asset set``)."""

    asset: str
    key_span: str | None
    tz: str
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Declaration:
        return cls(d["asset"], d["key_span"], d["tz"], raw=d)


@dataclass(frozen=True)
class Rule:
    """A rule (SPEC §7). ``from_`` is the JSON's ``from``."""

    rule: str
    assets: list[str]
    every: str
    tz: str
    policy: str
    from_: datetime
    until: datetime | None
    deadline: str | None
    target: str | None
    key_format: str
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Rule:
        return cls(
            d["rule"],
            list(d["assets"]),
            d["every"],
            d["tz"],
            d["policy"],
            _t(d["from"]),
            _opt_t(d["until"]),
            d["deadline"],
            d["target"],
            d["key_format"],
            raw=d,
        )


@dataclass(frozen=True)
class RulesPage:
    """One page of rules in name order; ``next`` is an opaque cursor for
    ``after``, None on the last page."""

    rules: list[Rule]
    next: str | None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RulesPage:
        return cls([Rule.from_json(r) for r in d["rules"]], d.get("next"), raw=d)


@dataclass(frozen=True)
class RuleSet:
    """The answer to setting a rule: the rule in force, the ``outcome``
    (``"created"``, ``"updated"`` or ``"unchanged"``) and how many firings
    it recorded for windows already complete."""

    rule: Rule
    outcome: str
    firings: int
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RuleSet:
        return cls(Rule.from_json(d), d["outcome"], d["firings"], raw=d)


@dataclass(frozen=True)
class RuleDeleted:
    """The answer to deleting a rule."""

    rule: str
    deleted: bool
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> RuleDeleted:
        return cls(d["rule"], d["deleted"], raw=d)


@dataclass(frozen=True)
class Delivery:
    """Where a firing stands with its target: ``state`` is ``"none"`` (no
    target), ``"pending"``, ``"delivered"`` or ``"failed"``."""

    target: str | None
    state: str
    attempts: int
    last_error: str | None


@dataclass(frozen=True)
class Firing:
    """A firing: a rule's window changed state (``kind`` ``"complete"``,
    ``"incomplete"`` or ``"late"``). ``seq`` numbers firings in commit
    order; keep the last one seen and ask ``after`` it to miss none."""

    seq: int
    rule: str
    kind: str
    window: Interval
    key: str
    generation: int
    covered_ratio: float
    recorded_at: datetime
    delivery: Delivery
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Firing:
        return cls(
            d["seq"],
            d["rule"],
            d["kind"],
            Interval.from_json(d["window"]),
            d["key"],
            d["generation"],
            d["covered_ratio"],
            _t(d["recorded_at"]),
            Delivery(**d["delivery"]),
            raw=d,
        )


@dataclass(frozen=True)
class FiringsPage:
    """One page of firings in ``seq`` order; ``next`` is the last ``seq``
    of a full page, None when the page is not full."""

    firings: list[Firing]
    next: int | None
    raw: Any = _raw()

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> FiringsPage:
        return cls([Firing.from_json(f) for f in d["firings"]], d["next"], raw=d)
