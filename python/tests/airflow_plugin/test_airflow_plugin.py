"""The provider's UI plugin (SPEC §9, "The UI plugin") in a real Airflow
3.3.2 api-server and a real Chromium: what its views show is compared with
what the gapless command line answers on the same ledger."""

from __future__ import annotations

import json
import subprocess
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import DAG_ID, RULE, screenshot, wait_for
from playwright.sync_api import Frame, Page, expect

RUN_ID = "plugin_run_0300"
KEY = "2025-06-14T03:00:00"
WINDOW = ("2025-06-14T03:00:00Z", "2025-06-14T04:00:00Z")


@pytest.fixture(scope="module")
def dag_run(airflow):
    r = airflow.request("POST", f"/api/v2/dags/{DAG_ID}/dagRuns",
                        json={"dag_run_id": RUN_ID, "logical_date": None, "partition_key": KEY})
    assert r.status_code in (200, 409), r.text
    return RUN_ID


def only_airflow(requests: list[str], airflow) -> None:
    """Every request the browser made went to Airflow's origin (a `blob:`
    URL is the page's own memory, named by the origin that made it)."""
    origin = urlsplit(airflow.url)
    netlocs = [urlsplit(u.removeprefix("blob:")) for u in requests]
    others = [u for u, n in zip(requests, netlocs, strict=True)
              if (n.scheme, n.netloc) != (origin.scheme, origin.netloc) and n.scheme not in ("data", "about")]
    assert any("/gapless/" in u for u in requests) and not others, f"requests beyond Airflow: {others}"


def plugin_frame(page: Page, path_part: str) -> Frame:
    """The plugin's iframe in an Airflow page, once its document loaded."""
    element = page.wait_for_selector(f"iframe[src*='{path_part}']", timeout=60_000)
    frame = element.content_frame()
    assert frame is not None
    frame.wait_for_load_state()
    return frame


def test_the_plugin_and_its_views_are_listed(airflow):
    plugins = airflow.request("GET", "/api/v2/plugins").json()["plugins"]
    ours = [p for p in plugins if p["name"] == "gapless"]
    assert len(ours) == 1, plugins
    p = ours[0]
    assert [a["url_prefix"] for a in p["fastapi_apps"]] == ["/gapless"]
    views = {(v["destination"], v["href"]) for v in p["external_views"]}
    assert views == {
        ("nav", "/gapless/page/"),
        ("dag", "/gapless/dags/{DAG_ID}"),
        ("dag_run", "/gapless/dags/{DAG_ID}/runs/{RUN_ID}"),
    }
    assert all(v["name"] == "Coverage" for v in p["external_views"])
    cli = subprocess.run([airflow.bin, "plugins", "-o", "json"], env=airflow.env, capture_output=True,
                         text=True, timeout=120, check=True)
    listed = json.loads(cli.stdout[cli.stdout.index("["):])
    assert any(x["name"] == "gapless" and len(x["external_views"]) == 3 for x in listed)


@pytest.mark.parametrize("path", [
    f"/gapless/dags/{DAG_ID}/runs/{RUN_ID}", f"/gapless/dags/{DAG_ID}", "/gapless/page/",
    "/gapless/page/ui/app.js", "/gapless/api/v1/assets", "/gapless/static/plugin.css",
])
def test_without_a_login_the_routes_are_refused(airflow, dag_run, path):
    anonymous = httpx.get(f"{airflow.url}{path}", timeout=30)
    assert anonymous.status_code in (401, 403), (anonymous.status_code, anonymous.text[:200])
    forged = httpx.get(f"{airflow.url}{path}", headers={"Authorization": "Bearer not-a-jwt"},
                       cookies={"_token": "not-a-jwt"}, timeout=30)
    assert forged.status_code in (401, 403), (forged.status_code, forged.text[:200])
    # With a login the same route answers (the API's answer: the assets).
    assert airflow.request("GET", path).status_code == 200


def test_the_proxy_is_read_only(airflow):
    r = airflow.request("POST", "/gapless/api/v1/events",
                        json={"asset": "orders", "id": "x", "start": "2030-01-01T00:00:00Z",
                              "end": "2030-01-01T01:00:00Z"})
    assert r.status_code == 405 and "read-only" in r.json()["error"]
    r = airflow.request("POST", "/gapless/api/v1/coverage",
                        json={"assets": ["orders"], "start": WINDOW[0], "end": WINDOW[1]})
    assert r.status_code == 200 and r.json()["covered_ratio"] == pytest.approx(50 / 60)


