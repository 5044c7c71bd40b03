"""What a DAG waits on or records in gapless, read from its serialized form
(the api-server has no DAG files, only what the dag-processor stored), and
the window of each for one DAG run.

A *watch* is one asset with the grid and window settings of the task (or
rule) that names it:

- a :class:`~gapless_airflow.sensors.coverage.GaplessCoverageSensor`'s
  ``asset`` or ``assets`` (each asset on its own), with its ``policy``;
- a :class:`~gapless_airflow.operators.record.GaplessRecordOperator`'s
  ``asset`` (one or several);
- a gapless rule that fired this DAG: its name from a run id the
  deliverer's ``dag_id`` target makes (``gapless__<rule>__<key>__<gen>``)
  or from the ``rule`` of the asset events the run consumed (the
  ``asset_uri`` target puts the firing into ``extra``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SENSOR = ("gapless_airflow.sensors.coverage", "GaplessCoverageSensor")
RECORD = ("gapless_airflow.operators.record", "GaplessRecordOperator")
RUN_ID_PREFIX = "gapless__"


@dataclass(frozen=True)
class Watch:
    """One gapless asset a DAG waits on or records, and how its task (or
    rule) finds a run's window."""

    asset: str
    source: str
    start: str | None = None
    end: str | None = None
    every: str | None = None
    key_span: str | None = None
    tz: str | None = None
    policy: str | None = None
    rule: str | None = None


def _plain(value: Any) -> Any:
    """A serialized value without the serializer's ``{"__type", "__var"}``
    wrapping (tuples and sets come wrapped)."""
    if isinstance(value, Mapping) and "__var" in value and "__type" in value:
        return _plain(value["__var"])
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    return value


def _text(value: Any) -> str | None:
    value = _plain(value)
    if value is None or value == "":
        return None
    return str(value)


def _names(value: Any) -> list[str]:
    value = _plain(value)
    if value is None:
        return []
    if isinstance(value, str):
        return [n.strip() for n in value.split(",") if n.strip()]
    return [str(n) for n in value if str(n).strip()]


def _literal(value: Any) -> str | None:
    """A start/end that can be used as it is: a Jinja template is rendered
    only when the task runs, so here it counts as not given."""
    text = _text(value)
    return None if text is None or "{{" in text or "{%" in text else text


def task_watches(serialized: Mapping[str, Any]) -> list[Watch]:
    """The watches of a serialized DAG's sensors and record operators, in
    task order, an asset named by several tasks kept once (its first
    task)."""
    dag = serialized.get("dag", serialized)
    out: list[Watch] = []
    seen: set[str] = set()
    for entry in dag.get("tasks", []):
        task = entry.get("__var", entry) if isinstance(entry, Mapping) else {}
        kind = (task.get("_task_module"), task.get("task_type"))
        if kind == SENSOR:
            names = _names(task.get("asset")) or _names(task.get("assets"))
        elif kind == RECORD:
            names = _names(task.get("asset"))
        else:
            continue
        for name in names:
            if name in seen:
                continue
            seen.add(name)
            out.append(
                Watch(
                    asset=name,
                    source=f"task {task.get('task_id')}",
                    start=_literal(task.get("start")),
                    end=_literal(task.get("end")),
                    every=_text(task.get("every")),
                    key_span=_text(task.get("key_span")),
                    tz=_text(task.get("tz")),
                    policy=_text(task.get("policy")) if kind == SENSOR else None,
                )
            )
    return out


def rule_of_run_id(run_id: str, partition_key: str | None) -> str | None:
    """The rule of a run the ``dag_id`` target made
    (``gapless__<rule>__<key>__<generation>``), else None. The key is known
    (the run's partition key), so a rule name holding ``__`` is read right.

    >>> rule_of_run_id("gapless__orders_hourly__2025-06-14T03:00:00__1", "2025-06-14T03:00:00")
    'orders_hourly'
    >>> rule_of_run_id("manual__2025-06-14", None) is None
    True
    """
    if not run_id.startswith(RUN_ID_PREFIX) or not partition_key:
        return None
    rest = run_id[len(RUN_ID_PREFIX) :]
    cut = rest.rfind(f"__{partition_key}__")
    if cut <= 0:
        return None
    generation = rest[cut + len(partition_key) + 4 :]
    return rest[:cut] if generation.isdigit() else None


def rules_of_events(extras: Iterable[Mapping[str, Any] | None]) -> list[str]:
    """The rules named by consumed asset events' ``extra`` (a firing the
    ``asset_uri`` target delivered carries its ``rule``), in order, once each."""
    out: list[str] = []
    for extra in extras:
        rule = (extra or {}).get("rule")
        if isinstance(rule, str) and rule and rule not in out:
            out.append(rule)
    return out
