"""Instants and durations: Python values to the SPEC's text forms and back.

An instant given to the client is an aware :class:`datetime.datetime` (sent
as RFC 3339 UTC), or a :class:`str` in one of the SPEC's text forms (sent as
written: RFC 3339 with an offset, a naive date-time, a bare date; the
server reads the naive ones in the question's ``tz``). A naive ``datetime``
is refused unless a ``tz`` says which zone its wall-clock time is in.

The second half reads instants, durations, ISO 8601 intervals and grid
boundaries as the server reads them (SPEC §1, §2). It is the one reading of
text on this side: the client's arguments that are read before sending or
in-process (:func:`to_datetime`, :func:`seconds`) go through it, so text
the server would read is never read otherwise here; and the Airflow
provider (airflow-provider-gapless) reads asset events and partition
windows with it, so its names are kept stable. Every error there is a
:class:`ValueError` (or :class:`TypeError`) whose one-line message names
the input and the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

#: What the client takes for an instant.
InstantLike = datetime | str
#: What the client takes for a zone: an IANA name (``"Europe/Berlin"``) or a tzinfo.
TzLike = str | tzinfo
#: What the client takes for a duration: a :class:`timedelta`, seconds, or
#: the SPEC's text (``"PT5M"``, ``"5m"``).
DurationLike = timedelta | int | float | str

UTC = timezone.utc
_UNIX = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICRO = timedelta(microseconds=1)


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
    return read_instant(text, "instant")


def to_datetime(value: InstantLike, name: str, tz: TzLike | None = None) -> datetime:
    """An instant argument as an aware datetime, for in-process work: an
    aware datetime as it is, a naive one in ``tz`` (refused without one, as
    :func:`aware` says); text as the server reads it (:func:`read_instant`),
    so that text the server would read is never read otherwise here."""
    if isinstance(value, datetime):
        return aware(value, name, tz)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a datetime or a str, got {type(value).__name__}")
    return read_instant(value, name, tz)


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
    """A duration argument in seconds: text as the server reads it
    (:func:`duration`: ISO 8601 ``PT…`` or short ``5m``/``1h``/``500ms``),
    fixed lengths only (a day counts as 24 hours), zero allowed."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a timedelta, seconds or a str, got bool")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError(f"{name}: {value!r} is negative")
        return float(value)
    if isinstance(value, str):
        try:
            fixed = duration(value, name, allow_zero=True).fixed
        except ValueError:
            fixed = None
        if fixed is None:
            raise ValueError(
                f"{name}: {value!r} is not a fixed duration (seconds, a timedelta, 'PT5M' or '5m')"
            )
        return fixed.total_seconds()
    raise TypeError(f"{name}: expected a timedelta, seconds or a str, got {type(value).__name__}")


# -- the server's readings (SPEC §1, §2): the client's arguments, and work with no server

# The server's grammar (SPEC §2), ASCII digits only: a date, then a time
# after `T`, `t`, a space or (Dagster's hourly keys, `2025-06-14-10:00`) a
# `-`, seconds optional, a fraction after `.` or `,` only with seconds, and
# an offset `Z`, `±HH`, `±HHMM` or `±HH:MM` written right after the time.
_INSTANT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[Tt ]|-(?=\d{2}:))(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"([Zz]|[+-]\d{2}(?::\d{2}|\d{2})?)?",
    re.ASCII,
)
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
#: The first and the last instant (SPEC §1, §2).
FIRST = datetime(1, 1, 1, tzinfo=timezone.utc)
LAST = datetime(9999, 12, 30, 22, tzinfo=timezone.utc)


def zone_or_utc(tz: TzLike | None) -> tzinfo:
    """The tzinfo of ``tz`` (an IANA name or a tzinfo), UTC for None; an
    unknown name is a :class:`ValueError` naming it.

    >>> zone_or_utc("Europe/Berlin")
    zoneinfo.ZoneInfo(key='Europe/Berlin')
    """
    try:
        return zone(tz) or UTC
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"tz {tz!r}: not an IANA time zone name (such as 'Europe/Berlin')"
        ) from None


def local(naive: datetime, tz: TzLike | None) -> datetime:
    """Wall-clock time ``naive`` in ``tz`` (UTC when None) as an aware UTC
    datetime, as the server resolves it: a time in a DST gap moves forward
    by the gap, one in a fold is the earlier instant."""
    z = zone_or_utc(tz)
    if z is UTC:
        return naive.replace(tzinfo=UTC, fold=0)
    # PEP 495: fold=0 reads a time in a gap with the offset before the
    # transition (forward by the gap) and a time in a fold as the earlier.
    return naive.replace(tzinfo=z, fold=0).astimezone(UTC)


