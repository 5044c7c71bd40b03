"""The asyncio client: :class:`gapless.Client`'s routes, awaited."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

import httpx

from . import _api
from . import _models as m
from . import _transport as t
from ._api import Call, Item, Plan, R, Steps, T
from ._client import Client
from ._time import DurationLike, InstantLike, TzLike

if TYPE_CHECKING:
    from typing_extensions import Self  # typing.Self from Python 3.11


class AsyncClient:
    """:class:`gapless.Client` for asyncio, over ``httpx.AsyncClient``: the
    same arguments, methods, answers, errors and retries; each method is
    awaited, and ``events``, ``segments`` and ``firings`` are async
    iterators.

    >>> async with gapless.AsyncClient("http://127.0.0.1:8080") as client:  # doctest: +SKIP
    ...     answer = await client.wait("orders", "2025-06-14", "2025-06-15", timeout=600)
    ...     async for e in client.events("orders", kind="retracted"):
    ...         print(e.id)
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
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url = t.base_url(url)
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self._http = httpx.AsyncClient(
            base_url=self.url,
            headers=t.headers(token, headers),
            timeout=timeout,
            follow_redirects=False,
            transport=transport,
        )

    def __repr__(self) -> str:
        return f"gapless.AsyncClient({self.url!r})"

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- sending (as Client's) -------------------------------------------

    async def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            try:
                r = await self._http.request(
                    call.method,
                    call.path,
                    params=call.params,
                    json=call.json,
                    timeout=t.timeout_for(call, self.timeout) or httpx.USE_CLIENT_DEFAULT,
                )
            except httpx.TransportError as e:
                if attempt < self.retries and t.retry_after(e, call):
                    await asyncio.sleep(t.pause(attempt, self.backoff))
                    attempt += 1
                    continue
                raise t.unreachable(self.url, e) from e
            if r.status_code == 503 and attempt < self.retries:
                await asyncio.sleep(t.pause(attempt, self.backoff))
                attempt += 1
                continue
            return t.answer(call, r.status_code, r.content)

    async def _run(self, plan: Steps[R]) -> R:
        try:
            step = next(plan)
            while True:
                assert isinstance(step, Call)
                step = plan.send(await self._send(step))
        except StopIteration as stop:
            return cast(R, stop.value)

    async def _iterate(self, plan: Plan[T]) -> AsyncIterator[T]:
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
                sent = await self._send(step)

    # -- the routes --------------------------------------------------------

    async def record(
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
        return await self._send(
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

    async def record_many(
        self, events: Iterable[Mapping[str, Any]], *, tz: TzLike | None = None
    ) -> m.Recorded:
        return await self._send(_api.record_many(events, tz=tz))

    async def check(
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
        return await self._send(
            _api.check(
                asset, start, end, policy=policy, min_ratio=min_ratio, max_gap=max_gap, tz=tz
            )
        )

    async def check_all(
        self,
        assets: Iterable[str],
        start: InstantLike,
        end: InstantLike,
        *,
        tz: TzLike | None = None,
    ) -> m.MultiCheck:
        return await self._send(_api.check_all(assets, start, end, tz=tz))

    async def windows(
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
        return await self._send(
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
    ) -> AsyncIterator[m.Segment]:
        return self._iterate(_api.segments(asset, start, end, limit=limit, tz=tz))

    async def buckets(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        buckets: int | None = None,
        tz: TzLike | None = None,
    ) -> m.Buckets:
        return await self._send(_api.buckets(asset, start, end, buckets=buckets, tz=tz))

    async def segments_page(
        self,
        asset: str,
        start: InstantLike,
        end: InstantLike,
        *,
        limit: int | None = None,
        after: InstantLike | None = None,
        tz: TzLike | None = None,
    ) -> m.SegmentsPage:
        return await self._send(
            _api.segments_page(asset, start, end, limit=limit, after=after, tz=tz)
        )

    def events(
        self,
        asset: str,
        start: InstantLike | None = None,
        end: InstantLike | None = None,
        *,
        kind: str | None = None,
        limit: int | None = None,
        tz: TzLike | None = None,
    ) -> AsyncIterator[m.Event]:
        return self._iterate(_api.events(asset, start, end, kind=kind, limit=limit, tz=tz))

    async def events_page(
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
        return await self._send(
            _api.events_page(asset, start, end, kind=kind, limit=limit, after=after, tz=tz)
        )

    async def frontier(
        self, asset: str, origin: InstantLike | None = None, *, tz: TzLike | None = None
    ) -> m.Frontier:
        return await self._send(_api.frontier(asset, origin, tz=tz))

    def assets(
        self, *, prefix: str | None = None, contains: str | None = None
    ) -> AsyncIterator[m.Asset]:
        return self._iterate(_api.assets(prefix=prefix, contains=contains))

    async def assets_page(
        self,
        *,
        prefix: str | None = None,
        contains: str | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> m.AssetsPage:
        return await self._send(
            _api.assets_page(prefix=prefix, contains=contains, limit=limit, after=after)
        )

    async def buckets_many(
        self,
        items: Iterable[tuple[str, InstantLike, InstantLike] | Mapping[str, Any]],
        *,
        buckets: int | None = None,
        tz: TzLike | None = None,
    ) -> list[m.Buckets]:
        return await self._send(_api.buckets_many(items, buckets=buckets, tz=tz))

    async def asset(self, asset: str) -> m.Asset:
        return await self._send(_api.asset(asset))

    async def declare(
        self,
        asset: str,
        *,
        key_span: DurationLike | None = None,
        tz: TzLike | None = None,
    ) -> m.Declaration:
        return await self._send(_api.declare(asset, key_span=key_span, tz=tz))

    async def prune(
        self, before: InstantLike, *, asset: str | None = None, tz: TzLike | None = None
    ) -> m.Pruned:
        return await self._send(_api.prune(before, asset=asset, tz=tz))

    async def health(self) -> dict[str, Any]:
        return await self._send(_api.health())

    async def set_rule(
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
        return await self._send(
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

    async def rule(self, name: str) -> m.Rule:
        return await self._send(_api.rule(name))

    async def rule_windows(
        self, name: str, start: InstantLike, end: InstantLike, *, tz: TzLike | None = None
    ) -> m.RuleWindows:
        return await self._send(_api.rule_windows(name, start, end, tz=tz))

    def rules(self, *, prefix: str | None = None) -> AsyncIterator[m.Rule]:
        return self._iterate(_api.rules(prefix=prefix))

    async def rules_page(
        self, *, prefix: str | None = None, limit: int | None = None, after: str | None = None
    ) -> m.RulesPage:
        return await self._send(_api.rules_page(prefix=prefix, limit=limit, after=after))

    async def delete_rule(self, name: str) -> m.RuleDeleted:
        return await self._send(_api.delete_rule(name))

    async def firings_page(
        self,
        *,
        rule: str | None = None,
        after: int | None = None,
        limit: int | None = None,
        wait: DurationLike | None = None,
        newest: bool = False,
    ) -> m.FiringsPage:
        return await self._run(
            _api.firings_page(rule=rule, after=after, limit=limit, wait=wait, newest=newest)
        )

    def firings(
        self,
        *,
        rule: str | None = None,
        after: int | None = None,
        limit: int | None = None,
        wait: DurationLike | None = None,
    ) -> AsyncIterator[m.Firing]:
        return self._iterate(_api.firings(rule=rule, after=after, limit=limit, wait=wait))

    async def wait(
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
        return await self._run(
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


# One text per route: the blocking client's, which says what the route does.
for _name, _method in vars(AsyncClient).copy().items():
    _sync = getattr(Client, _name, None)
    if callable(_method) and not _name.startswith("_") and _sync is not None and _sync.__doc__:
        _method.__doc__ = _sync.__doc__
del _name, _method, _sync
