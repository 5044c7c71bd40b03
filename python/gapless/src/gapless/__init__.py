"""gapless: exact coverage for time-partitioned data fed by streaming producers.

The Python client of a gapless server (SPEC §4, §7), and coverage computed
in-process (SPEC §1); the wheel also installs the ``gapless`` command.

>>> import gapless
>>> client = gapless.Client("http://127.0.0.1:8080")  # doctest: +SKIP
>>> client.check("orders", "2025-06-14", "2025-06-15").missing  # doctest: +SKIP
[Interval(start=datetime.datetime(2025, 6, 14, 3, 10, tzinfo=datetime.timezone.utc), end=...)]
>>> gapless.coverage([("2025-06-14T00:00Z", "2025-06-14T12:00Z")],
...                  "2025-06-14", "2025-06-15").covered_ratio
0.5
"""

from __future__ import annotations

from ._async import AsyncClient
from ._binary import binary_path
from ._client import Client
from ._coverage import coverage
from ._errors import (
    BadInput,
    Conflict,
    Denied,
    Fault,
    GaplessError,
    NotFound,
    Unavailable,
)
from ._models import (
    Asset,
    AssetsPage,
    Bucket,
    Buckets,
    Check,
    Coverage,
    Declaration,
    Delivery,
    Event,
    EventRef,
    EventsPage,
    Firing,
    FiringsPage,
    Frontier,
    Interval,
    MultiCheck,
    Pruned,
    Recorded,
    Rule,
    RuleDeleted,
    RuleSet,
    RulesPage,
    RuleWindows,
    Segment,
    SegmentsPage,
    Window,
    Windows,
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gapless")
    except PackageNotFoundError:  # a source checkout, not installed
        return "0+unknown"


__version__ = _version()

__all__ = [
    "Asset",
    "AssetsPage",
    "AsyncClient",
    "BadInput",
    "Bucket",
    "Buckets",
    "Check",
    "Client",
    "Conflict",
    "Coverage",
    "Declaration",
    "Delivery",
    "Denied",
    "Event",
    "EventRef",
    "EventsPage",
    "Fault",
    "Firing",
    "FiringsPage",
    "Frontier",
    "GaplessError",
    "Interval",
    "MultiCheck",
    "NotFound",
    "Pruned",
    "Recorded",
    "Rule",
    "RuleDeleted",
    "RuleSet",
    "RuleWindows",
    "RulesPage",
    "Segment",
    "SegmentsPage",
    "Unavailable",
    "Window",
    "Windows",
    "__version__",
    "binary_path",
    "coverage",
]