def start_of_day(d: date, tz: TzLike | None) -> datetime:
    """The first instant of local date ``d`` in ``tz`` (where midnight is
    skipped by a DST gap, the end of the gap), as aware UTC."""
    z = zone_or_utc(tz)
    first = local(datetime(d.year, d.month, d.day), z)
    wall = first.astimezone(z)
    if wall.date() == d and wall.hour == 0 and wall.minute == 0:
        return first
    # Midnight does not exist: the first instant whose local date is d lies
    # between the two readings of midnight; bisect on whole seconds.
    lo = datetime(d.year, d.month, d.day, tzinfo=z, fold=1).astimezone(UTC) - timedelta(days=1)
    hi = first
    while hi - lo > timedelta(seconds=1):
        mid = (lo + (hi - lo) // 2).replace(microsecond=0)
        if mid.astimezone(z).date() >= d:
            hi = mid
        else:
            lo = mid
    return hi


def read_instant(value: InstantLike | date, name: str, tz: TzLike | None = None) -> datetime:
    """An instant as the server reads it, as an aware UTC datetime: an aware
    datetime as it is; a naive datetime, naive text (``2025-06-14T10:05:00``,
    ``2025-06-14 10:05``) or a bare date (its first instant) as local time
    in ``tz`` (UTC when None); text with an offset as it says. Text is read
    in the server's grammar (SPEC §2): a fraction after ``.`` or ``,`` (at
    most a microsecond's digits but for zeros), ``-`` before the time as in
    Dagster's hourly keys, an offset ``Z``, ``±HH``, ``±HHMM`` or
    ``±HH:MM``; anything else, or an instant outside 0001-01-01T00:00:00Z to
    9999-12-30T22:00:00Z, is a :class:`ValueError`.

    >>> read_instant("2025-06-14T10:05:00+02:00", "start")
    datetime.datetime(2025, 6, 14, 8, 5, tzinfo=datetime.timezone.utc)
    >>> read_instant("2025-03-30", "start", "Europe/Berlin")
    datetime.datetime(2025, 3, 29, 23, 0, tzinfo=datetime.timezone.utc)
    >>> read_instant("2025-06-14T10:00:00,5", "start", "Europe/Berlin")
    datetime.datetime(2025, 6, 14, 8, 0, 0, 500000, tzinfo=datetime.timezone.utc)
    """
    if isinstance(value, datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            return value.astimezone(UTC)
        return local(value, tz)
    if isinstance(value, date):
        return start_of_day(value, tz)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a datetime or text, got {type(value).__name__}")
    text = value.strip()
    m = _INSTANT.fullmatch(text)
    if m:
        y, mo, d, h, mi, s, frac, off = m.groups()
        frac = frac or ""
        try:
            if frac[6:].strip("0"):
                raise ValueError(f"fraction .{frac} is finer than a microsecond")
            micro = int(frac[:6].ljust(6, "0"))
            naive = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), micro)
            offset = _offset(off)
        except ValueError as e:
            raise ValueError(f"{name}: {value!r} is not an instant ({e})") from None
        try:
            t = local(naive, tz) if offset is None else naive.replace(tzinfo=offset).astimezone(UTC)
        except OverflowError:
            t = None
        return _in_range(t, value, name)
    m = _DATE.fullmatch(text)
    if m:
        try:
            day = date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError as e:
            raise ValueError(f"{name}: {value!r} is not a date ({e})") from None
        try:
            t = start_of_day(day, tz)
        except OverflowError:
            t = None
        return _in_range(t, value, name)
    raise ValueError(
        f"{name}: {value!r} is not an instant (RFC 3339 such as 2025-06-14T10:05:00Z, "
        "a date-time or a date)"
    )


