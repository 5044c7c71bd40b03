"""Every route of the HTTP API (SPEC §4, §7) described once, for both clients.

A route is a function returning a :class:`Call`: method, path, query,
body, how to read the answer, and whether sending it again after an
unknown outcome is safe. The questions that take more than one request
(long polls longer than a server holds one, every page of a paginated
answer) are *plans*: generators that yield a :class:`Call`, are sent its
answer, and yield :class:`Item` values for the caller. :class:`gapless.Client`
and :class:`gapless.AsyncClient` only send calls and drive plans; neither
knows a route.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from . import _models as m
from ._time import (
    DurationLike,
    InstantLike,
    TzLike,
    duration_text,
    instant_text,
    seconds,
    to_datetime,
    tz_text,
)

T = TypeVar("T")
R = TypeVar("R")

#: The longest one HTTP request waits (SPEC §7): a longer wait is several requests.
MAX_HTTP_WAIT = 20.0
#: How long ``wait`` waits when not told (as ``gapless wait``).
DEFAULT_WAIT_TIMEOUT = 3600.0
#: Read time allowed beyond a long poll's wait before the request is given up.
LONG_POLL_MARGIN = 15.0


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    params: dict[str, str] | None = None
    json: Any = None
    #: Safe to send again when its outcome is unknown (the connection broke
    #: or timed out after it was sent). Every call is sent again after a 503
    #: or a refused connection, which store nothing.
    idempotent: bool = True
    #: Seconds the server may hold the request before answering (long polls).
    waits: float = 0.0


@dataclass(frozen=True)
class Item(Generic[T]):
    """A value a plan hands to the caller."""

    value: T


#: A plan that hands items to the caller (an iterator's).
Plan = Generator[Call[Any] | Item[T], Any, None]
#: A plan that returns one answer (several requests for one question).
Steps = Generator[Call[Any], Any, R]


def _query(**params: Any) -> dict[str, str]:
    """The query parameters that are given, as text."""
    out: dict[str, str] = {}
    for k, v in params.items():
        if v is None or v is False:
            continue
        out[k] = "true" if v is True else str(v)
    return out


def _asset_path(asset: str, question: str = "") -> str:
    if not isinstance(asset, str):
        raise TypeError(f"asset: expected a str, got {type(asset).__name__}")
    return f"/v1/assets/{quote(asset, safe='')}{question}"


def _rule_path(name: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name: expected a str, got {type(name).__name__}")
    return f"/v1/rules/{quote(name, safe='')}"


def _ratio_number(min_ratio: float | None) -> float | None:
    """A rule body's `min_ratio`: a JSON number."""
    if min_ratio is None:
        return None
    if isinstance(min_ratio, bool) or not isinstance(min_ratio, (int, float)):
        raise TypeError(f"min_ratio: expected a number, got {type(min_ratio).__name__}")
    return float(min_ratio)


def _ratio(min_ratio: float | None) -> str | None:
    if min_ratio is None:
        return None
    if isinstance(min_ratio, bool) or not isinstance(min_ratio, (int, float, str)):
        raise TypeError(f"min_ratio: expected a number, got {type(min_ratio).__name__}")
    return str(min_ratio)


def _gap(max_gap: DurationLike | None) -> str | None:
    return None if max_gap is None else duration_text(max_gap, "max_gap")


def _policy_query(
    policy: str | None, min_ratio: float | None, max_gap: DurationLike | None
) -> dict[str, Any]:
    return {"policy": policy, "min_ratio": _ratio(min_ratio), "max_gap": _gap(max_gap)}


def _instant(value: InstantLike | None, name: str, tz: TzLike | None) -> str | None:
    return None if value is None else instant_text(value, name, tz)


# -- recording ----------------------------------------------------------------

_EVENT_INSTANTS = ("start", "end", "produced_at")
_EXTRA_INSTANTS = ("interval_start", "interval_end")


