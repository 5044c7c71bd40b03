"""Instants, durations, ISO 8601 intervals and grid boundaries, read as the
gapless server reads them (SPEC §1, §2), for the task side that has no
server (asset events, partition windows): :mod:`gapless`'s own readings,
under the names this package's modules use. Nothing here imports Airflow.
"""

from __future__ import annotations

from gapless._time import (
    Duration,
    DurationLike,
    InstantLike,
    TzLike,
    duration,
    interval,
    iso_duration,
    looks_like_interval,
    next_boundary,
    window_from,
)
from gapless._time import format_instant as text
from gapless._time import read_instant as instant
from gapless._time import zone_or_utc as zone

__all__ = [
    "Duration",
    "DurationLike",
    "InstantLike",
    "TzLike",
    "duration",
    "instant",
    "interval",
    "iso_duration",
    "looks_like_interval",
    "next_boundary",
    "text",
    "window_from",
    "zone",
]