def _offset(off: str | None) -> tzinfo | None:
    """An offset as written (``Z``, ``±HH``, ``±HHMM``, ``±HH:MM``); None
    when there is none."""
    if off is None:
        return None
    if off in ("Z", "z"):
        return UTC
    hours, minutes = int(off[1:3]), int(off[-2:]) if len(off) > 3 else 0
    if hours > 23 or minutes > 59:
        raise ValueError(f"offset {off} is out of range (at most 23:59)")
    sign = -1 if off[0] == "-" else 1
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _in_range(t: datetime | None, value: str, name: str) -> datetime:
    """``t`` when it is an instant the server keeps (None: beyond what a
    datetime holds), else the error naming ``value``."""
    if t is None or not FIRST <= t <= LAST:
        raise ValueError(
            f"{name}: {value!r} is not an instant (outside 0001-01-01T00:00:00Z to "
            "9999-12-30T22:00:00Z)"
        )
    return t


@dataclass(frozen=True)
class Duration:
    """A length of time: calendar months and days (which follow a zone's
    calendar) and elapsed microseconds, as the server's durations are."""

    months: int = 0
    days: int = 0
    micros: int = 0

    @property
    def fixed(self) -> timedelta | None:
        """The length as a timedelta when it has no months (a day counts as
        24 hours), else None."""
        if self.months:
            return None
        return timedelta(days=self.days, microseconds=self.micros)

    def add_to(self, t: datetime, tz: TzLike | None = None, sign: int = 1) -> datetime:
        """``t + self`` (``sign=-1``: ``t - self``): months and days on the
        local calendar of ``tz`` (a local time landing in a DST gap moves
        forward, in a fold is the earlier instant), the rest elapsed."""
        t = t.astimezone(UTC)
        if self.months or self.days:
            z = zone_or_utc(tz)
            wall = t.astimezone(z).replace(tzinfo=None)
            months = wall.month - 1 + sign * self.months
            y, mo = wall.year + months // 12, months % 12 + 1
            day = min(wall.day, _days_in_month(y, mo))
            wall = wall.replace(year=y, month=mo, day=day) + timedelta(days=sign * self.days)
            t = local(wall, z)
        return t + timedelta(microseconds=sign * self.micros)


def _days_in_month(y: int, m: int) -> int:
    nxt = date(y + (m == 12), m % 12 + 1, 1)
    return (nxt - timedelta(days=1)).day


#: The longest duration the server keeps: 9999 years of months, days or time.
_MAX_MONTHS = 9999 * 12
_MAX_DAYS = 3_652_059
_MAX_MICROS = _MAX_DAYS * 86_400_000_000

#: The server's units, smallest first (a short form names them from the
#: largest to the smallest), each with its plural name and, for the units
#: of elapsed time, its length in microseconds; days, weeks, months and
#: years follow a zone's calendar and have none.
_UNITS = {
    "us": ("microseconds", 1),
    "ms": ("milliseconds", 1_000),
    "s": ("seconds", 1_000_000),
    "m": ("minutes", 60_000_000),
    "h": ("hours", 3_600_000_000),
    "d": ("days", None),
    "w": ("weeks", None),
    "mo": ("months", None),
    "y": ("years", None),
}
_RANK = {unit: i for i, unit in enumerate(_UNITS)}
#: The words of the short forms (lower case) and the unit each names.
_WORDS = {
    **dict.fromkeys(["y", "yr", "yrs", "year", "years"], "y"),
    **dict.fromkeys(["mo", "mos", "month", "months"], "mo"),
    **dict.fromkeys(["w", "wk", "wks", "week", "weeks"], "w"),
    **dict.fromkeys(["d", "day", "days"], "d"),
    **dict.fromkeys(["h", "hr", "hrs", "hour", "hours"], "h"),
    **dict.fromkeys(["m", "min", "mins", "minute", "minutes"], "m"),
    **dict.fromkeys(["s", "sec", "secs", "second", "seconds"], "s"),
    **dict.fromkeys(["ms", "msec", "msecs", "millisecond", "milliseconds"], "ms"),
    **dict.fromkeys(["us", "\u00b5s", "usec", "usecs", "microsecond", "microseconds"], "us"),
}
#: ISO 8601's designators before and after its `T`, in their order.
_ISO_DATE = {"Y": "y", "M": "mo", "W": "w", "D": "d"}
_ISO_TIME = {"H": "h", "M": "m", "S": "s"}


