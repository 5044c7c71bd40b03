"""The plugin's FastAPI app, mounted by Airflow's api-server under
``/gapless`` (SPEC §9, "The UI plugin").

Every route needs a user Airflow has authenticated (the UI's ``_token``
cookie, or ``Authorization: Bearer``), checked by Airflow's own
dependencies; the views of a DAG also need read access to that DAG. gapless
is asked with the ``gapless_default`` connection, read-only: the proxy
forwards GETs, and of the POSTs only the two questions that are POSTs
(``/v1/buckets``, ``/v1/coverage``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from html import escape
from importlib.resources import files
from typing import Any
from urllib.parse import quote
from zoneinfo import ZoneInfo

import anyio.to_thread
from airflow.api_fastapi.auth.managers.models.resource_details import DagAccessEntity
from airflow.api_fastapi.core_api.security import get_user, requires_access_dag
from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from .. import _time as t
from .. import _window
from . import render
from .upstream import Refused, Unavailable, Upstream
from .watches import Watch, rule_of_run_id, rules_of_events, task_watches

PREFIX = "/gapless"
# The views run no script; gapless's proxied page runs its own script from
# this origin only. Framing by Airflow's UI (same origin) only.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'self'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
# The POST routes of gapless that only ask (SPEC §4); every other POST writes.
READ_POSTS = frozenset({"v1/buckets", "v1/coverage"})
PAGE_FILES = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
TIMELINE_PARTS = render.TIMELINE_PARTS
RECENT_RUNS = 50

app = FastAPI(
    title="gapless coverage",
    docs_url=None,
    redoc_url=None,
    openapi_url=None,
    dependencies=[Depends(get_user)],
)
read_dag = Depends(requires_access_dag("GET", DagAccessEntity.RUN))


def _prefix(request: Request) -> str:
    """Where the app is mounted, as the browser sees it (Airflow's base
    path included)."""
    root = str(request.scope.get("root_path") or "").rstrip("/")
    return root or PREFIX


def _html(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers=HEADERS)


# ---- the views -------------------------------------------------------------


@app.get("/static/{name}", include_in_schema=False)
def static(name: str) -> Response:
    """The views' style sheet and the plugin's icon."""
    types = {"plugin.css": "text/css; charset=utf-8", "icon.svg": "image/svg+xml"}
    if name not in types:
        return _html(render.unavailable(f"no file {name!r}"), 404)
    body = files(__package__).joinpath("static").joinpath(name).read_bytes()
    return Response(body, media_type=types[name], headers=HEADERS)


@contextmanager
def _session() -> Iterator[Any]:
    from airflow.utils.session import create_session

    with create_session() as session:
        yield session


def _run_facts(dag_id: str, run_id: str) -> tuple[Any, dict[str, Any] | None, list[str]]:
    """The run (its key and data interval, detached), the DAG's serialized
    form, and the rules that fired the run."""
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from sqlalchemy import select

    with _session() as session:
        run = session.scalar(select(DagRun).where(DagRun.dag_id == dag_id, DagRun.run_id == run_id))
        if run is None:
            return None, None, []
        facts = _RunFacts(
            run.run_id, run.partition_key, run.data_interval_start, run.data_interval_end
        )
        rules = []
        rule = rule_of_run_id(run.run_id, run.partition_key)
        if rule:
            rules.append(rule)
        for r in rules_of_events(e.extra for e in run.consumed_asset_events):
            if r not in rules:
                rules.append(r)
        serialized = SerializedDagModel.get(dag_id, session=session)
        data = serialized.data if serialized is not None else None
    return facts, data, rules


@dataclass(frozen=True)
class _RunFacts:
    """What the window of a run needs, read inside the session (the ORM
    object is not used after it closes); named as a DAG run's attributes,
    so that ``_window.resolve`` reads it as the ``dag_run`` of a context."""

    run_id: str
    partition_key: str | None
    data_interval_start: Any
    data_interval_end: Any


def _task_window(watch: Watch, run: _RunFacts) -> tuple[str, str, str]:
    """The run's window as the watch's task takes it (``_window.resolve``)."""
    context = {
        "dag_run": run,
        "data_interval_start": run.data_interval_start,
        "data_interval_end": run.data_interval_end,
    }
    s, e, where = _window.resolve(
        context,
        watch.start,
        watch.end,
        every=watch.every,
        key_span=watch.key_span,
        tz=watch.tz,
        what=watch.source,
    )
    return t.text(s), t.text(e), f"from {where}"


def _rule_window(up: Upstream, rule: dict[str, Any], run: _RunFacts) -> tuple[str, str, str]:
    """The window of the firing that made the run (its key), else the
    rule's grid window starting at the key."""
    key = run.partition_key
    if not key:
        raise ValueError(f"rule {rule['rule']}: the run has no partition_key")
    firings = up.get("/v1/firings", rule=rule["rule"], newest="true", limit=100)["firings"]
    for f in firings:
        if f.get("key") == key:
            return f["window"]["start"], f["window"]["end"], f"the firing of key {key!r}"
    s, e = _window.partition_window(key, every=rule["every"], tz=rule["tz"])
    return t.text(s), t.text(e), f"key {key!r} on the rule's grid"


