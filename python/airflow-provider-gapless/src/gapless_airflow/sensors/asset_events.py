"""Wait until Airflow's own asset events cover a range: the task-side check
with no gapless server (:func:`gapless_airflow.asset_events.coverage_from_asset_events`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import Asset, BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowSensorTimeout, AirflowSkipException

from .. import _answer, _window
from .. import _time as t
from ..asset_events import coverage_from_asset_events


class AssetEventCoverageSensor(BaseSensorOperator):
    """Wait until the asset events of ``asset`` cover ``[start, end)``
    under ``policy``, read in the task (``inlet_events``: the asset is
    added to the task's inlets), with no gapless server.

    Each event's interval is read from ``extra.interval_start`` /
    ``interval_end``, from an ISO 8601 interval ``partition_key``, or from a
    discrete ``partition_key`` with ``key_span`` (see
    :mod:`gapless_airflow.asset_events`). ``start``/``end`` (templated)
    default to the DAG run's partition window or data interval, as
    :class:`~gapless_airflow.sensors.coverage.GaplessCoverageSensor`'s do.
    The XCom is the coverage answer (``asset`` its URI); a timeout names
    the gaps.

    Only events after ``start`` minus ``lookback`` (default 7 days of
    event timestamps) are read, oldest first: an event recorded long
    before the range it covers is not seen unless ``lookback`` says so.

    >>> AssetEventCoverageSensor(  # doctest: +SKIP
    ...     task_id="orders_covered",
    ...     asset=Asset("s3://lake/orders"),
    ...     key_span="PT1H",
    ...     mode="reschedule",
    ... )
    """

    template_fields: Sequence[str] = ("start", "end", "policy", "tz", "every", "key_span")

    def __init__(
        self,
        *,
        asset: Asset,
        start: Any = None,
        end: Any = None,
        policy: str | None = None,
        min_ratio: float | None = None,
        max_gap: Any = None,
        tz: str | None = None,
        every: str | None = None,
        key_span: Any = None,
        lookback: Any = "P7D",
        **kwargs: Any,
    ) -> None:
        inlets = list(kwargs.pop("inlets", None) or [])
        if asset not in inlets:
            inlets.append(asset)
        super().__init__(inlets=inlets, **kwargs)
        if not isinstance(asset, Asset):
            raise TypeError(
                f"{self.task_id}: asset must be an airflow.sdk.Asset, got {type(asset).__name__}"
            )
        self.asset = asset
        self.start = start
        self.end = end
        self.policy = _answer.policy_text(policy, min_ratio, max_gap)
        self.tz = tz
        self.every = every
        self.key_span = key_span
        self.lookback = lookback
        self._last: dict[str, Any] | None = None

    def poke(self, context: Any) -> PokeReturnValue:
        s, e, where = _window.resolve(
            context,
            self.start,
            self.end,
            every=self.every,
            key_span=self.key_span,
            tz=self.tz,
            what=self.task_id,
        )
        accessor = context["inlet_events"][self.asset]
        after = t.duration(self.lookback, "lookback").add_to(s, self.tz, -1)
        events = (
            accessor.after(t.text(after)).ascending(True)
            if hasattr(accessor, "after")
            else accessor
        )
        cov = coverage_from_asset_events(events, s, e, key_span=self.key_span, tz=self.tz)
        answer = {
            "asset": self.asset.uri,
            "start": t.text(s),
            "end": t.text(e),
            "covered": cov.covered,
            "covered_ratio": cov.covered_ratio,
            "missing": [{"start": t.text(g.start), "end": t.text(g.end)} for g in cov.missing],
            "missing_count": cov.missing_count,
        }
        answer = _answer.joint(answer, self.policy)
        self._last = answer
        self.log.info("%s (window from %s)", _answer.describe(answer), where)
        return PokeReturnValue(is_done=bool(answer["complete"]), xcom_value=answer)

    def execute(self, context: Any) -> Any:
        try:
            return super().execute(context)
        except (AirflowSensorTimeout, AirflowSkipException) as e:
            if self._last is None or not str(e).startswith("Sensor has timed out"):
                raise
            message = f"{_answer.describe(self._last)}; {e}"
            self.log.error("%s", message)
            raise type(e)(message) from None