def duration(value: DurationLike, name: str, allow_zero: bool = False) -> Duration:
    """A duration as the server reads it: ISO 8601 (``PT5M``, ``PT0.5S``,
    ``P1D``, ``P1M``, ``P1DT2H``), short text (``5m``, ``1h30m``, ``1.5h``,
    ``1d``, ``1w``, ``1mo``, ``1y``, ``500ms``, ``2 days``), a timedelta, or
    seconds; positive (or zero, with ``allow_zero``) and at most 9999 years.
    Text is read in the server's grammar: a fraction (``.`` or ``,``) only
    on the last component and only of elapsed time, never finer than a
    microsecond; short units from the largest to the smallest, each once.

    >>> duration("1h30m", "span")
    Duration(months=0, days=0, micros=5400000000)
    >>> duration("P1M", "span")
    Duration(months=1, days=0, micros=0)
    """
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a duration, got bool")
    if isinstance(value, timedelta):
        d = Duration(0, 0, value // _MICRO)
    elif isinstance(value, (int, float)):
        d = Duration(0, 0, round(value * 1_000_000))
    elif isinstance(value, str):
        d = _duration_text(value.strip(), name)
    else:
        raise TypeError(
            f"{name}: expected a duration (text, timedelta or seconds), got {type(value).__name__}"
        )
    zero = d.months == 0 and d.days == 0 and d.micros == 0
    if d.months < 0 or d.days < 0 or d.micros < 0 or (zero and not allow_zero):
        raise ValueError(f"{name}: {value!r} is not a positive duration")
    if d.months > _MAX_MONTHS or d.days > _MAX_DAYS or d.micros > _MAX_MICROS:
        raise ValueError(f"{name}: {value!r} is not a duration (longer than 9999 years)")
    return d


class _Unreadable(Exception):
    """Text that is not in the grammar of durations at all."""


def _duration_text(t: str, name: str) -> Duration:
    if t.startswith("-"):
        raise ValueError(f"{name}: {t!r} is not a positive duration")
    body = t.removeprefix("+")
    acc = [0, 0, 0]  # months, days, microseconds
    try:
        if body[:1] in ("P", "p"):
            _iso_duration(body[1:], acc)
        else:
            _short_duration(body, acc)
    except _Unreadable:
        raise ValueError(
            f"{name}: {t!r} is not a duration (ISO 8601 such as PT5M or P1D, "
            "or short such as 5m, 1h, 1d, 1mo)"
        ) from None
    except ValueError as e:
        raise ValueError(f"{name}: {t!r} is not a duration ({e})") from None
    return Duration(*acc)


def _iso_duration(s: str, acc: list[int]) -> None:
    """ISO 8601 after its ``P``: ``[nY][nM][nW][nD][T[nH][nM][nS]]``."""
    if not s:
        raise _Unreadable
    i = min((s.find(c) for c in "Tt" if c in s), default=-1)
    date_part, time_part = (s, "") if i < 0 else (s[:i], s[i + 1 :])
    if i >= 0 and not time_part:
        raise _Unreadable
    fraction_seen = False
    for part, designators in ((date_part, _ISO_DATE), (time_part, _ISO_TIME)):
        order = list(designators)
        nxt = 0
        while part:
            if fraction_seen:
                raise ValueError("only the last component may have a fraction")
            whole, frac, part = _number(part)
            if not part:
                raise _Unreadable
            designator, part = part[0].upper(), part[1:]
            if designator not in order[nxt:]:
                if designator in order:
                    raise ValueError(f"designator {designator!r} is out of order or repeated")
                raise _Unreadable
            nxt = order.index(designator, nxt) + 1
            fraction_seen = frac is not None
            _add(acc, whole, frac, designators[designator])


def _short_duration(s: str, acc: list[int]) -> None:
    """Short forms: ``<number><unit>`` from the largest unit to the smallest,
    space allowed between and around them (``1h30m``, ``2 days``)."""
    if not s:
        raise _Unreadable
    last: str | None = None
    fraction_seen = False
    while s:
        if fraction_seen:
            raise ValueError("only the last component may have a fraction")
        whole, frac, s = _number(s)
        s = s.lstrip()
        end = 0
        while end < len(s) and s[end].isalpha():
            end += 1
        unit = _WORDS.get(s[:end].lower())
        if unit is None:
            raise _Unreadable
        if last is not None and _RANK[unit] >= _RANK[last]:
            raise ValueError(
                f"units must go from the largest to the smallest, each once: "
                f"{s[:end]!r} after {_UNITS[last][0]}"
            )
        last, fraction_seen = unit, frac is not None
        _add(acc, whole, frac, unit)
        s = s[end:].lstrip()


def _number(s: str) -> tuple[str, str | None, str]:
    """The ASCII digits at the start of ``s``, those of a fraction after
    ``.`` or ``,`` (None when there is none), and the rest."""

    def digits(t: str) -> int:
        n = 0
        while n < len(t) and "0" <= t[n] <= "9":
            n += 1
        return n

    n = digits(s)
    whole, rest, frac = s[:n], s[n:], None
    if rest[:1] in (".", ","):
        f = digits(rest[1:])
        frac, rest = rest[1 : 1 + f], rest[1 + f :]
        if not frac:
            raise _Unreadable
    if not whole:
        raise _Unreadable
    return whole, frac, rest


def _add(acc: list[int], whole: str, frac: str | None, unit: str) -> None:
    """``whole.frac`` of ``unit`` added to months, days, microseconds."""
    plural, per = _UNITS[unit]
    if len(whole.lstrip("0")) > 18:  # past any limit, before int() meets a huge text
        raise ValueError("longer than 9999 years")
    n = int(whole)
    if per is None:
        if frac is not None:
            raise ValueError(f"{whole}.{frac} {plural} cannot have a fraction; use a smaller unit")
        slot, factor = {"y": (0, 12), "mo": (0, 1), "w": (1, 7), "d": (1, 1)}[unit]
        acc[slot] += n * factor
        return
    micros = n * per
    if frac is not None:
        significant = frac.rstrip("0")
        scaled, scale = int(significant or "0") * per, 10 ** len(significant)
        if scaled % scale:
            raise ValueError(f"{whole}.{frac} {plural} is finer than a microsecond")
        micros += scaled // scale
    acc[2] += micros


def iso_duration(d: Duration) -> str:
    """A duration as ISO 8601 text (``PT1H``, ``P1D``, ``P1M``)."""
    out = "P"
    if d.months:
        out += f"{d.months}M"
    if d.days:
        out += f"{d.days}D"
    if d.micros:
        whole, frac = divmod(d.micros, 1_000_000)
        out += f"T{whole}" + (f".{frac:06d}".rstrip("0") if frac else "") + "S"
    return out


def looks_like_interval(key: str) -> bool:
    """Whether a partition key is an ISO 8601 interval rather than one instant."""
    return "/" in key or "--" in key


def interval(key: str, name: str, tz: TzLike | None = None) -> tuple[datetime, datetime]:
    """An ISO 8601 interval key as aware UTC ``(start, end)``: ``start/end``,
    ``start/duration``, ``duration/end`` (``--`` also separates); an end may
    be abbreviated from the start (``2025-06-14T10:00Z/10:05``,
    ``2025-06-14/06-15``). Naive instants are read in ``tz`` (UTC when
    None), calendar durations follow its calendar.

    >>> [format_instant(t) for t in interval("2025-06-14T10:00:00Z/PT5M", "partition_key")]
    ['2025-06-14T10:00:00Z', '2025-06-14T10:05:00Z']
    """
    t = key.strip()
    if "/" in t:
        a, b = t.split("/", 1)
        sep = "/"
    elif "--" in t:
        a, b = t.split("--", 1)
        sep = "--"
    else:
        raise ValueError(f"{name} {key!r}: not an interval (expected two parts separated by '/')")
    a, b = a.strip(), b.strip()
    if "/" in b:
        raise ValueError(f"{name} {key!r}: more than one '/'; an interval has two parts")
    if not a:
        raise ValueError(f"{name} {key!r}: the start is missing before {sep!r}")
    if not b:
        raise ValueError(f"{name} {key!r}: the end is missing after {sep!r}")
    a_dur, b_dur = a[:1] in "Pp", b[:1] in "Pp"
    if a_dur and b_dur:
        raise ValueError(f"{name} {key!r}: both parts are durations; one must be an instant")
    try:
        if a_dur:
            end = read_instant(b, "end", tz)
            start = duration(a, "duration").add_to(end, tz, -1)
        elif b_dur:
            start = read_instant(a, "start", tz)
            end = duration(b, "duration").add_to(start, tz)
        else:
            start = read_instant(a, "start", tz)
            end = read_instant(_full_end(a, b), "end", tz)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"{name} {key!r}: {e}") from None
    if start >= end:
        what = "empty" if start == end else "reversed"
        raise ValueError(
            f"{name} {key!r}: {what} interval [{format_instant(start)}, {format_instant(end)})"
        )
    return start, end


