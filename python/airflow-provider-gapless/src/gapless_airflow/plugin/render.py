"""The plugin's views as HTML: server-side, no script, so that they work in
Airflow's iframe under a strict Content-Security-Policy and every fact is
in the DOM for tools and tests (``data-*`` as gapless's page, SPEC §11)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

TIMELINE_PARTS = 240


def page(prefix: str, title: str, body: str) -> str:
    """A whole document around ``body``."""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n"
        f'<link rel="stylesheet" href="{escape(prefix)}/static/plugin.css">\n'
        f"</head>\n<body>\n<h1>{escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def unavailable(line: str) -> str:
    """The one line a view shows instead of its content."""
    return f'<p class="unavailable" role="alert">{escape(line)}</p>'


def note(line: str) -> str:
    return f'<p class="note">{escape(line)}</p>'


def page_link(prefix: str, asset: str, start: str, end: str, text: str) -> str:
    """A link to the range on gapless's own page (proxied by the plugin)."""
    href = (
        f"{prefix}/page/#/asset/{quote(asset, safe='')}?{urlencode({'start': start, 'end': end})}"
    )
    return f'<a class="full" href="{escape(href)}">{escape(text)}</a>'


def percent(ratio: float) -> str:
    """``83.33 %``: two decimals, never rounded up to 100 % (a window with
    a gap is never shown as whole)."""
    hundredths = int(ratio * 10000)
    return f"{hundredths / 100:.2f} %"


def _length(start: str, end: str) -> str:
    seconds = int((_instant(end) - _instant(start)).total_seconds())
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{v}{u}" for v, u in ((days, "d"), (hours, "h"), (minutes, "m"), (secs, "s")) if v]
    return " ".join(parts) or "0s"


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def coverage(
    prefix: str,
    asset: str,
    source: str,
    where: str,
    check: Mapping[str, Any],
    buckets: Mapping[str, Any] | None,
) -> str:
    """One asset's section of the DAG run view: covered ratio, the gaps as
    a table (``check``'s ``missing`` as they are), the window's timeline,
    the link to the full page."""
    start, end = str(check["start"]), str(check["end"])
    ratio = float(check["covered_ratio"])
    complete = bool(check.get("complete"))
    state = "complete" if complete else "incomplete"
    rows = "".join(
        f'<tr data-start="{escape(g["start"])}" data-end="{escape(g["end"])}">'
        f"<td><code>{escape(g['start'])}/{escape(g['end'])}</code></td>"
        f"<td>{escape(_length(g['start'], g['end']))}</td></tr>"
        for g in check.get("missing", [])
    )
    count = int(check.get("missing_count", len(check.get("missing", []))))
    gaps = (
        f'<table class="gaps"><caption>{count} gap{"" if count == 1 else "s"}</caption>'
        f"<thead><tr><th>gap</th><th>length</th></tr></thead><tbody>{rows}</tbody></table>"
        if count
        else '<p class="nogaps">No gaps.</p>'
    )
    return (
        f'<section class="watch" data-asset="{escape(asset)}" data-start="{escape(start)}" '
        f'data-end="{escape(end)}" data-ratio="{ratio!r}" data-complete="{str(complete).lower()}">'
        f"<h2>{escape(asset)}</h2>"
        f'<p class="source">{escape(source)}; window <code>{escape(start)}/{escape(end)}</code> '
        f"({escape(where)})</p>"
        f'<p class="ratio"><strong>{percent(ratio)}</strong> covered; '
        f'<span class="state {state}">{state}</span> under policy '
        f"<code>{escape(str(check.get('policy', 'full')))}</code></p>"
        f"{timeline(buckets) if buckets else ''}{gaps}"
        f"<p>{page_link(prefix, asset, start, end, 'Open this window on the gapless page')}</p>"
        "</section>"
    )


