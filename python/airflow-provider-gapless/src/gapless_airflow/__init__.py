"""airflow-provider-gapless: gapless for Apache Airflow ≥ 3.3.

- :class:`~gapless_airflow.hooks.gapless.GaplessHook`: connection type ``gapless``.
- :class:`~gapless_airflow.sensors.coverage.GaplessCoverageSensor`: wait until
  a range (by default the DAG run's partition window) is complete; poke,
  reschedule or deferrable (:class:`~gapless_airflow.triggers.coverage.GaplessCoverageTrigger`).
- :class:`~gapless_airflow.operators.record.GaplessRecordOperator` and
  :func:`~gapless_airflow.operators.record.record`: record what a task wrote.
- :func:`~gapless_airflow.asset_events.coverage_from_asset_events` and
  :class:`~gapless_airflow.sensors.asset_events.AssetEventCoverageSensor`:
  coverage from Airflow's asset events, with no server.
- :mod:`gapless_airflow.sync`: import asset events that carry intervals into gapless.

Importing this package imports neither Airflow nor the client; the names
above are loaded when first used (``from gapless_airflow import record``).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "GaplessHook": "hooks.gapless",
    "GaplessCoverageSensor": "sensors.coverage",
    "AssetEventCoverageSensor": "sensors.asset_events",
    "GaplessCoverageTrigger": "triggers.coverage",
    "GaplessRecordOperator": "operators.record",
    "record": "operators.record",
    "GaplessSyncOperator": "operators.sync",
    "coverage_from_asset_events": "asset_events",
    "interval_of": "asset_events",
    "sync": "sync",
}

__all__ = ["__version__", *_LAZY]  # noqa: PLE0604 (the lazy names: strings all)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gapless_airflow' has no attribute {name!r}")
    import importlib

    mod = importlib.import_module(f"gapless_airflow.{module}")
    return mod if name == module else getattr(mod, name)