def _full_end(start: str, end: str) -> str:
    """An end abbreviated from the start (ISO 8601 §5.5.4.2) written out:
    it inherits the leading date components it leaves out, and the start's
    offset when it has a time but no offset."""
    if re.match(r"\d{4}-", end):
        full = end
    else:
        date_part, time_part = end, None
        if "T" in end or "t" in end:
            i = end.upper().index("T")
            date_part, time_part = end[:i], end[i + 1 :]
        elif ":" in end:
            date_part, time_part = "", end
        fields = date_part.split("-") if date_part else []
        sy, sm, sd = start[0:4], start[5:7], start[8:10]
        if len(fields) == 0:
            m, d = sm, sd
        elif len(fields) == 1:
            m, d = sm, fields[0]
        elif len(fields) == 2:
            m, d = fields
        else:
            raise ValueError(
                f"end {end!r}: expected an instant or an end abbreviated from the start"
            )
        full = f"{sy}-{m}-{d}" + (f"T{time_part}" if time_part is not None else "")
    if re.search(r"[Tt ]\d", full) and not re.search(r"([Zz]|[+-]\d{2}(:?\d{2})?)$", full):
        off = re.search(r"[Tt ][\d:.,]+([Zz]|[+-]\d{2}(:?\d{2})?)$", start)
        if off:
            full += off.group(1)
    return full