def test_the_dag_run_view_shows_the_window_as_check_does(airflow, gapless, dag_run, logged_in):
    page = logged_in.context.new_page()
    page.goto(f"{airflow.url}/dags/{DAG_ID}/runs/{dag_run}/plugin/gapless-dag-run")
    frame = plugin_frame(page, f"/gapless/dags/{DAG_ID}/runs/")
    sections = frame.locator("section.watch")
    expect(sections).to_have_count(2)
    for asset in ("orders", "orders_hourly"):
        check = gapless.json("check", asset, "--start", WINDOW[0], "--end", WINDOW[1])
        s = frame.locator(f"section.watch[data-asset='{asset}']")
        assert (s.get_attribute("data-start"), s.get_attribute("data-end")) == WINDOW
        assert float(s.get_attribute("data-ratio")) == check["covered_ratio"]
        assert s.get_attribute("data-complete") == str(check["complete"]).lower()
        rows = s.locator("table.gaps tbody tr")
        expect(rows).to_have_count(len(check["missing"]))
        for row, gap in zip(rows.all(), check["missing"], strict=True):
            assert (row.get_attribute("data-start"), row.get_attribute("data-end")) == (gap["start"], gap["end"])
            expect(row.locator("code")).to_have_text(f"{gap['start']}/{gap['end']}")
        # The timeline of exactly that window, and the link to the full page.
        svg = s.locator("svg.timeline")
        assert (svg.get_attribute("data-start"), svg.get_attribute("data-end")) == WINDOW
        assert s.locator("a.full").get_attribute("href").endswith(
            f"/gapless/page/#/asset/{asset}?start={WINDOW[0].replace(':', '%3A')}&end={WINDOW[1].replace(':', '%3A')}")
    orders = frame.locator("section.watch[data-asset='orders']")
    expect(orders.locator(".ratio strong")).to_have_text("83.33 %")
    expect(orders.locator("svg.timeline rect.missing")).not_to_have_count(0)
    expect(frame.locator("section.watch[data-asset='orders_hourly'] .nogaps")).to_have_text("No gaps.")
    screenshot(page, "airflow-dag-run.png")
    only_airflow(logged_in.requests, airflow)


def test_the_dag_view_shows_the_heat_map_of_the_last_days(airflow, gapless, dag_run, logged_in):
    page = logged_in.context.new_page()
    page.goto(f"{airflow.url}/dags/{DAG_ID}/plugin/gapless-dag")
    frame = plugin_frame(page, f"/gapless/dags/{DAG_ID}")
    maps = frame.locator("section.heatmap")
    expect(maps).to_have_count(2)
    ours = "section.heatmap[data-title='orders (task wait_orders)']"
    cells = frame.locator(ours).locator(".cell")
    expect(cells).to_have_count(7 * 24)
    first, last = cells.first, cells.last
    start, end = first.get_attribute("data-start"), last.get_attribute("data-end")
    windows = gapless.json("windows", "orders", "--start", start, "--end", end, "--every", "1h")["windows"]
    drawn = frame.eval_on_selector_all(
        f"{ours} .cell",
        "els => els.map(e => ({key: e.dataset.key, start: e.dataset.start, end: e.dataset.end,"
        " complete: e.dataset.complete === 'true', ratio: Number(e.dataset.ratio)}))")
    assert drawn == [{k: w[k] for k in ("key", "start", "end", "complete")} | {"ratio": w["covered_ratio"]}
                     for w in windows]
    states = {c["complete"] for c in drawn}, {c["ratio"] for c in drawn}
    assert True in states[0] and 0.0 in states[1] and any(0 < r < 1 for r in states[1])
    screenshot(page, "airflow-dag.png")
    only_airflow(logged_in.requests, airflow)


def test_the_coverage_entry_shows_the_gapless_page_through_airflow(airflow, logged_in):
    page = logged_in.context.new_page()
    page.goto(f"{airflow.url}/plugin/gapless-coverage")
    frame = plugin_frame(page, "/gapless/page/")
    frame.wait_for_selector(".pager-status[data-more='false']", state="attached", timeout=60_000)
    names = frame.eval_on_selector_all("#view table tbody tr", "rs => rs.map(r => r.innerText)")
    assert {"orders", "orders_hourly"} <= {n.split()[0] for n in names if n.strip()}, names
    assert frame.locator("#token-form").is_hidden()
    # Each row's history bar is drawn from one POST /v1/buckets, through the proxy too.
    for row in frame.locator("#view table tbody tr").all():
        expect(row.locator("[data-field=bar] svg")).to_have_count(1)
    assert any(u.endswith("/gapless/api/v1/buckets") for u in logged_in.requests)
    screenshot(page, "airflow-coverage.png")
    only_airflow(logged_in.requests, airflow)


