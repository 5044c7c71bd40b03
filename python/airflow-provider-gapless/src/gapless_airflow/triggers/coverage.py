"""The trigger of the deferrable :class:`~gapless_airflow.sensors.coverage.GaplessCoverageSensor`:
waits in the triggerer on the gapless server's long poll (``GET
/v1/assets/{asset}/wait``), not by sleeping, and fires once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

import gapless

from .. import _answer
from ..hooks.gapless import GaplessHook

#: The longest one call of the client's wait (it long-polls in requests of
#: at most 20 s); the trigger logs and calls again until its deadline.
ROUND = 300.0


class GaplessCoverageTrigger(BaseTrigger):
    """Fire when ``[start, end)`` of ``assets`` is complete under
    ``policy``, or at ``deadline`` (Unix seconds; None: never) with the last
    answer.

    The event's payload is ``{"status": "complete" | "timeout" | "error",
    "answer": <coverage answer> | None, "message": str}``.

    One asset waits on the server's long poll. Several assets wait on each
    asset's long poll in turn (each must be complete under the policy on its
    own before their joint coverage can be), then judge the joint coverage;
    where the joint coverage still falls short of the policy it asks again
    every ``poll_interval`` seconds.

    A server that cannot be reached is asked again (with ``poll_interval``
    pauses) until the deadline; any other error (an unknown asset, a bad
    range, a refused token) fires ``"error"`` at once.

    >>> GaplessCoverageTrigger(["orders"], "2025-06-14T00:00:00Z", "2025-06-15T00:00:00Z").serialize()
    ('gapless_airflow.triggers.coverage.GaplessCoverageTrigger', {'assets': ['orders'], ...})
    """

    def __init__(
        self,
        assets: list[str],
        start: str,
        end: str,
        policy: str | None = None,
        gapless_conn_id: str = GaplessHook.default_conn_name,
        deadline: float | None = None,
        poll_interval: float = 60.0,
    ) -> None:
        # BaseTrigger.__init__ has no annotations (untyped_calls_exclude misses super()).
        super().__init__()  # type: ignore[no-untyped-call]
        self.assets = list(assets)
        self.start = start
        self.end = end
        self.policy = policy
        self.gapless_conn_id = gapless_conn_id
        self.deadline = deadline
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "assets": self.assets,
                "start": self.start,
                "end": self.end,
                "policy": self.policy,
                "gapless_conn_id": self.gapless_conn_id,
                "deadline": self.deadline,
                "poll_interval": self.poll_interval,
            },
        )

    def _left(self) -> float:
        if self.deadline is None:
            return ROUND
        return max(0.0, self.deadline - time.time())

    async def run(self) -> AsyncIterator[TriggerEvent]:
        hook = GaplessHook(self.gapless_conn_id)
        try:
            client = await hook.get_async_conn()
        except Exception as e:  # noqa: BLE001 (a bad connection fails the task with its reason)
            yield TriggerEvent(
                {
                    "status": "error",
                    "answer": None,
                    "message": f"connection {self.gapless_conn_id!r}: {e}",
                }
            )
            return
        async with client:
            answer: dict[str, Any] | None = None
            rounds = 0
            while True:
                rounds += 1
                left = self._left()
                try:
                    answer = await self._round(client, min(left, ROUND))
                except gapless.Unavailable as e:
                    self.log.warning("gapless server unavailable (asking again): %s", e.message)
                    if self._left() <= 0:
                        yield TriggerEvent(
                            {"status": "error", "answer": answer, "message": e.message}
                        )
                        return
                    await asyncio.sleep(min(self.poll_interval, self._left()))
                    continue
                except gapless.GaplessError as e:
                    yield TriggerEvent({"status": "error", "answer": None, "message": e.message})
                    return
                if answer["complete"]:
                    self.log.info("%s", _answer.describe(answer))
                    yield TriggerEvent(
                        {
                            "status": "complete",
                            "answer": answer,
                            "message": _answer.describe(answer),
                        }
                    )
                    return
                if self._left() <= 0:
                    yield TriggerEvent(
                        {"status": "timeout", "answer": answer, "message": _answer.describe(answer)}
                    )
                    return
                self.log.info("waiting (round %d): %s", rounds, _answer.describe(answer, gaps=3))

    async def _wait(self, client: gapless.AsyncClient, asset: str, wait: float) -> gapless.Check:
        """The server's long poll for ``wait`` seconds; a plain check when no
        time is left (the server refuses a wait of zero)."""
        if wait < 0.001:
            return await client.check(asset, self.start, self.end, policy=self.policy)
        return await client.wait(asset, self.start, self.end, policy=self.policy, timeout=wait)

    async def _round(self, client: gapless.AsyncClient, wait: float) -> dict[str, Any]:
        """One round: at most ``wait`` seconds; the answer it ends with."""
        if len(self.assets) == 1:
            answer: dict[str, Any] = (await self._wait(client, self.assets[0], wait)).raw
            return answer
        give_up = time.monotonic() + wait
        each_complete = True
        for asset in self.assets:
            left = max(0.0, give_up - time.monotonic())
            own = await self._wait(client, asset, left)
            if not own.complete:
                each_complete = False
                break
        joint = await client.check_all(self.assets, self.start, self.end)
        answer = _answer.joint(joint.raw, self.policy)
        if not answer["complete"] and each_complete:
            # Each asset is complete on its own, their joint coverage is not:
            # no long poll wakes for that, so ask again after a pause.
            await asyncio.sleep(min(self.poll_interval, max(0.0, give_up - time.monotonic())))
        return answer