_GRID = re.compile(r"(\d+)(mo|m|h|d|w|y)$")
_GRID_LIMITS = {"m": 59, "h": 23, "d": 31, "w": 53, "mo": 12, "y": 9999}


def parse_grid(every: str) -> tuple[int, str]:
    """A grid's ``N`` and unit (``m``, ``h``, ``d``, ``w``, ``mo``, ``y``)."""
    m = _GRID.match(every.strip()) if isinstance(every, str) else None
    if not m:
        raise ValueError(f"every {every!r}: not a grid (such as 15m, 1h, 1d, 1w, 1mo, 1y)")
    n, unit = int(m.group(1)), m.group(2)
    if not 1 <= n <= _GRID_LIMITS[unit] or (unit == "mo" and 12 % n):
        raise ValueError(f"every {every!r}: {n} is out of range for unit {unit!r}")
    return n, unit


def next_boundary(t: datetime, every: str, tz: TzLike | None = None) -> datetime:
    """The first boundary of grid ``every`` in ``tz`` strictly after ``t``,
    with the boundaries a cron schedule would have in local time (SPEC §1).

    >>> format_instant(next_boundary(read_instant("2025-06-14T10:05:00Z", "t"), "1h"))
    '2025-06-14T11:00:00Z'
    """
    n, unit = parse_grid(every)
    z = zone_or_utc(tz)
    t = t.astimezone(UTC)
    if unit in ("m", "h"):
        # Walk whole UTC minutes: each local reading that is a boundary is
        # one (so a fold's repeated hour counts twice, a gap's never).
        u = t.replace(second=0, microsecond=0) + timedelta(minutes=1)
        for _ in range(60 * 24 * 2):
            w = u.astimezone(z)
            if w.second == 0 and (
                (unit == "m" and w.minute % n == 0)
                or (unit == "h" and w.minute == 0 and w.hour % n == 0)
            ):
                return u
            u += timedelta(minutes=1)
        raise ValueError(  # pragma: no cover
            f"every {every!r}: no boundary within two days of {format_instant(t)}"
        )
    d = t.astimezone(z).date()
    while True:
        d += timedelta(days=1)
        if unit == "d":
            ok = (d.day - 1) % n == 0
        elif unit == "w":
            ok = d.weekday() == 0 and (d.isocalendar()[1] - 1) % n == 0
        elif unit == "mo":
            ok = d.day == 1 and (d.month - 1) % n == 0
        else:
            ok = d.day == 1 and d.month == 1 and (n == 1 or d.year % n == 0)
        if ok:
            b = start_of_day(d, z)
            if b > t:
                return b


def window_from(start: datetime, every: str, tz: TzLike | None = None) -> tuple[datetime, datetime]:
    """The window of grid ``every`` that starts at ``start``; an error when
    ``start`` is not one of the grid's boundaries."""
    end = next_boundary(start, every, tz)
    if next_boundary(start - _MICRO, every, tz) != start.astimezone(UTC):
        raise ValueError(
            f"{format_instant(start)} is not the start of a window of grid {every} "
            f"in {tz_text(tz) or 'UTC'}"
        )
    return start.astimezone(UTC), end
