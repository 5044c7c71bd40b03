"""Wait until a time range of one or more assets is complete in gapless."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.configuration import conf
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout, AirflowSkipException

import gapless

from .. import _answer, _window
from .. import _time as t
from ..hooks.gapless import GaplessHook
from ..triggers.coverage import GaplessCoverageTrigger


class GaplessCoverageSensor(BaseSensorOperator):
    """Wait until ``[start, end)`` of ``asset`` (or the joint coverage of
    ``assets``) is complete under ``policy`` in the gapless ledger.

    :param asset: the asset's name in gapless (or give ``assets``).
    :param assets: several assets: an instant counts only where every one
        covers it (their joint coverage, as a rule's).
    :param start: the range's start (templated): a datetime or text; naive
        ones are read in ``tz``. With ``end`` left out too, the window is the
        DAG run's partition window (``dag_run.partition_key``: an ISO 8601
        interval key, or a discrete key that starts a window of grid
        ``every`` or spans ``key_span``), else its data interval.
    :param end: the range's end (templated).
    :param policy: when the range counts as complete: ``"full"`` (default),
        ``"ratio>=0.99"``, ``"gap<10m"`` (or ``min_ratio=``, ``max_gap=``).
    :param tz: the zone of naive instants and keys, and of the grid.
    :param every: the grid whose window a discrete partition key starts
        (``"1h"``, ``"1d"``: SPEC §1).
    :param key_span: or the length of a discrete key's window (``"PT1H"``).
    :param gapless_conn_id: the connection to the server.
    :param deferrable: hand the wait to :class:`GaplessCoverageTrigger`,
        which waits on the server's long poll in the triggerer (default:
        ``[operators] default_deferrable``).

    Modes ``poke`` and ``reschedule`` check once per ``poke_interval``;
    deferred, the trigger wakes as soon as the server stores the batch that
    completes the range. The sensor's XCom is the coverage answer (the
    server's check JSON: ``covered``, ``covered_ratio``, ``missing``,
    ``complete``…). On ``timeout`` the task's log and its error name the
    gaps.

    >>> wait_day = GaplessCoverageSensor(  # doctest: +SKIP
    ...     task_id="wait_for_orders",
    ...     asset="orders",
    ...     start="{{ data_interval_start }}",
    ...     end="{{ data_interval_end }}",
    ...     policy="gap<5m",
    ...     deferrable=True,
    ...     timeout=6 * 3600,
    ... )
    """

    template_fields: Sequence[str] = (
        "asset",
        "assets",
        "start",
        "end",
        "policy",
        "tz",
        "every",
        "key_span",
    )
    ui_color = "#d6f5e3"

    def __init__(
        self,
        *,
        asset: str | None = None,
        assets: Sequence[str] | None = None,
        start: Any = None,
        end: Any = None,
        policy: str | None = None,
        min_ratio: float | None = None,
        max_gap: Any = None,
        tz: str | None = None,
        every: str | None = None,
        key_span: Any = None,
        gapless_conn_id: str = GaplessHook.default_conn_name,
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if (asset is None) == (assets is None):
            raise ValueError(f"{self.task_id}: give asset or assets (one of them)")
        if assets is not None and not isinstance(assets, str) and len(assets) == 0:
            raise ValueError(f"{self.task_id}: assets is empty")
        self.asset = asset
        self.assets = list(assets) if assets is not None and not isinstance(assets, str) else assets
        self.start = start
        self.end = end
        self.policy = _answer.policy_text(policy, min_ratio, max_gap)
        self.tz = tz
        self.every = every
        self.key_span = key_span
        self.gapless_conn_id = gapless_conn_id
        self.deferrable = deferrable
        self._last: dict[str, Any] | None = None

    # -- the question ------------------------------------------------------

    def _names(self) -> list[str]:
        if self.asset is not None:
            return [self.asset]
        if isinstance(self.assets, str):  # templated to one text
            return [a.strip() for a in self.assets.split(",") if a.strip()]
        return list(self.assets or [])

    def window(self, context: Any) -> tuple[str, str, str]:
        """The range as RFC 3339 UTC text, and where it came from."""
        s, e, where = _window.resolve(
            context,
            self.start,
            self.end,
            every=self.every,
            key_span=self.key_span,
            tz=self.tz,
            what=self.task_id,
        )
        return t.text(s), t.text(e), where

    def check(self, client: gapless.Client, start: str, end: str) -> dict[str, Any]:
        """The coverage answer now."""
        names = self._names()
        if len(names) == 1:
            answer: dict[str, Any] = client.check(names[0], start, end, policy=self.policy).raw
            return answer
        return _answer.joint(client.check_all(names, start, end).raw, self.policy)

    def poke(self, context: Any) -> PokeReturnValue:
        start, end, where = self.window(context)
        with GaplessHook(self.gapless_conn_id).get_conn() as client:
            answer = self.check(client, start, end)
        self._last = answer
        self.log.info("%s (window from %s)", _answer.describe(answer), where)
        return PokeReturnValue(is_done=bool(answer["complete"]), xcom_value=answer)

    # -- running -----------------------------------------------------------

    def execute(self, context: Any) -> Any:
        if self.deferrable:
            return self._defer(context)
        try:
            return super().execute(context)
        except (AirflowSensorTimeout, AirflowSkipException) as e:
            if self._last is None or not str(e).startswith("Sensor has timed out"):
                raise
            message = f"{_answer.describe(self._last)}; {e}"
            self.log.error("%s", message)
            raise type(e)(message) from None

    def _defer(self, context: Any) -> Any:
        start, end, where = self.window(context)
        with GaplessHook(self.gapless_conn_id).get_conn() as client:
            answer = self.check(client, start, end)
        self.log.info("%s (window from %s)", _answer.describe(answer), where)
        if answer["complete"]:
            return answer
        timeout = (
            self.timeout.total_seconds()
            if isinstance(self.timeout, timedelta)
            else float(self.timeout)
        )
        trigger = GaplessCoverageTrigger(
            assets=self._names(),
            start=start,
            end=end,
            policy=self.policy,
            gapless_conn_id=self.gapless_conn_id,
            deadline=time.time() + timeout,
            poll_interval=float(
                self.poke_interval.total_seconds()
                if isinstance(self.poke_interval, timedelta)
                else self.poke_interval
            ),
        )
        self.log.info(
            "deferring to the triggerer (waiting on the server's long poll for at most %.0f s)",
            timeout,
        )
        self.defer(trigger=trigger, method_name="execute_complete")

    def execute_complete(self, context: Any, event: dict[str, Any] | None = None) -> Any:
        """Resume after the trigger fired: the answer, or the timeout naming the gaps."""
        if not event:
            raise AirflowException(f"{self.task_id}: the trigger fired without an event")
        status, answer, message = event.get("status"), event.get("answer"), event.get("message", "")
        if status == "complete":
            self.log.info("%s", message)
            return answer
        if status == "timeout":
            message = f"{message}; sensor timed out after {self.timeout}s"
            self.log.error("%s", message)
            if self.soft_fail:
                raise AirflowSkipException(message)
            raise AirflowSensorTimeout(message)
        self.log.error("gapless: %s", message)
        raise AirflowException(f"gapless: {message}")