def event_json(event: Mapping[str, Any], name: str | None, tz: TzLike | None) -> dict[str, Any]:
    """One event object (any form of SPEC §2) with its instants as text:
    datetimes in ``start``, ``end``, ``produced_at`` and in ``extra``'s
    ``interval_start``/``interval_end`` become RFC 3339; with ``tz``, naive
    ones (datetimes, and text without an offset) are read in that zone."""
    if not isinstance(event, Mapping):
        raise TypeError(f"{name}: expected a mapping (an event object), got {type(event).__name__}")
    where = f"{name}: " if name else ""
    out = dict(event)
    for key in _EVENT_INSTANTS:
        if out.get(key) is not None:
            out[key] = _event_instant(out[key], f"{where}{key}", tz)
    extra = out.get("extra")
    if isinstance(extra, Mapping) and any(k in extra for k in _EXTRA_INSTANTS):
        extra = dict(extra)
        for key in _EXTRA_INSTANTS:
            if extra.get(key) is not None:
                extra[key] = _event_instant(extra[key], f"{where}extra.{key}", tz)
        out["extra"] = extra
    return out


def _event_instant(value: Any, name: str, tz: TzLike | None) -> Any:
    if isinstance(value, str) and tz is not None:
        # An event has no tz field and the server reads naive text as UTC,
        # so text is resolved here, read as the server reads it in tz. Text
        # that reading refuses is refused here too: sent as written, any
        # form the server read and this side did not would be stored as UTC.
        return instant_text(to_datetime(value, name, tz), name)
    if isinstance(value, str):
        return value
    return instant_text(value, name, tz)


def record(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    id: str | None = None,
    retract: bool = False,
    extra: Mapping[str, Any] | None = None,
    produced_at: InstantLike | None = None,
    tz: TzLike | None = None,
) -> Call[m.Recorded]:
    event: dict[str, Any] = {"asset": asset, "start": start, "end": end}
    if id is not None:
        event["id"] = id
    if retract:
        event["kind"] = "retracted"
    if extra is not None:
        event["extra"] = dict(extra)
    if produced_at is not None:
        event["produced_at"] = produced_at
    body = event_json(event, None, tz)
    return Call("POST", "/v1/events", m.Recorded.from_json, json=body, idempotent=id is not None)


def record_many(
    events: Iterable[Mapping[str, Any]], *, tz: TzLike | None = None
) -> Call[m.Recorded]:
    if isinstance(events, Mapping):
        raise TypeError("events: expected a list of event objects, got one mapping (use record())")
    body = [event_json(e, f"event {i}", tz) for i, e in enumerate(events, 1)]
    with_ids = all(isinstance(e.get("id"), str) and e["id"] for e in body)
    return Call("POST", "/v1/events", m.Recorded.from_json, json=body, idempotent=with_ids)


# -- questions ----------------------------------------------------------------


def check(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    policy: str | None = None,
    min_ratio: float | None = None,
    max_gap: DurationLike | None = None,
    tz: TzLike | None = None,
) -> Call[m.Check]:
    params = _query(
        start=instant_text(start, "start", tz),
        end=instant_text(end, "end", tz),
        **_policy_query(policy, min_ratio, max_gap),
        tz=tz_text(tz),
    )
    return Call("GET", _asset_path(asset, "/coverage"), m.Check.from_json, params=params)


def check_all(
    assets: Iterable[str], start: InstantLike, end: InstantLike, *, tz: TzLike | None = None
) -> Call[m.MultiCheck]:
    if isinstance(assets, str):
        raise TypeError("assets: expected a list of asset names, got one str")
    body: dict[str, Any] = {
        "assets": list(assets),
        "start": instant_text(start, "start", tz),
        "end": instant_text(end, "end", tz),
    }
    if tz is not None:
        body["tz"] = tz_text(tz)
    return Call("POST", "/v1/coverage", m.MultiCheck.from_json, json=body)


def windows(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    every: str,
    *,
    tz: TzLike | None = None,
    policy: str | None = None,
    min_ratio: float | None = None,
    max_gap: DurationLike | None = None,
    incomplete: bool = False,
    key_format: str | None = None,
) -> Call[m.Windows]:
    params = _query(
        start=instant_text(start, "start", tz),
        end=instant_text(end, "end", tz),
        every=every,
        tz=tz_text(tz),
        **_policy_query(policy, min_ratio, max_gap),
        incomplete=bool(incomplete),
        key_format=key_format,
    )
    return Call("GET", _asset_path(asset, "/windows"), m.Windows.from_json, params=params)


