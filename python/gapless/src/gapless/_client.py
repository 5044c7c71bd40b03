"""The blocking client: every ``/v1`` route of a gapless server."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import httpx

from . import _api
from . import _models as m
from . import _transport as t
from ._api import Call, Item, Plan, R, Steps, T
from ._time import DurationLike, InstantLike, TzLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11


class Client:
    """A client of one gapless server (SPEC §4), over ``httpx``.

    ``url`` is the server's base URL (``GAPLESS_URL`` when not given);
    ``token`` is sent as ``Authorization: Bearer`` (``GAPLESS_TOKEN`` when
    not given). ``timeout`` is the seconds one request may take (long polls
    get their wait on top). A request that fails with a 503 or a refused
    connection is sent again up to ``retries`` times, pausing ``backoff``
    seconds, doubled each time (at most 8 s); one whose answer was lost
    (timeout, reset) only when sending it twice is safe: see
    :meth:`record`.

    Instants are aware :class:`~datetime.datetime` values or the SPEC's
    text forms (``"2025-06-14"``, ``"2025-06-14T10:05:00Z"``); a naive
    datetime is refused unless ``tz=`` says its zone. Answers are frozen
    dataclasses with the SPEC's field names; errors are
    :class:`gapless.GaplessError` subclasses carrying the server's message,
    status and detail.

    >>> import gapless
    >>> from datetime import datetime, timezone
    >>> with gapless.Client("http://127.0.0.1:8080") as client:  # doctest: +SKIP
    ...     client.record("orders", datetime(2025, 6, 14, 10, 5, tzinfo=timezone.utc),
    ...                   datetime(2025, 6, 14, 10, 10, tzinfo=timezone.utc), id="batch-123")
    ...     answer = client.check("orders", "2025-06-14", "2025-06-15")
    ...     answer.covered, answer.missing[:1]
    Recorded(accepted=1, duplicates=0)
    (False, [Interval(start=datetime.datetime(2025, 6, 14, 0, 0, tzinfo=datetime.timezone.utc), ...)])
    """

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = t.DEFAULT_TIMEOUT,
        retries: int = t.DEFAULT_RETRIES,
        backoff: float = t.DEFAULT_BACKOFF,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = t.base_url(url)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.Client(
            base_url=self.url,
            headers=t.headers(token, headers),
            timeout=timeout,
            follow_redirects=False,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"gapless.Client({self.url!r})"

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- sending ---------------------------------------------------------

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                r = self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    timeout=t.timeout_for(call, self.timeout) or httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TransportError as e:
                if attempt < self.retries and t.retry_after(e, call):
                    time.sleep(t.pause(attempt, self.backoff))
                    attempt += 1
                    continue
                raise t.unreachable(self.url, e) from e
            if r.status_code == 503 and attempt < self.retries:
                time.sleep(t.pause(attempt, self.backoff))
                attempt += 1
                continue
            return t.answer(call, r.status_code, r.content)

    def _run(self, plan: Steps[R]) -> R:
        """Drive a plan that yields calls only; its return value."""
        try:
            step = next(plan)
            while True:
                assert isinstance(step, Call)
                step = plan.send(self._send(step))
        except StopIteration as stop:
            return cast(R, stop.value)

    def _iterate(self, plan: Plan[T]) -> Iterator[T]:
        """Drive a plan, yielding its items."""
        sent: Any = None
        while True:
            try:
                step = plan.send(sent)
            except StopIteration:
                return
            if isinstance(step, Item):
                sent = None
                yield step.value
            else:
                sent = self._send(step)

    def _iterate_started(self, plan: Plan[T]) -> Iterator[T]:
        """:meth:`_iterate` with its first request sent at once, so that a
        refused token or an unreachable server raises at the call, as a
        method answering a list did."""
        items = self._iterate(plan)
        first = list(itertools.islice(items, 1))
        return itertools.chain(first, items)

    # -- recording -------------------------------------------------------

    def record(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        id: str | None = None,
        retract: bool = False,
        extra: Mapping[str, Any] | None = None,
        produced_at: InstantLike | None = None,
        tz: TzLike | None = None,
    ) -> m.Recorded:
        """Record that ``[start, end)`` of ``asset`` landed (``retract=True``:
        is no longer valid), as ``gapless emit``.

        ``id`` is the producer's idempotency key, unique per asset: the same
        event sent again is a duplicate (accepted, counted, not stored
        twice), the same id with other content a :class:`gapless.Conflict`.
        Give one: an event with an id is sent again after a timeout or a
        lost connection, since a second copy is harmless; one without is
        sent again only when nothing can have been stored (a 503, a refused
        connection), and a lost answer is raised as
        :class:`gapless.Unavailable` (it may or may not be stored).

        >>> client.record("orders", "2025-06-14T10:05:00Z", "2025-06-14T10:10:00Z",
        ...               id="batch-123", extra={"rows": 1200})  # doctest: +SKIP
        Recorded(accepted=1, duplicates=0)
        """
        return self._send(
            _api.record(
                asset,
                start,
                end,
                id=id,
                retract=retract,
                extra=extra,
                produced_at=produced_at,
                tz=tz,
            )
        )

    def record_many(
        self, events: Iterable[Mapping[str, Any]], *, tz: TzLike | None = None
    ) -> m.Recorded:
        """Record a batch of events atomically (all stored, or none), as
        ``gapless ingest``. Each event is an object in any form of SPEC §2
        (``start``/``end``, ``extra.interval_start``/``interval_end``,
        ``partition_key``), its instants datetimes or text; ``tz`` is the
        zone of naive ones. An error names the first bad event
        (``e.detail == {"event": 3}``, 1-based). The batch is sent again
        after a lost answer only when every event has an ``id``.

        >>> client.record_many([
        ...     {"asset": "orders", "id": "b1", "start": t0, "end": t1},
        ...     {"asset": "clicks", "id": "k1", "partition_key": "2025-06-14T10:05:00"},
        ... ])  # doctest: +SKIP
        Recorded(accepted=2, duplicates=0)
        """
        return self._send(_api.record_many(events, tz=tz))

    # -- questions -------------------------------------------------------

    def check(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        policy: str | None = None,
        min_ratio: float | None = None,
        max_gap: DurationLike | None = None,
        tz: TzLike | None = None,
    ) -> m.Check:
        """Is ``[start, end)`` of ``asset`` covered, and which gaps are
        missing (``gapless check``)? ``complete`` says whether it is complete
        under the policy: ``policy`` text (``"full"``, ``"ratio>=0.99"``,
        ``"gap<10m"``), or ``min_ratio``, or ``max_gap``; at most one.

        >>> c = client.check("orders", "2025-06-14", "2025-06-15", max_gap="10m")  # doctest: +SKIP
        >>> c.complete, c.covered_ratio, c.missing  # doctest: +SKIP
        (False, 0.98958, [Interval(start=..., end=...)])
        """
        return self._send(
            _api.check(
                asset, start, end, policy=policy, min_ratio=min_ratio, max_gap=max_gap, tz=tz
            )
        )

    def check_all(
        self,
        assets: Iterable[str],
        start: InstantLike,
        end: InstantLike,
        *,
        tz: TzLike | None = None,
    ) -> m.MultiCheck:
        """The joint coverage of several assets (``POST /v1/coverage``): an
        instant counts only where every one of them covers it.

        >>> client.check_all(["orders", "payments"], "2025-06-14", "2025-06-15").covered  # doctest: +SKIP
        True
        """
        return self._send(_api.check_all(assets, start, end, tz=tz))

    def windows(
        self,
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
    ) -> m.Windows:
        """The calendar windows of grid ``every`` (``"1h"``, ``"1d"``,
        ``"1mo"``…) in zone ``tz`` that overlap the range, each with its
        coverage, completeness and partition key (``gapless windows``);
        ``incomplete=True`` keeps only those not complete.

        >>> w = client.windows("orders", "2025-06-01", "2025-07-01", "1h", incomplete=True)  # doctest: +SKIP
        >>> [x.key for x in w.windows]  # a backfill plan  # doctest: +SKIP
        ['2025-06-14T03:00:00']
        """
        return self._send(
            _api.windows(
                asset,
                start,
                end,
                every,
                tz=tz,
                policy=policy,
                min_ratio=min_ratio,
                max_gap=max_gap,
                incomplete=incomplete,
                key_format=key_format,
            )
        )

    def segments(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        limit: int | None = None,
        tz: TzLike | None = None,
    ) -> Iterator[m.Segment]:
        """Every effective segment of the range and the event providing it,
        across every page (``limit`` segments a request), a segment split at
        a page's end joined again.

        >>> for s in client.segments("orders", "2025-06-14T10:00Z", "2025-06-14T11:00Z"):  # doctest: +SKIP
        ...     print(s.start, s.end, s.kind, s.event.id)
        """
        return self._iterate(_api.segments(asset, start, end, limit=limit, tz=tz))

    def buckets(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        buckets: int | None = None,
        tz: TzLike | None = None,
    ) -> m.Buckets:
        """The range cut into ``buckets`` equal parts (1 to 10,000, default
        100), each with its covered, missing and retracted microseconds
        (``gapless buckets``): a picture of a long range, read from the
        coverage runs, never the events.

        >>> b = client.buckets("orders", "2025-06-14", "2025-06-15", buckets=24)  # doctest: +SKIP
        >>> [round(x.covered_us / 3.6e9, 3) for x in b.buckets][3]  # hour 03:00  # doctest: +SKIP
        0.833
        """
        return self._send(_api.buckets(asset, start, end, buckets=buckets, tz=tz))

    def segments_page(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        limit: int | None = None,
        after: InstantLike | None = None,
        tz: TzLike | None = None,
    ) -> m.SegmentsPage:
        """One page of segments; pass its ``next`` as ``after`` for the next."""
        return self._send(_api.segments_page(asset, start, end, limit=limit, after=after, tz=tz))

    def events(
        self,
        asset: str,
        start: InstantLike | None = None,
        end: InstantLike | None = None,
        *,
        kind: str | None = None,
        limit: int | None = None,
        tz: TzLike | None = None,
    ) -> Iterator[m.Event]:
        """Every event of ``asset`` whose interval overlaps the range (all of
        them without one), in sequence order, across every page (``limit``
        events a request); ``kind`` is ``"landed"`` or ``"retracted"``.

        >>> [e.id for e in client.events("orders", kind="retracted")]  # doctest: +SKIP
        ['bad-slice']
        """
        return self._iterate(_api.events(asset, start, end, kind=kind, limit=limit, tz=tz))

    def events_page(
        self,
        asset: str,
        start: InstantLike | None = None,
        end: InstantLike | None = None,
        *,
        kind: str | None = None,
        limit: int | None = None,
        after: str | None = None,
        tz: TzLike | None = None,
    ) -> m.EventsPage:
        """One page of events; pass its ``next`` as ``after`` for the next."""
        return self._send(
            _api.events_page(asset, start, end, kind=kind, limit=limit, after=after, tz=tz)
        )

    def frontier(
        self, asset: str, origin: InstantLike | None = None, *, tz: TzLike | None = None
    ) -> m.Frontier:
        """Complete up to when, from ``origin`` (default: the asset's first
        covered instant).

        >>> client.frontier("orders", "2025-06-14").frontier  # doctest: +SKIP
        datetime.datetime(2025, 6, 14, 3, 10, tzinfo=datetime.timezone.utc)
        """
        return self._send(_api.frontier(asset, origin, tz=tz))

    def assets(
        self, *, prefix: str | None = None, contains: str | None = None
    ) -> Iterator[m.Asset]:
        """Every asset with an event or a declaration, in name order (byte
        order), across every page: an iterator (``list(client.assets())``
        for a list), its first page asked at once. ``prefix``: names that
        start with it; ``contains``: names that contain it
        (case-sensitive). Each carries its overview: ``frontier``,
        ``covered_ratio_day``, ``covered_ratio_week``.

        >>> [a.asset for a in client.assets(prefix="s3://lake/")]  # doctest: +SKIP
        ['s3://lake/clicks', 's3://lake/orders']
        """
        return self._iterate_started(_api.assets(prefix=prefix, contains=contains))

    def assets_page(
        self,
        *,
        prefix: str | None = None,
        contains: str | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> m.AssetsPage:
        """One page of assets (``limit`` 1 to 1,000, default 100); pass its
        ``next`` as ``after`` for the next."""
        return self._send(
            _api.assets_page(prefix=prefix, contains=contains, limit=limit, after=after)
        )

    def buckets_many(
        self,
        items: Iterable[tuple[str, InstantLike, InstantLike] | Mapping[str, Any]],
        *,
        buckets: int | None = None,
        tz: TzLike | None = None,
    ) -> list[m.Buckets]:
        """The buckets of several assets and ranges in one request (``POST
        /v1/buckets``), in the order given: each item ``(asset, start,
        end)`` or a mapping with those keys, each answer what
        :meth:`buckets` answers for it (1 to 1,000 items; items times
        ``buckets`` at most 200,000).

        >>> bars = client.buckets_many([("orders", "2025-06-14", "2025-06-15"),
        ...                             ("clicks", "2025-06-14", "2025-06-15")], buckets=24)  # doctest: +SKIP
        """
        return self._send(_api.buckets_many(items, buckets=buckets, tz=tz))

    def asset(self, asset: str) -> m.Asset:
        """One asset: events stored, first and last covered instants,
        declaration; :class:`gapless.NotFound` for one never seen."""
        return self._send(_api.asset(asset))

    def declare(
        self,
        asset: str,
        *,
        key_span: DurationLike | None = None,
        tz: TzLike | None = None,
    ) -> m.Declaration:
        """Declare an asset's discrete key span and time zone (creating it),
        as ``gapless asset set``; an argument not given stays as it is,
        ``key_span="none"`` clears the span. Needs an admin token.

        >>> client.declare("clicks", key_span="5m", tz="UTC")  # doctest: +SKIP
        Declaration(asset='clicks', key_span='PT5M', tz='UTC')
        """
        return self._send(_api.declare(asset, key_span=key_span, tz=tz))

    def prune(
        self, before: InstantLike, *, asset: str | None = None, tz: TzLike | None = None
    ) -> m.Pruned:
        """Remove the detail of the events that ended by ``before`` (of
        ``asset``, or of every asset, with the settled firings recorded
        before it), as ``gapless prune``: every coverage answer stays as it
        was. Needs an admin token; safe to send again.

        >>> client.prune("2025-03-01").events_removed  # doctest: +SKIP
        120000
        """
        return self._send(_api.prune(before, asset=asset, tz=tz))

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: ``{"status": "ok"}`` from a live server."""
        return self._send(_api.health())

    # -- rules and firings -----------------------------------------------

    def set_rule(
        self,
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
    ) -> m.RuleSet:
        """Create or update a rule (SPEC §7, ``gapless rule set``): fire once
        each time a window of grid ``every`` (from ``from_``, until
        ``until``) of the joint coverage of ``assets`` becomes complete.
        The same definition again changes nothing (``outcome ==
        "unchanged"``); another definition for an existing name is a
        :class:`gapless.Conflict`. Needs an admin token.

        >>> client.set_rule("orders_hourly", assets=["orders"], every="1h",
        ...                 from_="2025-06-01", deadline="30m", target="airflow")  # doctest: +SKIP
        RuleSet(rule=Rule(rule='orders_hourly', ...), outcome='created', firings=0)
        """
        return self._send(
            _api.set_rule(
                name,
                assets=assets,
                every=every,
                from_=from_,
                until=until,
                tz=tz,
                policy=policy,
                min_ratio=min_ratio,
                max_gap=max_gap,
                deadline=deadline,
                target=target,
                key_format=key_format,
            )
        )

    def rule(self, name: str) -> m.Rule:
        """One rule; :class:`gapless.NotFound` naming the nearest for an unknown one."""
        return self._send(_api.rule(name))

    def rule_windows(
        self, name: str, start: InstantLike, end: InstantLike, *, tz: TzLike | None = None
    ) -> m.RuleWindows:
        """The rule's windows that overlap the range, each judged now as the
        rule judges it (``gapless rule windows``)."""
        return self._send(_api.rule_windows(name, start, end, tz=tz))

    def rules_page(
        self, *, prefix: str | None = None, limit: int | None = None, after: str | None = None
    ) -> m.RulesPage:
        """One page of rules in name order (``limit`` 1 to 1,000, default
        100, fewer when their asset lists are long); pass its ``next`` as
        ``after`` for the next."""
        return self._send(_api.rules_page(prefix=prefix, limit=limit, after=after))

    def rules(self, *, prefix: str | None = None) -> Iterator[m.Rule]:
        """Every rule (``prefix``: whose name starts with it), in name order,
        across every page: an iterator (``list(client.rules())`` for a
        list), its first page asked at once."""
        return self._iterate_started(_api.rules(prefix=prefix))

    def delete_rule(self, name: str) -> m.RuleDeleted:
        """Delete a rule, its window states and its firings."""
        return self._send(_api.delete_rule(name))

    def firings_page(
        self,
        *,
        rule: str | None = None,
        after: int | None = None,
        limit: int | None = None,
        wait: DurationLike | None = None,
        newest: bool = False,
    ) -> m.FiringsPage:
        """One page of firings after ``after`` (a ``seq``), of one ``rule``
        or all; with ``wait`` (seconds, a timedelta or ``"5m"``) it long-polls:
        it answers as soon as a firing after ``after`` exists, or after
        ``wait`` with an empty page, however much longer than a server's 20 s
        per request ``wait`` is. ``newest=True``: the newest ``limit``
        firings after ``after`` instead of the oldest (``next`` is None)."""
        return self._run(
            _api.firings_page(rule=rule, after=after, limit=limit, wait=wait, newest=newest)
        )

    def firings(
        self,
        *,
        rule: str | None = None,
        after: int | None = None,
        limit: int | None = None,
        wait: DurationLike | None = None,
    ) -> Iterator[m.Firing]:
        """Every firing after ``after``, in ``seq`` order, following the
        pages; with ``wait``, then each new one as it is recorded, until
        ``wait`` passes with none. Keep the last ``seq`` to resume.

        >>> last = 0
        >>> for f in client.firings(rule="orders_hourly", after=last, wait=60):  # doctest: +SKIP
        ...     run_report(f.key)
        ...     last = f.seq
        """
        return self._iterate(_api.firings(rule=rule, after=after, limit=limit, wait=wait))

    def wait(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        policy: str | None = None,
        min_ratio: float | None = None,
        max_gap: DurationLike | None = None,
        tz: TzLike | None = None,
        timeout: DurationLike | None = None,
    ) -> m.Check:
        """Block until ``[start, end)`` is complete under the policy, or
        ``timeout`` passes (default 1 h), as ``gapless wait``: the last
        check, ``complete`` False when the timeout passed. The server
        answers as soon as a batch completes the range (long polls of at
        most 20 s each, asked again until ``timeout``), no polling loop.

        >>> if client.wait("orders", "2025-06-14", "2025-06-15", timeout=7200).complete:  # doctest: +SKIP
        ...     run_report()
        """
        return self._run(
            _api.wait(
                asset,
                start,
                end,
                policy=policy,
                min_ratio=min_ratio,
                max_gap=max_gap,
                tz=tz,
                timeout=timeout,
            )
        )