def test_with_gapless_stopped_the_view_says_so_and_airflow_still_works(airflow, gapless, dag_run, logged_in):
    gapless.stop()
    try:
        page = logged_in.context.new_page()
        page.goto(f"{airflow.url}/dags/{DAG_ID}/runs/{dag_run}/plugin/gapless-dag-run")
        frame = plugin_frame(page, f"/gapless/dags/{DAG_ID}/runs/")
        line = frame.locator(".unavailable")
        expect(line).to_have_count(1)
        assert line.inner_text().startswith("gapless is unavailable: cannot reach http://127.0.0.1:")
        assert "\n" not in line.inner_text().strip()
        # Airflow's own pages and API are not affected.
        dag_page = logged_in.context.new_page()
        dag_page.goto(f"{airflow.url}/dags/{DAG_ID}")
        expect(dag_page.get_by_text(DAG_ID).first).to_be_visible(timeout=60_000)
        assert airflow.request("GET", f"/api/v2/dags/{DAG_ID}").status_code == 200
        r = airflow.request("GET", "/gapless/api/v1/assets")
        assert r.status_code == 502 and r.json()["error"].startswith("gapless is unavailable")
    finally:
        gapless.start()


def test_a_run_a_rule_fired_shows_the_rule_window(airflow, gapless, logged_in):
    """A run named as the deliverer's `dag_id` target names it
    (`gapless__<rule>__<key>__<generation>`): the view adds the rule's
    assets over the window of the firing with that key."""
    key = "2025-06-14T04:00:00"
    run_id = f"gapless__{RULE}__{key}__1"
    r = airflow.request("POST", f"/api/v2/dags/{DAG_ID}/dagRuns",
                        json={"dag_run_id": run_id, "logical_date": None, "partition_key": key})
    assert r.status_code in (200, 409), r.text
    firing = next(f for f in gapless.json("firings")["firings"] if f["key"] == key)
    window = (firing["window"]["start"], firing["window"]["end"])
    check = gapless.json("check", "orders", "--start", window[0], "--end", window[1])
    page = logged_in.context.new_page()
    page.goto(f"{airflow.url}/dags/{DAG_ID}/runs/{run_id}/plugin/gapless-dag-run")
    frame = plugin_frame(page, f"/gapless/dags/{DAG_ID}/runs/")
    sections = frame.locator("section.watch")
    expect(sections).to_have_count(3)
    rule = sections.first
    expect(rule.locator(".source")).to_contain_text(f"rule {RULE}")
    assert (rule.get_attribute("data-asset"), rule.get_attribute("data-start"), rule.get_attribute("data-end")) == (
        "orders", *window)
    assert float(rule.get_attribute("data-ratio")) == check["covered_ratio"] == 1.0
    # The DAG view now has the rule's heat map too.
    page.goto(f"{airflow.url}/dags/{DAG_ID}/plugin/gapless-dag")
    frame = plugin_frame(page, f"/gapless/dags/{DAG_ID}")
    expect(frame.locator(f"section.heatmap[data-title='rule {RULE} (orders)']")).to_have_count(1)
    only_airflow(logged_in.requests, airflow)


def test_a_run_of_the_asset_a_rule_delivers_to_shows_the_rule_window(airflow, gapless, logged_in):
    """The `asset_uri` target posts the firing as the asset event's
    `extra`: a run of a DAG scheduled on that asset shows the rule's assets
    over the firing's window, though the DAG has no gapless task."""
    uri, dag_id, key = "gapless://orders/rule", "plugin_rule_asset", "2025-06-14T04:00:00"
    assets = airflow.request("GET", "/api/v2/assets", params={"uri_pattern": uri}).json()["assets"]
    asset_id = next(a["id"] for a in assets if a["uri"] == uri)
    firing = next(f for f in gapless.json("firings")["firings"] if f["key"] == key)
    r = airflow.request("POST", "/api/v2/assets/events",
                        json={"asset_id": asset_id, "partition_key": key, "extra": firing})
    assert r.status_code == 200, r.text

    def the_run():
        runs = airflow.request("GET", f"/api/v2/dags/{dag_id}/dagRuns").json()["dag_runs"]
        return next((x["dag_run_id"] for x in runs if x.get("partition_key") == key), None)

    run_id = wait_for(f"the run of {dag_id} for {key}", the_run, 60, 0.5)
    page = logged_in.context.new_page()
    page.goto(f"{airflow.url}/dags/{dag_id}/runs/{run_id}/plugin/gapless-dag-run")
    frame = plugin_frame(page, f"/gapless/dags/{dag_id}/runs/")
    section = frame.locator("section.watch")
    expect(section).to_have_count(1)
    expect(section.locator(".source")).to_contain_text(f"rule {RULE}")
    assert (section.get_attribute("data-start"), section.get_attribute("data-end")) == (
        firing["window"]["start"], firing["window"]["end"])
    only_airflow(logged_in.requests, airflow)