def buckets(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    buckets: int | None = None,
    tz: TzLike | None = None,
) -> Call[m.Buckets]:
    params = _query(
        start=instant_text(start, "start", tz),
        end=instant_text(end, "end", tz),
        buckets=buckets,
        tz=tz_text(tz),
    )
    return Call("GET", _asset_path(asset, "/buckets"), m.Buckets.from_json, params=params)


def segments_page(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    limit: int | None = None,
    after: InstantLike | None = None,
    tz: TzLike | None = None,
) -> Call[m.SegmentsPage]:
    params = _query(
        start=instant_text(start, "start", tz),
        end=instant_text(end, "end", tz),
        limit=limit,
        after=_instant(after, "after", tz),
        tz=tz_text(tz),
    )
    return Call("GET", _asset_path(asset, "/segments"), m.SegmentsPage.from_json, params=params)


def events_page(
    asset: str,
    start: InstantLike | None = None,
    end: InstantLike | None = None,
    *,
    kind: str | None = None,
    limit: int | None = None,
    after: str | None = None,
    tz: TzLike | None = None,
) -> Call[m.EventsPage]:
    params = _query(
        start=_instant(start, "start", tz),
        end=_instant(end, "end", tz),
        kind=kind,
        limit=limit,
        after=after,
        tz=tz_text(tz),
    )
    return Call("GET", _asset_path(asset, "/events"), m.EventsPage.from_json, params=params)


def frontier(
    asset: str, origin: InstantLike | None = None, *, tz: TzLike | None = None
) -> Call[m.Frontier]:
    params = _query(origin=_instant(origin, "origin", tz), tz=tz_text(tz))
    return Call("GET", _asset_path(asset, "/frontier"), m.Frontier.from_json, params=params)


def assets_page(
    *,
    prefix: str | None = None,
    contains: str | None = None,
    limit: int | None = None,
    after: str | None = None,
) -> Call[m.AssetsPage]:
    params = _query(prefix=prefix, contains=contains, limit=limit, after=after)
    return Call("GET", "/v1/assets", m.AssetsPage.from_json, params=params)


#: The page the iterators of assets and rules ask for: the largest.
LIST_PAGE = 1000


def buckets_many(
    items: Iterable[tuple[str, InstantLike, InstantLike] | Mapping[str, Any]],
    *,
    buckets: int | None = None,
    tz: TzLike | None = None,
) -> Call[list[m.Buckets]]:
    if isinstance(items, (str, Mapping)):
        raise TypeError("items: expected a list of (asset, start, end), got one")
    body_items: list[dict[str, str]] = []
    for n, item in enumerate(items, 1):
        if isinstance(item, Mapping):
            asset, start, end = item["asset"], item["start"], item["end"]
        else:
            asset, start, end = item
        if not isinstance(asset, str):
            raise TypeError(f"item {n}: asset: expected a str, got {type(asset).__name__}")
        body_items.append(
            {
                "asset": asset,
                "start": instant_text(start, f"item {n}: start", tz),
                "end": instant_text(end, f"item {n}: end", tz),
            }
        )
    body: dict[str, Any] = {"assets": body_items}
    if buckets is not None:
        body["buckets"] = buckets
    if tz is not None:
        body["tz"] = tz_text(tz)
    return Call(
        "POST",
        "/v1/buckets",
        lambda d: [m.Buckets.from_json(b) for b in d["buckets"]],
        json=body,
    )


def asset(name: str) -> Call[m.Asset]:
    return Call("GET", _asset_path(name), m.Asset.from_json)


def declare(
    name: str,
    *,
    key_span: DurationLike | None = None,
    tz: TzLike | None = None,
) -> Call[m.Declaration]:
    body: dict[str, Any] = {}
    if key_span is not None:
        body["key_span"] = duration_text(key_span, "key_span")
    if tz is not None:
        body["tz"] = tz_text(tz)
    return Call("PUT", _asset_path(name), m.Declaration.from_json, json=body)