def _section(
    up: Upstream,
    prefix: str,
    asset: str,
    source: str,
    window: tuple[str, str, str],
    policy: str | None,
) -> str:
    start, end, where = window
    q = quote(asset, safe="")
    try:
        check = up.get(f"/v1/assets/{q}/coverage", start=start, end=end, policy=policy)
        buckets = up.get(f"/v1/assets/{q}/buckets", start=start, end=end, buckets=TIMELINE_PARTS)
    except Refused as e:
        return _missing_section(asset, source, f"{asset}: gapless answered: {e}")
    return render.coverage(prefix, asset, source, where, check, buckets)


def _missing_section(asset: str, source: str, line: str) -> str:
    return (
        f'<section class="watch" data-asset="{escape(asset)}"><h2>{escape(asset)}</h2>'
        f'<p class="source">{escape(source)}</p>{render.note(line)}</section>'
    )


@app.get("/dags/{dag_id}/runs/{run_id}", response_class=HTMLResponse, dependencies=[read_dag])
def dag_run_view(dag_id: str, run_id: str, request: Request) -> HTMLResponse:
    """The coverage of a DAG run's window for each asset its DAG waits on
    or records, and for the assets of the rules that fired it."""
    prefix = _prefix(request)
    title = f"Coverage of {dag_id} / {run_id}"
    run, data, rules = _run_facts(dag_id, run_id)
    if run is None:
        return _html(
            render.page(prefix, title, render.unavailable(f"no run {run_id!r} of DAG {dag_id!r}")),
            404,
        )
    watches = task_watches(data or {})
    if not watches and not rules:
        return _html(
            render.page(
                prefix,
                title,
                render.note(
                    f"DAG {dag_id!r} has no gapless sensor or record task, and no gapless rule fired this run."
                ),
            )
        )
    sections: list[str] = []
    try:
        with Upstream() as up:
            for name in rules:
                try:
                    rule = up.get(f"/v1/rules/{quote(name, safe='')}")
                    window = _rule_window(up, rule, run)
                except (Refused, ValueError) as e:
                    sections.append(_missing_section(name, f"rule {name}", f"rule {name}: {e}"))
                    continue
                for asset in rule["assets"]:
                    sections.append(
                        _section(up, prefix, asset, f"rule {name}", window, rule.get("policy"))
                    )
            for w in watches:
                try:
                    window = _task_window(w, run)
                except ValueError as e:
                    sections.append(_missing_section(w.asset, w.source, str(e)))
                    continue
                sections.append(_section(up, prefix, w.asset, w.source, window, w.policy))
    except Unavailable as e:
        return _html(render.page(prefix, title, render.unavailable(str(e))))
    return _html(render.page(prefix, title, "\n".join(sections)))


