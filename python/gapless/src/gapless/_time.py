"""Instants and durations: Python values to the SPEC's text forms and back.

An instant given to the client is an aware :class:`datetime.datetime` (sent
as RFC 3339 UTC), or a :class:`str` in one of the SPEC's text forms (sent as
written: RFC 3339 with an offset, a naive date-time, a bare date; the
server reads the naive ones in the question's ``tz``). A naive ``datetime``
is refused unless a ``tz`` says which zone its wall-clock time is in.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Union
from zoneinfo import ZoneInfo

#: What the client takes for an instant.
InstantLike = Union[datetime, str]
#: What the client takes for a zone: an IANA name (``"Europe/Berlin"``) or a tzinfo.
TzLike = Union[str, tzinfo]
#: What the client takes for a duration: a :class:`timedelta`, seconds, or
#: the SPEC's text (``"PT5M"``, ``"5m"``).
DurationLike = Union[timedelta, int, float, str]

_UNIX = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}:?\d{2})?$"
)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})$")


def zone(tz: TzLike | None) -> tzinfo | None:
    """The tzinfo of ``tz`` (an IANA name or a tzinfo); None stays None."""
    if tz is None or isinstance(tz, tzinfo):
        return tz
    if isinstance(tz, str):
        return timezone.utc if tz in ("UTC", "Z") else ZoneInfo(tz)
    raise TypeError(f"tz: expected an IANA zone name or a tzinfo, got {type(tz).__name__}")


def tz_text(tz: TzLike | None) -> str | None:
    """``tz`` as the server's ``tz=`` text (an IANA name); None stays None."""
    if tz is None or isinstance(tz, str):
        return tz
    key = getattr(tz, "key", None)  # zoneinfo.ZoneInfo
    if isinstance(key, str):
        return key
    if tz is timezone.utc:
        return "UTC"
    raise ValueError(
        f"tz: {tz!r} has no IANA name the server can read; pass a zone name such as 'Europe/Berlin'"
    )


def aware(value: datetime, name: str, tz: TzLike | None = None) -> datetime:
    """``value`` with its zone: as it is when aware; a naive one read as
    wall-clock time in ``tz`` (a time in a DST gap moves forward by the gap,
    one in a fold is the earlier instant unless its ``fold`` is 1), and
    refused when there is no ``tz``."""
    if value.tzinfo is not None and value.utcoffset() is not None:
        return value
    z = zone(tz)
    if z is None:
        raise ValueError(
            f"{name}: naive datetime {value.isoformat()} has no time zone; "
            "pass an aware datetime (tzinfo=...) or say which zone it is in with tz=..."
        )
    return value.replace(tzinfo=z)


def format_instant(value: datetime) -> str:
    """An aware datetime as the SPEC's output form: RFC 3339 UTC with ``Z``,
    a fraction only when it is not zero."""
    u = value.astimezone(timezone.utc)
    text = f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    if u.microsecond:
        text += f".{u.microsecond:06d}".rstrip("0")
    return text + "Z"


def instant_text(value: InstantLike, name: str, tz: TzLike | None = None) -> str:
    """An instant argument as the text sent to the server."""
    if isinstance(value, datetime):
        return format_instant(aware(value, name, tz))
    if isinstance(value, date):
        raise TypeError(
            f"{name}: a date is not an instant; pass a datetime or the text {value.isoformat()!r}"
        )
    if isinstance(value, str):
        return value
    raise TypeError(f"{name}: expected a datetime or a str, got {type(value).__name__}")


def parse_instant(text: str) -> datetime:
    """The server's RFC 3339 text as an aware UTC datetime."""
    return to_datetime(text, "instant")


def to_datetime(value: InstantLike, name: str, tz: TzLike | None = None) -> datetime:
    """An instant argument as an aware datetime, for in-process work: an
    aware datetime as it is, a naive one in ``tz``; text in the SPEC's forms
    (RFC 3339 with an offset; a naive date-time or a bare date read in
    ``tz``, UTC when none is given, as the server reads them)."""
    if isinstance(value, datetime):
        return aware(value, name, tz)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a datetime or a str, got {type(value).__name__}")
    m = _RFC3339.match(value)
    if m:
        y, mo, d, h, mi, s, frac, off = m.groups()
        micro = int((frac or "0")[:6].ljust(6, "0"))
        naive = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro)
        if off is None:
            return naive.replace(tzinfo=zone(tz) or timezone.utc)
        if off in ("Z", "z"):
            return naive.replace(tzinfo=timezone.utc)
        sign = -1 if off[0] == "-" else 1
        digits = off[1:].replace(":", "")
        offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        return naive.replace(tzinfo=timezone(sign * offset))
    m = _DATE.match(value)
    if m:
        y, mo, d = (int(g) for g in m.groups())
        return datetime(y, mo, d).replace(tzinfo=zone(tz) or timezone.utc)
    raise ValueError(
        f"{name}: {value!r} is not an instant (RFC 3339 such as 2025-06-01T10:05:00Z, "
        "a date-time, or a date)"
    )


def micros(value: datetime) -> int:
    """Microseconds since the Unix epoch of an aware datetime."""
    return (value - _UNIX) // _MICRO


def from_micros(us: int) -> datetime:
    """The aware UTC datetime ``us`` microseconds after the Unix epoch."""
    return _UNIX + timedelta(microseconds=us)


def duration_text(value: DurationLike, name: str) -> str:
    """A duration argument as the SPEC's text: a timedelta or seconds as
    ISO 8601 (``PT300S``, ``PT0.5S``), text as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a timedelta, seconds or a str, got bool")
    if isinstance(value, timedelta):
        us = value // _MICRO
    elif isinstance(value, (int, float)):
        us = round(value * 1_000_000)
    else:
        raise TypeError(
            f"{name}: expected a timedelta, seconds or a str, got {type(value).__name__}"
        )
    if us < 0:
        raise ValueError(f"{name}: {value!r} is negative")
    whole, frac = divmod(us, 1_000_000)
    text = f"PT{whole}"
    if frac:
        text += f".{frac:06d}".rstrip("0")
    return text + "S"


def seconds(value: DurationLike, name: str) -> float:
    """A duration argument in seconds (text in ISO 8601 ``PT…`` or short
    ``5m``/``1h``/``500ms`` form, fixed lengths only)."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a timedelta, seconds or a str, got bool")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{name}: {value!r} is negative")
        return float(value)
    if isinstance(value, str):
        return _text_seconds(value, name)
    raise TypeError(f"{name}: expected a timedelta, seconds or a str, got {type(value).__name__}")


_SHORT = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$")
_ISO = re.compile(
    r"P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?"
    r"(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)
_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _text_seconds(text: str, name: str) -> float:
    m = _SHORT.match(text)
    if m:
        return float(m.group(1)) * _UNIT[m.group(2)]
    m = _ISO.match(text.upper())
    if m and text.upper() not in ("P", "PT"):
        w, d, h, mi, s = (float(g) if g else 0.0 for g in m.groups())
        return w * 604800 + d * 86400 + h * 3600 + mi * 60 + s
    raise ValueError(
        f"{name}: {text!r} is not a fixed duration (seconds, a timedelta, 'PT5M' or '5m')"
    )