def timeline(buckets: Mapping[str, Any]) -> str:
    """The window in equal parts as one SVG: each part a column split into
    its covered, retracted and missing shares."""
    parts = list(buckets.get("buckets", []))
    n = len(parts) or 1
    rects = []
    for i, b in enumerate(parts):
        total = (b["covered_us"] + b["missing_us"] + b["retracted_us"]) or 1
        y = 0.0
        for state in ("covered", "retracted", "missing"):
            h = 20.0 * b[f"{state}_us"] / total
            if h > 0:
                rects.append(
                    f'<rect class="{state}" x="{i}" y="{y:.3f}" width="1" height="{h:.3f}">'
                    f"<title>{escape(b['start'])} to {escape(b['end'])}: {state}</title></rect>"
                )
            y += h
    return (
        f'<svg class="timeline" role="img" shape-rendering="crispEdges" aria-label="timeline of {escape(str(buckets.get("start")))} '
        f'to {escape(str(buckets.get("end")))}" viewBox="0 0 {n} 20" preserveAspectRatio="none" '
        f'data-start="{escape(str(buckets.get("start")))}" data-end="{escape(str(buckets.get("end")))}">'
        f"{''.join(rects)}</svg>"
        f'<p class="axis"><span>{escape(str(buckets.get("start")))}</span>'
        f"<span>{escape(str(buckets.get('end')))}</span></p>"
    )


def heat_map(prefix: str, title: str, answer: Mapping[str, Any], link_asset: str | None) -> str:
    """Windows as a calendar heat map: a row per local day (per month for
    day grids), each cell a window labelled with its local start, ✓
    complete, ✗ nothing covered, else its covered percentage rounded down."""
    tz = ZoneInfo(str(answer.get("tz") or "UTC"))
    windows: Iterable[Mapping[str, Any]] = answer.get("windows", [])
    rows: dict[str, list[str]] = {}
    for w in windows:
        local = _instant(str(w["start"])).astimezone(tz)
        long_grid = (_instant(str(w["end"])) - _instant(str(w["start"]))).total_seconds() >= 86400
        row = local.strftime("%Y-%m") if long_grid else local.strftime("%Y-%m-%d")
        label = local.strftime("%d") if long_grid else local.strftime("%H:%M")
        ratio = float(w["covered_ratio"])
        complete = bool(w["complete"])
        mark = "✓" if complete else ("✗" if ratio == 0 else f"{int(ratio * 100)}%")
        cls = "complete" if complete else ("empty" if ratio == 0 else "partial")
        facts = f"{w['key']}: {w['start']} to {w['end']}, {percent(ratio)} covered, " + (
            "complete" if complete else "incomplete"
        )
        attrs = (
            f'class="cell {cls}" data-key="{escape(str(w["key"]))}" data-start="{escape(str(w["start"]))}" '
            f'data-end="{escape(str(w["end"]))}" data-complete="{str(complete).lower()}" '
            f'data-ratio="{ratio!r}" title="{escape(facts)}" aria-label="{escape(facts)}"'
        )
        inner = (
            f'<span class="label">{escape(label)}</span><span class="mark">{escape(mark)}</span>'
        )
        if link_asset is not None:
            href = (
                f"{prefix}/page/#/asset/{quote(link_asset, safe='')}?"
                f"{urlencode({'start': w['start'], 'end': w['end']})}"
            )
            rows.setdefault(row, []).append(f'<a {attrs} href="{escape(href)}">{inner}</a>')
        else:
            rows.setdefault(row, []).append(f"<span {attrs}>{inner}</span>")
    body = "".join(
        f'<div class="row"><span class="day">{escape(day)}</span>{"".join(cells)}</div>'
        for day, cells in rows.items()
    )
    return (
        f'<section class="heatmap" data-title="{escape(title)}">'
        f"<h2>{escape(title)}</h2>"
        f'<p class="source">grid <code>{escape(str(answer.get("every")))}</code> in '
        f"<code>{escape(str(answer.get('tz')))}</code>, policy "
        f"<code>{escape(str(answer.get('policy')))}</code></p>"
        f'<div class="map">{body or "<p>No windows in this range.</p>"}</div></section>'
    )