def _days_range(days: int, tz: str | None, now: datetime) -> tuple[str, str]:
    """The last ``days`` local days in ``tz``, today included."""
    zone = ZoneInfo(tz or "UTC")
    today = now.astimezone(zone).date()
    start = datetime.combine(today - timedelta(days=days - 1), time(0), zone)
    end = datetime.combine(today + timedelta(days=1), time(0), zone)
    return t.text(start), t.text(end)


def _dag_rules(dag_id: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The DAG's serialized form and the rules that fired its recent runs."""
    from airflow.models.dagrun import DagRun
    from airflow.models.serialized_dag import SerializedDagModel
    from sqlalchemy import select

    rules: list[str] = []
    with _session() as session:
        serialized = SerializedDagModel.get(dag_id, session=session)
        data = serialized.data if serialized is not None else None
        runs = session.scalars(
            select(DagRun)
            .where(DagRun.dag_id == dag_id)
            .order_by(DagRun.id.desc())
            .limit(RECENT_RUNS)
        ).all()
        for run in runs:
            found = [rule_of_run_id(run.run_id, run.partition_key)]
            found += rules_of_events(e.extra for e in run.consumed_asset_events)
            for r in found:
                if r and r not in rules:
                    rules.append(r)
    return data, rules


@app.get("/dags/{dag_id}", response_class=HTMLResponse, dependencies=[read_dag])
def dag_view(
    dag_id: str,
    request: Request,
    days: int = Query(7, ge=1, le=62, description="how many local days, today the last"),
) -> HTMLResponse:
    """The heat map of the last days' windows of each gapless asset of the
    DAG that has a grid (its task's ``every``), and of the rules that fired
    its runs."""
    prefix = _prefix(request)
    title = f"Coverage of {dag_id}, the last {days} days"
    data, rules = _dag_rules(dag_id)
    if data is None:
        return _html(render.page(prefix, title, render.unavailable(f"no DAG {dag_id!r}")), 404)
    watches = task_watches(data)
    if not watches and not rules:
        return _html(
            render.page(
                prefix,
                title,
                render.note(
                    f"DAG {dag_id!r} has no gapless sensor or record task, and no gapless rule fired its runs."
                ),
            )
        )
    now = datetime.now(timezone.utc)
    maps: list[str] = []
    try:
        with Upstream() as up:
            for name in rules:
                try:
                    rule = up.get(f"/v1/rules/{quote(name, safe='')}")
                    start, end = _days_range(days, rule.get("tz"), now)
                    answer = up.get(
                        f"/v1/rules/{quote(name, safe='')}/windows", start=start, end=end
                    )
                except Refused as e:
                    maps.append(_missing_section(name, f"rule {name}", f"rule {name}: {e}"))
                    continue
                link = answer["assets"][0] if len(answer.get("assets", [])) == 1 else None
                maps.append(
                    render.heat_map(
                        prefix, f"rule {name} ({', '.join(answer['assets'])})", answer, link
                    )
                )
            for w in watches:
                if not w.every:
                    maps.append(
                        _missing_section(
                            w.asset,
                            w.source,
                            (
                                f"{w.asset}: {w.source} has no every= (a grid), so its windows are not known"
                            ),
                        )
                    )
                    continue
                start, end = _days_range(days, w.tz, now)
                try:
                    answer = up.get(
                        f"/v1/assets/{quote(w.asset, safe='')}/windows",
                        start=start,
                        end=end,
                        every=w.every,
                        tz=w.tz,
                        policy=w.policy,
                    )
                except Refused as e:
                    maps.append(
                        _missing_section(w.asset, w.source, f"{w.asset}: gapless answered: {e}")
                    )
                    continue
                maps.append(render.heat_map(prefix, f"{w.asset} ({w.source})", answer, w.asset))
    except Unavailable as e:
        return _html(render.page(prefix, title, render.unavailable(str(e))))
    return _html(render.page(prefix, title, "\n".join(maps)))


# ---- gapless's own page, proxied -------------------------------------------


@app.get("/page", include_in_schema=False)
def page_slash(request: Request) -> RedirectResponse:
    return RedirectResponse(f"{_prefix(request)}/page/")


def _page_file(path: str) -> tuple[bytes, str | None]:
    with Upstream() as up:
        r = up.send("GET", path)
        if r.status_code != 200:
            raise Unavailable(
                f"gapless is unavailable: {up.url}{path} answered HTTP {r.status_code}"
            )
        return r.content, r.headers.get("content-type")


def _rewrite(text: str, old: str, new: str, what: str) -> str:
    """Replace the one ``old`` of gapless's page; a page that no longer has
    it exactly once cannot be proxied (said in one line, never half-run)."""
    if text.count(old) != 1:
        raise Unavailable(f"gapless's page cannot be shown through Airflow: its {what} changed")
    return text.replace(old, new)


@app.get("/page/", response_class=HTMLResponse, include_in_schema=False)
def page_index(request: Request) -> HTMLResponse:
    """gapless's page (SPEC §11), its files and API calls going through this app."""
    prefix = _prefix(request)
    try:
        body, _ = _page_file("/")
        html = body.decode()
        html = re.sub(r'(href|src)="/ui/', rf'\1="{prefix}/page/ui/', html)
    except Unavailable as e:
        return _html(render.page(prefix, "gapless", render.unavailable(str(e))))
    return _html(html)


@app.get("/page/ui/{name}", include_in_schema=False)
def page_ui(name: str, request: Request) -> Response:
    if name not in PAGE_FILES:
        return JSONResponse({"error": f"no file {name!r}"}, 404, headers=HEADERS)
    try:
        body, _ = _page_file(f"/ui/{name}")
        if name == "app.js":
            js = body.decode()
            # The page asks /v1/... of its own origin, without cookies: here
            # it asks the proxy, with Airflow's session cookie.
            js = _rewrite(
                js,
                "fetch(path + query, init)",
                "fetch(GAPLESS_API + path + query, init)",
                "API call",
            )
            js = _rewrite(
                js, 'credentials: "omit"', 'credentials: "same-origin"', "API call's credentials"
            )
            js = _rewrite(
                js,
                '"use strict";\n',
                f'"use strict";\nconst GAPLESS_API = {_js_string(_prefix(request) + "/api")};\n',
                "first line",
            )
            body = js.encode()
    except Unavailable as e:
        return JSONResponse({"error": str(e)}, 502, headers=HEADERS)
    return Response(body, media_type=PAGE_FILES[name], headers=HEADERS)


def _js_string(text: str) -> str:
    return json.dumps(text)


@app.api_route("/api/{path:path}", methods=["GET", "POST"], include_in_schema=False)
async def proxy(path: str, request: Request) -> Response:
    """gapless's API, read-only, with the connection's token: GETs under
    ``/v1/``, and the POSTs that only ask."""
    if not path.startswith("v1/"):
        return JSONResponse(
            {"error": f"/{path}: only gapless's /v1/ API is proxied"}, 404, headers=HEADERS
        )
    if request.method == "POST" and path not in READ_POSTS:
        return JSONResponse(
            {
                "error": f"POST /{path}: the plugin is read-only (POST only to /v1/buckets and /v1/coverage)"
            },
            405,
            headers={**HEADERS, "Allow": "GET"},
        )
    body = await request.body() if request.method == "POST" else None

    def forward() -> Response:
        try:
            with Upstream() as up:
                r = up.send(
                    request.method, f"/{path}", list(request.query_params.multi_items()), body
                )
        except Unavailable as e:
            return JSONResponse({"error": str(e)}, 502, headers=HEADERS)
        return Response(
            r.content, r.status_code, media_type=r.headers.get("content-type"), headers=HEADERS
        )

    return await anyio.to_thread.run_sync(forward)