def prune(
    before: InstantLike, *, asset: str | None = None, tz: TzLike | None = None
) -> Call[m.Pruned]:
    body: dict[str, Any] = {"before": instant_text(before, "before", tz)}
    if asset is not None:
        body["asset"] = asset
    if tz is not None:
        body["tz"] = tz_text(tz)
    return Call("POST", "/v1/prune", m.Pruned.from_json, json=body)


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/healthz", lambda d: d)


# -- rules and firings --------------------------------------------------------


def set_rule(
    name: str,
    *,
    assets: Iterable[str],
    every: str,
    from_: InstantLike,
    until: InstantLike | None = None,
    tz: TzLike | None = None,
    policy: str | None = None,
    min_ratio: float | None = None,
    max_gap: DurationLike | None = None,
    deadline: DurationLike | None = None,
    target: str | None = None,
    key_format: str | None = None,
) -> Call[m.RuleSet]:
    if isinstance(assets, str):
        raise TypeError("assets: expected a list of asset names, got one str")
    if min_ratio is not None and (policy is not None or max_gap is not None):
        raise ValueError("give at most one of policy, min_ratio and max_gap")
    body: dict[str, Any] = {
        "assets": list(assets),
        "every": every,
        "from": instant_text(from_, "from_", tz),
    }
    optional = {
        "until": _instant(until, "until", tz),
        "tz": tz_text(tz),
        "policy": policy,
        "min_ratio": _ratio_number(min_ratio),
        "max_gap": _gap(max_gap),
        "deadline": None if deadline is None else duration_text(deadline, "deadline"),
        "target": target,
        "key_format": key_format,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    return Call("PUT", _rule_path(name), m.RuleSet.from_json, json=body)


def rule(name: str) -> Call[m.Rule]:
    return Call("GET", _rule_path(name), m.Rule.from_json)


def rule_windows(
    name: str, start: InstantLike, end: InstantLike, *, tz: TzLike | None = None
) -> Call[m.RuleWindows]:
    params = _query(
        start=instant_text(start, "start", tz), end=instant_text(end, "end", tz), tz=tz_text(tz)
    )
    return Call("GET", _rule_path(name) + "/windows", m.RuleWindows.from_json, params=params)


def rules_page(
    *,
    prefix: str | None = None,
    limit: int | None = None,
    after: str | None = None,
) -> Call[m.RulesPage]:
    params = _query(prefix=prefix, limit=limit, after=after)
    return Call("GET", "/v1/rules", m.RulesPage.from_json, params=params)


def delete_rule(name: str) -> Call[m.RuleDeleted]:
    # Sent again after an unknown outcome, a delete that went through would
    # answer 404: only refused connections and 503s are tried again.
    return Call("DELETE", _rule_path(name), m.RuleDeleted.from_json, idempotent=False)


def _firings_call(
    rule: str | None, after: int | None, limit: int | None, wait: float, newest: bool = False
) -> Call[m.FiringsPage]:
    params = _query(
        rule=rule,
        after=after,
        limit=limit,
        newest=bool(newest),
        wait=_wait_text(wait) if wait > 0 else None,
    )
    return Call("GET", "/v1/firings", m.FiringsPage.from_json, params=params, waits=wait)


def _wait_text(left: float) -> str:
    """A wait as a server reads it: whole milliseconds, at most MAX_HTTP_WAIT."""
    return f"PT{min(max(left, 0.001), MAX_HTTP_WAIT):.3f}S"


# -- plans --------------------------------------------------------------------


def firings_page(
    *,
    rule: str | None = None,
    after: int | None = None,
    limit: int | None = None,
    wait: DurationLike | None = None,
    newest: bool = False,
) -> Steps[m.FiringsPage]:
    """One page of firings (``newest``: the newest ``limit`` after ``after``
    rather than the oldest); with ``wait``, as soon as one after ``after``
    exists or once ``wait`` passed (an empty page): as many requests as the
    server's 20 s per request makes it."""
    total = 0.0 if wait is None else seconds(wait, "wait")
    give_up = time.monotonic() + total
    while True:
        left = max(0.0, give_up - time.monotonic())
        page: m.FiringsPage = yield _firings_call(
            rule, after, limit, min(left, MAX_HTTP_WAIT), newest
        )
        if page.firings or left <= MAX_HTTP_WAIT:
            return page


def firings(
    *,
    rule: str | None = None,
    after: int | None = None,
    limit: int | None = None,
    wait: DurationLike | None = None,
) -> Plan[m.Firing]:
    """Every firing after ``after``, page by page; with ``wait``, then the
    ones that come, until ``wait`` passes with none."""
    total = None if wait is None else seconds(wait, "wait")
    cursor = after
    while True:
        page = yield from firings_page(rule=rule, after=cursor, limit=limit)
        for f in page.firings:
            cursor = f.seq
            yield Item(f)
        if page.next is not None:
            continue
        if not total:
            return
        page = yield from firings_page(rule=rule, after=cursor, limit=limit, wait=total)
        if not page.firings:
            return
        for f in page.firings:
            cursor = f.seq
            yield Item(f)


def wait(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    policy: str | None = None,
    min_ratio: float | None = None,
    max_gap: DurationLike | None = None,
    tz: TzLike | None = None,
    timeout: DurationLike | None = None,
) -> Steps[m.Check]:
    """The check once the range is complete under the policy, or once
    ``timeout`` passed (``complete`` False): long polls of at most 20 s."""
    total = DEFAULT_WAIT_TIMEOUT if timeout is None else seconds(timeout, "timeout")
    params = _query(
        start=instant_text(start, "start", tz),
        end=instant_text(end, "end", tz),
        **_policy_query(policy, min_ratio, max_gap),
        tz=tz_text(tz),
    )
    path = _asset_path(asset, "/wait")
    give_up = time.monotonic() + total
    while True:
        left = max(0.0, give_up - time.monotonic())
        step = min(left, MAX_HTTP_WAIT)
        answer: m.Check = yield Call(
            "GET",
            path,
            m.Check.from_json,
            params={**params, "timeout": _wait_text(step) if step > 0 else "PT0S"},
            waits=step,
        )
        if answer.complete or left <= MAX_HTTP_WAIT:
            return answer


def events(
    asset: str,
    start: InstantLike | None = None,
    end: InstantLike | None = None,
    *,
    kind: str | None = None,
    limit: int | None = None,
    tz: TzLike | None = None,
) -> Plan[m.Event]:
    """Every event of every page, in sequence order."""
    after: str | None = None
    while True:
        page = yield events_page(asset, start, end, kind=kind, limit=limit, after=after, tz=tz)
        for e in page.events:
            yield Item(e)
        if page.next is None:
            return
        after = page.next


def assets(
    *, prefix: str | None = None, contains: str | None = None, limit: int | None = None
) -> Plan[m.Asset]:
    """Every asset of every page, in name order."""
    after: str | None = None
    while True:
        page = yield assets_page(
            prefix=prefix, contains=contains, limit=limit or LIST_PAGE, after=after
        )
        for a in page.assets:
            yield Item(a)
        if page.next is None:
            return
        after = page.next


def rules(*, prefix: str | None = None, limit: int | None = None) -> Plan[m.Rule]:
    """Every rule of every page, in name order."""
    after: str | None = None
    while True:
        page = yield rules_page(prefix=prefix, limit=limit or LIST_PAGE, after=after)
        for r in page.rules:
            yield Item(r)
        if page.next is None:
            return
        after = page.next


def segments(
    asset: str,
    start: InstantLike,
    end: InstantLike,
    *,
    limit: int | None = None,
    tz: TzLike | None = None,
) -> Plan[m.Segment]:
    """Every segment of every page, a segment split at a page's end joined
    again (as the command line prints them)."""
    after: str | None = None
    held: m.Segment | None = None
    while True:
        page = yield segments_page(asset, start, end, limit=limit, after=after, tz=tz)
        for s in page.segments:
            if (
                held is not None
                and held.end == s.start
                and (held.kind, held.event)
                == (
                    s.kind,
                    s.event,
                )
            ):
                held = replace(held, end=s.end)
                continue
            if held is not None:
                yield Item(held)
            held = s
        if page.next is None:
            if held is not None:
                yield Item(held)
            return
        after = page.next
