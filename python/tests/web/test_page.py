"""The web page (SPEC §11) in a real Chromium, read from the DOM and the
accessibility tree and compared with what the command line answers on the
same ledger."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from urllib.parse import parse_qsl, quote, urlsplit

import pytest
from conftest import Server, gapless, gapless_json, make_demo, shot
from playwright.sync_api import Page, expect

DAY_START = "2025-06-14T00:00:00Z"
DAY_END = "2025-06-15T00:00:00Z"


def t(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def z(d: datetime) -> str:
    s = d.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if d.microsecond:
        s += f".{d.microsecond:06d}".rstrip("0")
    return s + "Z"


def open_timeline(page: Page, server: Server, asset: str, start: str, end: str) -> None:
    page.goto(f"{server.url}/#/asset/{quote(asset, safe='')}?start={start}&end={end}")
    settle(page)


def settle(page: Page) -> None:
    page.wait_for_selector("#timeline[aria-busy='false']")


def visible_range(page: Page) -> tuple[datetime, datetime]:
    box = page.locator("#timeline")
    return t(box.get_attribute("data-start")), t(box.get_attribute("data-end"))


def parts(page: Page, lane: str) -> list[dict]:
    return page.eval_on_selector_all(
        f"#timeline .lane.{lane} .part",
        "els => els.map(e => ({start: e.dataset.start, end: e.dataset.end, state: e.dataset.state,"
        " mixed: e.hasAttribute('data-mixed'), label: e.getAttribute('aria-label'),"
        " seq: e.dataset.eventSeq, id: e.dataset.eventId}))",
    )


def gap_states(db: str, gaps: list[dict]) -> list[str]:
    """Per gap, `retracted` when a retraction is the latest event there (the
    segments say so), else `missing`."""
    states = []
    for gap in gaps:
        segs = gapless_json(db, "segments", "orders", "--start", gap["start"], "--end", gap["end"])["segments"]
        states.append("retracted" if segs and all(s["kind"] == "retracted" for s in segs) else "missing")
    return states


def test_the_timeline_shows_the_demo_gaps_where_check_finds_them(demo, demo_db, page):
    check = gapless_json(demo_db, "check", "orders", "--start", DAY_START, "--end", DAY_END, ok=(1,))
    assert check["missing_count"] == 2
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    assert visible_range(page) == (t(DAY_START), t(DAY_END))

    # The gap table: one row per gap of check, with its ISO range.
    rows = page.locator("#gap-table tbody tr")
    expect(rows).to_have_count(check["missing_count"])
    for row, gap in zip(rows.all(), check["missing"], strict=False):
        assert (row.get_attribute("data-start"), row.get_attribute("data-end")) == (gap["start"], gap["end"])
        expect(row.locator("code")).to_have_text(f"{gap['start']}/{gap['end']}")

    # The picture: each gap drawn in its state, the buckets wholly inside
    # it as one part, less than a bucket short of each end (buckets cut
    # the range where the width says; the one holding an end is mixed).
    drawn = parts(page, "buckets")
    n = page.evaluate("Math.floor(document.querySelector('#timeline').clientWidth)")
    bucket = (t(DAY_END) - t(DAY_START)) / n
    for gap, state in zip(check["missing"], gap_states(demo_db, check["missing"]), strict=False):
        whole = [p for p in drawn if p["state"] == state and not p["mixed"]]
        assert len(whole) == 1, (state, whole)
        assert t(gap["start"]) <= t(whole[0]["start"]) <= t(gap["start"]) + bucket
        assert t(gap["end"]) - bucket <= t(whole[0]["end"]) <= t(gap["end"])
    assert {"missing", "retracted"} == {p["state"] for p in drawn if not p["mixed"]} - {"covered"}

    # A bucket of mixed states is a column of its shares, each named.
    answer = gapless_json(demo_db, "buckets", "orders", "--start", DAY_START, "--end", DAY_END, "--buckets", str(n))
    by_start = {b["start"]: b for b in answer["buckets"]}
    mixed = [p for p in drawn if p["mixed"]]
    assert mixed, "the gaps' ends fall inside buckets at this width"
    for p in mixed:
        b = by_start[p["start"]]
        assert b["end"] == p["end"]
        share = b[f"{p['state']}_us"] / (t(b["end"]) - t(b["start"])).total_seconds() / 1e6
        assert p["label"].startswith(f"partly {p['state']}: {100 * share:.2f}% of {b['start']} to {b['end']}")

    # The totals are the buckets route's (the command line's) for the range.
    totals = gapless_json(demo_db, "buckets", "orders", "--start", DAY_START, "--end", DAY_END, "--buckets", "1")
    summary = page.locator("#timeline-summary").inner_text()
    assert f"missing {100 * totals['missing_us'] / 86_400e6:.2f}%" in summary
    assert f"retracted {100 * totals['retracted_us'] / 86_400e6:.2f}%" in summary
    shot(page, "timeline")


def test_at_fine_zoom_each_part_names_its_segment_and_event(demo, demo_db, page):
    start, end = "2025-06-14T16:50:00Z", "2025-06-14T17:40:00Z"
    segments = gapless_json(demo_db, "segments", "orders", "--start", start, "--end", end)["segments"]
    events = {e["seq"]: e for e in gapless_json(demo_db, "events", "orders", "--start", start, "--end", end)["events"]}
    open_timeline(page, demo, "orders", start, end)
    drawn = parts(page, "segments")
    assert [(p["start"], p["end"]) for p in drawn] == [(s["start"], s["end"]) for s in segments]
    for p, s in zip(drawn, segments, strict=False):
        assert p["state"] == ("retracted" if s["kind"] == "retracted" else "covered")
        assert p["seq"] == str(s["event"]["seq"]) and p["id"] == s["event"]["id"]
        assert f"event {s['event']['id']} (seq {s['event']['seq']})" in p["label"]
        extra = events[s["event"]["seq"]]["extra"]
        if extra is not None:
            assert json.dumps(extra, separators=(",", ":")) in p["label"]

    # Where no event covers the time, the lane says so: the lost batches.
    lost_start, lost_end = "2025-06-14T03:00:00Z", "2025-06-14T03:30:00Z"
    check = gapless_json(demo_db, "check", "orders", "--start", lost_start, "--end", lost_end, ok=(1,))
    open_timeline(page, demo, "orders", lost_start, lost_end)
    missing = [(p["start"], p["end"]) for p in parts(page, "segments") if p["state"] == "missing"]
    assert missing == [(g["start"], g["end"]) for g in check["missing"]]
    exact = [(p["start"], p["end"]) for p in parts(page, "buckets") if p["state"] == "missing"]
    assert exact == missing


def test_keys_zoom_around_the_centre_and_pan(demo, demo_db, page):
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    page.focus("#timeline")
    s0, e0 = visible_range(page)
    span = e0 - s0

    page.keyboard.press("+")
    settle(page)
    assert visible_range(page) == (s0 + span / 4, e0 - span / 4)

    page.keyboard.press("ArrowRight")
    settle(page)
    assert visible_range(page) == (s0 + span / 4 + span / 8, e0 - span / 4 + span / 8)

    page.keyboard.press("ArrowLeft")
    page.keyboard.press("-")
    settle(page)
    assert visible_range(page) == (s0, e0)

    page.keyboard.press("Shift+ArrowLeft")
    settle(page)
    assert visible_range(page) == (s0 - span, e0 - span)
    # The visible range is in the address too (a link to this view).
    assert z(s0 - span) in page.url and z(e0 - span) in page.url

    # 0 fits the asset's covered extent, as `asset show` gives it.
    shown = gapless_json(demo_db, "asset", "show", "orders")
    page.keyboard.press("0")
    settle(page)
    assert visible_range(page) == (t(shown["first_covered"]), t(shown["last_covered"]))


def test_the_wheel_zooms_around_the_pointer_and_dragging_pans(demo, page):
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    box = page.locator("#timeline svg").bounding_box()
    s0, e0 = visible_range(page)
    span = e0 - s0
    x = box["x"] + box["width"] / 4
    under = s0 + span * ((x - box["x"]) / box["width"])

    page.mouse.move(x, box["y"] + 30)
    page.mouse.wheel(0, -200)
    settle(page)
    s1, e1 = visible_range(page)
    assert e1 - s1 < span
    # The instant under the pointer stays under it (to a pixel: the mouse
    # moves to whole pixels).
    still = s1 + (e1 - s1) * ((x - box["x"]) / box["width"])
    assert abs(still - under) <= (e1 - s1) / box["width"]

    page.mouse.wheel(0, 400)
    settle(page)
    s2, e2 = visible_range(page)
    assert e2 - s2 > e1 - s1

    # Drag 200 px to the left: the view moves right by 200 px of time.
    page.mouse.move(x + 300, box["y"] + 30)
    page.mouse.down()
    page.mouse.move(x + 200, box["y"] + 30, steps=4)
    page.mouse.move(x + 100, box["y"] + 30, steps=4)
    page.mouse.up()
    settle(page)
    s3, e3 = visible_range(page)
    shift = (e2 - s2) * (200 / box["width"])
    assert abs((s3 - s2) - shift) <= (e2 - s2) / box["width"]
    assert e3 - s3 == e2 - s2


def test_hover_and_focus_name_start_end_and_length(demo, demo_db, page):
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    check = gapless_json(demo_db, "check", "orders", "--start", DAY_START, "--end", DAY_END, ok=(1,))
    gap = check["missing"][0]
    seconds = (t(gap["end"]) - t(gap["start"])).total_seconds()
    # Zoom to the gap with the range form: its part is then exact.
    page.fill("#range-start", z(t(gap["start"]) - timedelta(minutes=10)))
    page.fill("#range-end", z(t(gap["end"]) + timedelta(minutes=10)))
    page.click("form.controls button[type=submit]")
    settle(page)
    missing = page.locator("#timeline .lane.buckets .part[data-state='missing']")
    expect(missing).to_have_count(1)
    missing.hover()
    tip = page.locator("#tooltip")
    expect(tip).to_be_visible()
    for words in (gap["start"], gap["end"], f"({seconds:g} s)", "missing"):
        expect(tip).to_contain_text(words)

    # The keyboard: Tab from the timeline reaches the parts, each named.
    page.focus("#timeline")
    named = []
    for _ in range(3):
        page.keyboard.press("Tab")
        named.append(page.evaluate("document.activeElement.getAttribute('aria-label')"))
    assert any(gap["start"] in n and gap["end"] in n and f"({seconds:g} s)" in n for n in named), named
    expect(tip).to_be_visible()
    # The accessibility tree names them too.
    assert page.get_by_role("img", name=f"missing from {gap['start']} to {gap['end']}", exact=False).count() >= 1


def test_a_gap_range_copies_as_iso(demo, page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    row = page.locator("#gap-table tbody tr").first
    row.get_by_role("button", name="copy").click()
    expect(row.get_by_role("button")).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{row.get_attribute('data-start')}/{row.get_attribute('data-end')}"


def test_assets_show_frontier_ratios_and_filter(demo, demo_db, page):
    listed = gapless_json(demo_db, "assets")["assets"]
    page.goto(demo.url + "/")
    rows = page.locator("#assets tbody tr")
    expect(rows).to_have_count(len(listed))
    for a in listed:
        row = page.locator(f"#assets tbody tr[data-asset='{a['asset']}']")
        frontier = gapless_json(demo_db, "frontier", a["asset"])["frontier"]
        expect(row.locator("[data-field=frontier]")).to_have_text(frontier)
        expect(row.locator("[data-field=last_covered]")).to_have_text(a["last_covered"])
        expect(row.locator("[data-field=last_received]")).to_have_text(a["last_received"])
        # The shares of the day and the week up to now: the page's "now"
        # is read from the cell, the share asked of the command line.
        for field, days in (("day", 1), ("week", 7)):
            cell = row.locator(f"[data-field={field}]")
            expect(cell).to_have_attribute("data-ratio", re.compile(r"."))
            start, end = t(cell.get_attribute("data-start")), t(cell.get_attribute("data-end"))
            assert end - start == timedelta(days=days)
            assert abs(end - datetime.now(timezone.utc)) < timedelta(minutes=5)
            ratio = gapless_json(demo_db, "check", a["asset"], "--start", z(start), "--end", z(end),
                                 ok=(0, 1))["covered_ratio"]
            assert float(cell.get_attribute("data-ratio")) == ratio
        bar = row.locator("[data-field=bar] svg")
        expect(bar).to_have_count(1)
        assert row.locator("[data-field=bar] .part").count() > 0
    shot(page, "assets")

    # The filter asks the server for the names that contain what is typed
    # (case-sensitive).
    page.fill("#asset-filter", "ord")
    expect(rows).to_have_count(len([a for a in listed if "ord" in a["asset"]]))
    page.fill("#asset-filter", "ORD")
    expect(rows).to_have_count(0)
    expect(page.locator("#view .pager-status")).to_have_text("No assets.")
    page.fill("#asset-filter", "")
    expect(rows).to_have_count(len(listed))


def heat_cells(page: Page) -> list[dict]:
    return page.eval_on_selector_all(
        "#heatmap td.cell",
        "els => els.map(e => ({key: e.dataset.key, start: e.dataset.start, end: e.dataset.end,"
        " complete: e.dataset.complete === 'true', label: e.dataset.label,"
        " row: e.closest('tr').dataset.row}))",
    )


def expected_cells(answer: dict) -> list[tuple]:
    return [(w["key"], w["start"], w["end"], w["complete"]) for w in answer["windows"]]


def test_the_heat_map_is_the_windows_answer_with_berlin_folds(demo, demo_db, page):
    args = ("--start", "2025-10-25", "--end", "2025-10-28", "--every", "1h", "--tz", "Europe/Berlin")
    answer = gapless_json(demo_db, "windows", "clicks", *args)
    page.goto(f"{demo.url}/#/windows/clicks?start=2025-10-25&end=2025-10-28&every=1h&tz=Europe/Berlin&policy=full")
    page.wait_for_selector("#heatmap td.cell")
    cells = heat_cells(page)
    assert [(c["key"], c["start"], c["end"], c["complete"]) for c in cells] == expected_cells(answer)
    # The fall-back day has 25 hours: two cells for 02:00.
    fall = [c for c in cells if "2025-10-26" in c["row"]]
    assert len(fall) == 25
    assert [c["label"] for c in fall if c["label"].startswith("02:00")] == ["02:00", "02:00 (2nd)"]
    # Each cell's tooltip names key, start, end and ratio.
    first = page.locator("#heatmap td.cell[data-label='02:00 (2nd)']")
    first.hover()
    second = answer["windows"][[c["label"] for c in cells].index("02:00 (2nd)")]
    for words in (second["key"], second["start"], second["end"], "not complete" if not second["complete"] else "complete"):
        expect(page.locator("#tooltip")).to_contain_text(words)
    shot(page, "windows")

    # The keyboard: one tab stop, the arrows move, Enter opens the window.
    page.locator("#heatmap td.cell").first.focus()
    focused = "document.activeElement.dataset.key"
    page.keyboard.press("ArrowRight")
    assert page.evaluate(focused) == cells[1]["key"]
    page.keyboard.press("ArrowDown")
    assert page.evaluate(focused) == [c for c in cells if c["row"] == cells[24]["row"]][1]["key"]
    page.keyboard.press("End")
    assert page.evaluate(focused) == fall[-1]["key"]
    assert page.locator("#heatmap td.cell[tabindex='0']").count() == 1
    page.keyboard.press("Enter")
    settle(page)
    assert visible_range(page) == (t(fall[-1]["start"]), t(fall[-1]["end"]))


def test_the_heat_map_of_spring_forward_and_of_a_day_grid(demo, demo_db, page):
    args = ("--start", "2025-03-30", "--end", "2025-03-31", "--every", "1h", "--tz", "Europe/Berlin",
            "--policy", "ratio>=0.5")
    answer = gapless_json(demo_db, "windows", "clicks", *args)
    page.goto(f"{demo.url}/#/windows/clicks?start=2025-03-30&end=2025-03-31&every=1h&tz=Europe/Berlin"
              f"&policy={quote('ratio>=0.5')}")
    page.wait_for_selector("#heatmap td.cell")
    cells = heat_cells(page)
    assert [(c["key"], c["start"], c["end"], c["complete"]) for c in cells] == expected_cells(answer)
    assert len(cells) == 23 and "02:00" not in [c["label"] for c in cells]

    answer = gapless_json(demo_db, "windows", "clicks", "--start", "2025-03-01", "--end", "2025-11-01",
                          "--every", "1d", "--tz", "Europe/Berlin")
    page.goto(f"{demo.url}/#/windows/clicks?start=2025-03-01&end=2025-11-01&every=1d&tz=Europe/Berlin&policy=full")
    page.wait_for_selector("#heatmap td.cell")
    cells = heat_cells(page)
    assert [(c["key"], c["start"], c["end"], c["complete"]) for c in cells] == expected_cells(answer)
    # One row a month, a cell a day of it.
    rows = page.locator("#heatmap tr")
    expect(rows).to_have_count(8)
    assert [c["label"] for c in cells if c["row"] == "2025-10"] == [f"{d:02d}" for d in range(1, 32)]


def test_the_windows_view_picks_its_asset_by_name(demo, demo_db, page):
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url))
    # Without an asset: the first by name, read as one row of the assets route.
    first = gapless_json(demo_db, "assets", "--limit", "1")["assets"][0]
    page.goto(f"{demo.url}/#/windows/")
    page.wait_for_selector("#heatmap td.cell")
    assert page.locator("#heatmap").get_attribute("data-asset") == first["asset"]
    expect(page.locator("#w-asset")).to_have_value(first["asset"])
    assert [dict(parse_qsl(urlsplit(u).query)) for u in sent if urlsplit(u).path == "/v1/assets"] == [{"limit": "1"}]
    # Typing suggests the names that start with it, from the server.
    page.locator("#w-asset").fill("or")
    options = page.locator("#w-assets option")
    expect(options).to_have_count(1)
    assert options.first.get_attribute("value") == "orders"
    assert {"prefix": "or", "limit": "20"} in [dict(parse_qsl(urlsplit(u).query)) for u in sent
                                                if urlsplit(u).path == "/v1/assets"]
    page.locator("#w-asset").fill("orders")
    page.click("form.controls button[type=submit]")
    expect(page.locator("#heatmap[data-asset='orders']")).to_have_count(1)


def test_the_rules_view_is_the_rules_and_their_firings(demo, demo_db, page):
    rules = gapless_json(demo_db, "rules")["rules"]
    page.goto(f"{demo.url}/#/rules")
    sections = page.locator("section.rule")
    expect(sections).to_have_count(len(rules))
    for rule in rules:
        section = page.locator(f"section.rule[data-rule='{rule['rule']}']")
        firings = gapless_json(demo_db, "firings", "--rule", rule["rule"])["firings"]
        rows = section.locator("table.firings tbody tr")
        expect(rows).to_have_count(min(100, len(firings)))
        shown = rows.evaluate_all(
            "rs => rs.map(r => [Number(r.dataset.seq), r.dataset.kind, r.dataset.key,"
            " Number(r.dataset.generation), r.dataset.delivery, r.dataset.start, r.dataset.end])")
        newest = sorted(firings, key=lambda f: f["seq"], reverse=True)[:100]
        assert shown == [[f["seq"], f["kind"], f["key"], f["generation"], f["delivery"]["state"],
                          f["window"]["start"], f["window"]["end"]] for f in newest]
        assert "incomplete" in [row[1] for row in shown]
    shot(page, "rules")


def test_the_rules_view_shows_a_rules_windows(demo, demo_db, page):
    (rule,) = gapless_json(demo_db, "rules")["rules"]
    page.goto(f"{demo.url}/#/rules?start={DAY_START}&end={DAY_END}")
    section = page.locator(f"section.rule[data-rule='{rule['rule']}']")
    section.locator("table.firings").wait_for()
    answer = gapless_json(demo_db, "rule", "windows", rule["rule"], "--start", DAY_START, "--end", DAY_END)
    assert answer["windows"], "the rule has windows in the range"
    cells = section.locator("td.cell").evaluate_all(
        "els => els.map(e => [e.dataset.key, e.dataset.start, e.dataset.end, e.dataset.complete === 'true'])")
    assert [tuple(c) for c in cells] == expected_cells(answer)
    # Without a range: the windows up to the latest firing's window.
    page.goto(f"{demo.url}/#/rules")
    section.locator("td.cell").first.wait_for()
    firings = gapless_json(demo_db, "firings", "--rule", rule["rule"])["firings"]
    latest = max(t(f["window"]["end"]) for f in firings)
    ends = section.locator("td.cell").evaluate_all("els => els.map(e => e.dataset.end)")
    assert t(ends[-1]) == latest


def test_an_api_error_is_one_line_on_the_page(demo, demo_db, page):
    said = gapless(demo_db, "check", "ordres", "--start", DAY_START, "--end", DAY_END, ok=(2,)).stderr.strip()
    page.goto(f"{demo.url}/#/asset/ordres")
    line = page.locator("#error")
    expect(line).to_be_visible()
    message = line.inner_text()
    assert "\n" not in message and message in said, (message, said)


READ_TOKEN = "page-reader-0123456789abcdef"


@pytest.fixture
def guarded(tmp_path) -> Server:
    """A server with one read token, on a ledger of its own."""
    db = str(tmp_path / "guarded.db")
    make_demo(db)
    tokens = f'[[token]]\nsecret = "{READ_TOKEN}"\nscopes = ["read"]\n'
    server = Server(db, env={"GAPLESS_TOKENS": tokens}).start()
    yield server
    server.stop()


def test_with_tokens_the_page_asks_for_one_and_keeps_it_in_the_tab(guarded, browser):
    context = browser.new_context()
    page = context.new_page()
    sent = []
    page.on("request", lambda r: sent.append((r.url, r.headers.get("authorization"))))
    page.goto(guarded.url + "/")
    form = page.locator("#token-form")
    expect(form).to_be_visible()
    expect(page.locator("#assets")).to_have_count(0)

    page.get_by_label("Read token").fill(READ_TOKEN)
    page.get_by_role("button", name="Use this token").click()
    expect(page.locator("#assets tbody tr[data-asset='orders']")).to_have_count(1)
    expect(form).to_be_hidden()
    assert page.evaluate("sessionStorage.getItem('gapless.token')") == READ_TOKEN
    assert page.evaluate("localStorage.length") == 0
    assert page.evaluate("document.cookie") == ""
    assert context.cookies() == []
    api_calls = [(u, a) for u, a in sent if "/v1/" in u]
    assert api_calls and api_calls[-1][1] == f"Bearer {READ_TOKEN}"

    # The tab keeps it across a reload; another tab (a new context) asks again.
    page.reload()
    expect(page.locator("#assets tbody tr[data-asset='orders']")).to_have_count(1)
    other = browser.new_context().new_page()
    other.goto(guarded.url + "/")
    expect(other.locator("#token-form")).to_be_visible()

    # A wrong token is refused and asked for again, not kept.
    page.evaluate("sessionStorage.setItem('gapless.token', 'wrong-token-0123456789')")
    page.reload()
    expect(form).to_be_visible()
    assert page.evaluate("sessionStorage.getItem('gapless.token')") is None
    context.close()
    other.context.close()


def test_coverage_is_drawn_from_one_buckets_request_a_redraw(demo, page):
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url))
    open_timeline(page, demo, "orders", DAY_START, DAY_END)
    width = page.evaluate("Math.floor(document.querySelector('#timeline').clientWidth)")

    def asked(route: str) -> list[dict]:
        return [dict(parse_qsl(urlsplit(u).query)) for u in sent if urlsplit(u).path.endswith(f"/{route}")]

    assert [q["buckets"] for q in asked("buckets")] == [str(width)]
    # The day holds more than 200 segments: no event is read.
    assert asked("events") == []

    sent.clear()
    page.focus("#timeline")
    page.keyboard.press("+")
    settle(page)
    start, end = visible_range(page)
    assert [(q["start"], q["end"], q["buckets"]) for q in asked("buckets")] == [(z(start), z(end), str(width))]

    # At fine zoom the events of the visible range only, for their names.
    sent.clear()
    open_timeline(page, demo, "orders", "2025-06-14T03:00:00Z", "2025-06-14T03:30:00Z")
    assert len(asked("buckets")) == 1
    assert [(q["start"], q["end"]) for q in asked("events")] == [("2025-06-14T03:00:00Z", "2025-06-14T03:30:00Z")]


def test_a_pruned_range_draws_its_coverage_without_events(tmp_path, page):
    # Two hours of quarters, one retracted, then the first hour pruned: its
    # segments name no event, and the lane says why instead of failing.
    db = str(tmp_path / "pruned.db")
    lines = [
        json.dumps({"asset": "orders", "id": f"q{i}", "start": z(t(DAY_START) + timedelta(minutes=15 * i)),
                    "end": z(t(DAY_START) + timedelta(minutes=15 * (i + 1)))})
        for i in range(8)
    ]
    gapless(db, "ingest", "-", input="\n".join(lines) + "\n")
    gapless(db, "emit", "orders", "--start", "2025-06-14T00:15:00Z", "--end", "2025-06-14T00:30:00Z",
            "--id", "r1", "--retract")
    gapless(db, "prune", "--before", "2025-06-14T01:00:00Z")
    start, end = DAY_START, "2025-06-14T02:00:00Z"
    answer = gapless_json(db, "segments", "orders", "--start", start, "--end", end)
    assert answer["pruned_before"] == "2025-06-14T01:00:00Z"
    server = Server(db).start()
    try:
        open_timeline(page, server, "orders", start, end)
        drawn = parts(page, "segments")
        assert [(p["start"], p["end"]) for p in drawn] == [(s["start"], s["end"]) for s in answer["segments"]]
        for p, s in zip(drawn, answer["segments"], strict=True):
            assert p["state"] == ("retracted" if s["kind"] == "retracted" else "covered")
            if s["event"] is None:
                assert p["seq"] is None and "pruned before 2025-06-14T01:00:00Z" in p["label"]
            else:
                assert p["seq"] == str(s["event"]["seq"])
        assert any(s["event"] is None for s in answer["segments"])
        assert any(s["event"] is not None for s in answer["segments"])
    finally:
        server.stop()
