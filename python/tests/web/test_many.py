"""The page on a ledger of 10,000 assets and 10,000 rules (SPEC §11): the
assets and rules views show their first rows within 5 requests to the
server (the page's own files included), never one per asset or rule beyond
those in view, filter on the server, and read on as the list is scrolled.

The ledger: `stream_00000`..`stream_09999`, three events each (a day with
an hour's gap), ingested as one NDJSON batch, plus a few hostile names that
must show as text; a rule per stream asset, `rule_00000`..`rule_09999`.

The requests are counted in the browser (the document's and the resource
entries of the Performance API, started before the first row was added to
the DOM, as a MutationObserver saw it) and their server time is the sum of
the latencies the server logged for them, printed, not asserted (speed is
for benches).
"""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest
from conftest import Server, gapless, gapless_json
from playwright.sync_api import Page, Request, expect

N = 10_000
HOSTILE = [
    '<img src=x onerror="window.pwned=1">',
    "\"'><script>window.pwned=2</script>",
    "a&b/c?d#e%f g",
]
EVENTS = [
    ("2025-06-14T00:00:00Z", "2025-06-14T06:00:00Z"),
    ("2025-06-14T07:00:00Z", "2025-06-14T12:00:00Z"),
    ("2025-06-14T12:00:00Z", "2025-06-14T18:00:00Z"),
]

# When the first row of a view joined the DOM, in the page's clock.
FIRST_ROWS = """
window.firstRows = {};
new MutationObserver(() => {
  for (const [view, sel] of [["assets", "#assets tbody tr"], ["rules", "section.rule"]]) {
    if (!(view in window.firstRows) && document.querySelector(sel)) {
      window.firstRows[view] = performance.now();
    }
  }
}).observe(document, { childList: true, subtree: true });
"""

# The requests the page made before a time: the document's and each
# resource's (fetches, script, style sheet, icon), with when they started.
REQUESTS_BEFORE = """
(t) => [performance.getEntriesByType("navigation")[0], ...performance.getEntriesByType("resource")]
  .filter((e) => e.startTime <= t).map((e) => e.name)
"""

LOGGED = re.compile(r"request\{method=(\w+) uri=(\S+) version=[^}]*\}: .*latency=(\d+) ms status=(\d+)")


def ndjson() -> str:
    names = [f"stream_{i:05d}" for i in range(N)] + HOSTILE
    return "".join(
        json.dumps({"asset": name, "id": f"{name}-{k}", "start": s, "end": e}) + "\n"
        for name in names
        for k, (s, e) in enumerate(EVENTS)
    )


def copy_rule(db: str, template: str) -> None:
    """A rule like `template` (made by `rule set` on `stream_00000`) on each
    other stream asset: `rule set` commits one rule at a time, and 10,000
    commits would take this suite most of a minute, so the copies are made in
    one transaction of the store's own tables. Every asset has the same
    events, so each copy's windows and firings are the template's."""
    with sqlite3.connect(db) as c:
        c.execute(
            "INSERT INTO rules (name, assets, every, tz, policy, from_us, until_us, deadline, target,"
            " key_format, created_us, deadlines_us)"
            " SELECT 'rule_' || substr(a.name, 8), json_array(a.name), r.every, r.tz, r.policy,"
            " r.from_us, r.until_us, r.deadline, r.target, r.key_format, r.created_us, r.deadlines_us"
            " FROM assets a, rules r WHERE r.name = ? AND a.name LIKE 'stream\\_%' ESCAPE '\\'"
            " AND a.name <> 'stream_00000' ORDER BY a.name",
            (template,),
        )
        c.execute(
            "INSERT INTO rule_assets (asset_id, rule_id) SELECT a.id, n.id FROM rules n"
            " JOIN assets a ON a.name = 'stream_' || substr(n.name, 6) WHERE n.name <> ?",
            (template,),
        )
        c.execute(
            "INSERT INTO rule_windows (rule_id, start_us, end_us, complete, generation, late)"
            " SELECT n.id, w.start_us, w.end_us, w.complete, w.generation, w.late FROM rules t"
            " JOIN rule_windows w ON w.rule_id = t.id JOIN rules n ON n.id <> t.id WHERE t.name = ?",
            (template,),
        )
        c.execute(
            "INSERT INTO firings (rule_id, kind, start_us, end_us, key, generation, covered_ratio,"
            " recorded_us, target, state, attempts, last_error, next_try_us, lease_owner, lease_until_us)"
            " SELECT n.id, f.kind, f.start_us, f.end_us, f.key, f.generation, f.covered_ratio,"
            " f.recorded_us, f.target, f.state, f.attempts, f.last_error, f.next_try_us, f.lease_owner,"
            " f.lease_until_us FROM rules t JOIN firings f ON f.rule_id = t.id"
            " JOIN rules n ON n.id <> t.id WHERE t.name = ? ORDER BY n.name, f.seq",
            (template,),
        )


@pytest.fixture(scope="module")
def many_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("many") / "many.db")
    began = time.monotonic()
    gapless(db, "ingest", "-", input=ndjson())
    gapless(db, "rule", "set", "rule_00000", "--assets", "stream_00000", "--every", "1h",
            "--from", "2025-06-14", "--until", "2025-06-15")
    copy_rule(db, "rule_00000")
    # The copies read back as `rule set` would have made them.
    template = gapless_json(db, "rule", "show", "rule_00000")
    copy = gapless_json(db, "rule", "show", "rule_09999")
    assert copy == {**template, "rule": "rule_09999", "assets": ["stream_09999"]}
    firings = gapless_json(db, "firings", "--rule", "rule_09999")["firings"]
    assert len(firings) == len(gapless_json(db, "firings", "--rule", "rule_00000")["firings"]) > 0
    print(f"\n(the ledger of {N} assets and rules: {time.monotonic() - began:.1f} s)")
    return db


@pytest.fixture(scope="module")
def many(many_db) -> Iterator[Server]:
    server = Server(many_db).start()
    yield server
    server.stop()


@pytest.fixture
def watched(page: Page) -> Page:
    page.add_init_script(FIRST_ROWS)
    return page


def api_path(url: str) -> str:
    return urlsplit(url).path


ROWS = {"assets": "#assets tbody tr", "rules": "section.rule"}


def before_first_rows(page: Page, view: str) -> list[str]:
    # A selector, not wait_for_function: its polling evaluates a string in
    # the page, which the page's CSP (no 'unsafe-eval') refuses.
    page.wait_for_selector(ROWS[view], state="attached")
    t = page.evaluate(f"window.firstRows['{view}']")
    return page.evaluate(REQUESTS_BEFORE, t)


def target(url: str) -> str:
    """A URL's path and query, as the server logs the request's URI."""
    u = urlsplit(url)
    return u.path + (f"?{u.query}" if u.query else "")


def server_ms(server: Server, urls: list[str]) -> int:
    """The latencies the server logged for `urls` (each its latest), summed."""
    wanted = {target(url) for url in urls}
    latest: dict[str, int] = {}
    for line in server.log:
        m = LOGGED.search(line)
        if m and m.group(2) in wanted:
            latest[m.group(2)] = int(m.group(3))
    assert set(latest) == wanted, f"not logged: {wanted - set(latest)}"
    return sum(latest.values())


def report(capsys, what: str, urls: list[str], millis: int) -> None:
    with capsys.disabled():
        print(f"\n({what}: {len(urls)} requests before the first rows, {millis} ms of server time:"
              f" {', '.join(unquote(api_path(u)) for u in urls)})")


SINGLE_ASSET = re.compile(r"^/v1/assets/[^/]+/(buckets|coverage|frontier|windows)$")


IN_VIEW = """rs => rs.filter(r => { const b = r.getBoundingClientRect();
  return b.top < innerHeight && b.bottom > 0; }).map(r => r.dataset.asset)"""


def bars_asked(sent: list[Request]) -> list[list[str]]:
    """The assets of each request of the buckets route, in order."""
    return [[i["asset"] for i in r.post_data_json["assets"]] for r in sent if api_path(r.url) == "/v1/buckets"]


def test_ten_thousand_assets_show_within_five_requests(many, watched, capsys):
    page = watched
    sent: list[Request] = []
    page.on("request", lambda r: sent.append(r))
    page.goto(many.url + "/")
    first = before_first_rows(page, "assets")
    assert len(first) <= 5, first
    report(capsys, "assets view", first, server_ms(many, first))

    rows = page.locator("#assets tbody tr")
    expect(rows).to_have_count(100)
    # Name order: the hostile names sort before the streams.
    names = rows.evaluate_all("rs => rs.map(r => r.dataset.asset)")
    assert names == sorted(HOSTILE) + [f"stream_{i:05d}" for i in range(100 - len(HOSTILE))]
    # The bars of the rows in view, from one request of the buckets route.
    in_view = rows.evaluate_all(IN_VIEW)
    assert 10 <= len(in_view) < 100
    expect(page.locator("#assets [data-field=bar] svg")).to_have_count(len(in_view))
    page.wait_for_load_state("networkidle")
    assert [api_path(r.url) for r in sent if "/v1/" in r.url] == ["/v1/assets", "/v1/buckets"]
    assert bars_asked(sent) == [in_view]
    drawn = [r.url for r in sent if "/v1/" in r.url]
    with capsys.disabled():
        print(f"(assets view, the first rows with their bars: {server_ms(many, drawn)} ms of server time"
              " for its two API requests)")
    status = page.locator("#view .pager-status")
    expect(status).to_have_attribute("data-more", "true")
    expect(status).to_contain_text("100 assets shown; more below")

    # A hostile name shows as text, its link encodes it, nothing ran.
    for name in HOSTILE:
        row = rows.filter(has=page.get_by_role("link", name=name, exact=True))
        expect(row).to_have_count(1)
        assert row.get_attribute("data-asset") == name
        assert row.locator("th a").get_attribute("href") == f"#/asset/{quote_component(name)}"
    assert page.evaluate("window.pwned") is None

    # Scrolling to the end reads the next page, after the last name shown;
    # the bars are those of the rows in view there, the rows passed by on
    # the way are not asked for.
    page.locator("#view .pager button.more").scroll_into_view_if_needed()
    expect(rows).to_have_count(200)
    asked = [parse_qs(urlsplit(r.url).query) for r in sent if api_path(r.url) == "/v1/assets"]
    assert [cursor_name(a) for a in asked[1]["after"]] == [names[-1]]
    assert rows.nth(100).get_attribute("data-asset") == f"stream_{100 - len(HOSTILE):05d}"
    expect(status).to_contain_text("200 assets shown")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(300)
    page.wait_for_load_state("networkidle")
    now_in_view = rows.evaluate_all(IN_VIEW)
    with_bars = rows.evaluate_all("rs => rs.filter(r => r.querySelector('[data-field=bar] svg'))"
                                  ".map(r => r.dataset.asset)")
    every_asked = [a for batch in bars_asked(sent) for a in batch]
    assert set(now_in_view) <= set(with_bars) == set(every_asked)
    assert len(every_asked) == len(set(every_asked)) < 200

    # The button reads on too (pressed where it is: Playwright's click
    # would scroll it into view first, which reads on by itself).
    page.locator("#view .pager button.more").dispatch_event("click")
    expect(rows).to_have_count(300)
    assert not [r for r in sent if SINGLE_ASSET.match(api_path(r.url))]


def cursor_name(cursor: str) -> str:
    """The name a `next` cursor holds (SPEC §3: the page's last name in
    unpadded base64url)."""
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()


def quote_component(name: str) -> str:
    """As the page's encodeURIComponent."""
    return quote(name, safe="-_.!~*'()")


def test_the_asset_filter_asks_the_server_and_drops_stale_answers(many, many_db, page):
    page.goto(many.url + "/")
    rows = page.locator("#assets tbody tr")
    expect(rows).to_have_count(100)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url))
    page.locator("#asset-filter").fill("stream_09999")
    expect(rows).to_have_count(1)
    row = rows.first
    assert row.get_attribute("data-asset") == "stream_09999"
    # Its row is what the command line says of it.
    shown = gapless_json(many_db, "asset", "show", "stream_09999")
    expect(row.locator("[data-field=last_covered]")).to_have_text(shown["last_covered"])
    expect(row.locator("[data-field=frontier]")).to_have_text(EVENTS[0][1])
    # The bar: the hour's gap, one part (and the buckets holding its ends).
    expect(row.locator("[data-field=bar] .part[data-state=missing]:not([data-mixed])")).to_have_count(1)
    asked = [parse_qs(urlsplit(u).query) for u in sent if api_path(u) == "/v1/assets"]
    assert asked == [{"contains": ["stream_09999"], "limit": ["100"]}]
    expect(page.locator("#view .pager-status")).to_have_text("1 asset shown.")

    # A substring in the middle, across pages.
    page.locator("#asset-filter").fill("_0999")
    expect(rows).to_have_count(10)
    page.locator("#asset-filter").fill("onerror")
    expect(rows).to_have_count(1)
    assert rows.first.get_attribute("data-asset") == HOSTILE[0]

    # An answer that comes late, to an older filter, never lands.
    held = []
    page.route(re.compile(r"/v1/assets\?contains=stream_0001&"), lambda route: held.append(route))
    page.locator("#asset-filter").fill("stream_0001")
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the request of the older filter"
    page.locator("#asset-filter").fill("stream_00020")
    expect(rows).to_have_count(1)
    held[0].fulfill(response=held[0].fetch())
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(200)
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.asset)") == ["stream_00020"]


def test_ten_thousand_rules_show_within_five_requests(many, many_db, watched, capsys):
    page = watched
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url))
    page.goto(many.url + "/#/rules")
    first = before_first_rows(page, "rules")
    assert len(first) <= 5, first
    report(capsys, "rules view", first, server_ms(many, first))

    sections = page.locator("section.rule")
    expect(sections).to_have_count(100)
    # The rules in view are read, and only they.
    expect(sections.first).to_have_attribute("aria-busy", "false")
    page.wait_for_load_state("networkidle")
    loaded = sections.evaluate_all(
        "ss => ss.filter(s => s.getAttribute('aria-busy') === 'false').map(s => s.dataset.rule)")
    assert 1 <= len(loaded) <= 4, loaded
    per_rule = [u for u in sent if api_path(u) == "/v1/firings" or api_path(u).endswith("/windows")]
    named = {parse_qs(urlsplit(u).query).get("rule", [None])[0] or unquote(api_path(u).split("/")[3])
             for u in per_rule}
    assert named == set(loaded)
    assert len(per_rule) == 2 * len(loaded)

    # What a loaded section shows is the rule's firings, as the command line has them.
    rule = loaded[0]
    firings = gapless_json(many_db, "firings", "--rule", rule)["firings"]
    rows = page.locator(f"section.rule[data-rule='{rule}'] table.firings tbody tr")
    expect(rows).to_have_count(len(firings))
    assert page.locator(f"section.rule[data-rule='{rule}'] td.cell").count() > 0

    # Scrolling to the end reads the next page of rules; the sections
    # passed by on the way are not read.
    sent.clear()
    page.locator("#view .pager button.more").scroll_into_view_if_needed()
    expect(sections).to_have_count(200)
    asked = [parse_qs(urlsplit(u).query) for u in sent if api_path(u) == "/v1/rules"]
    assert [cursor_name(a) for a in asked[0]["after"]] == ["rule_00099"]
    page.wait_for_load_state("networkidle")
    busy = sections.evaluate_all("ss => ss.filter(s => s.getAttribute('aria-busy') === 'false').length")
    assert busy <= len(loaded) + 6, busy

    # The filter: the names that start with what is typed, asked of the server.
    sent.clear()
    page.locator("#rule-filter").fill("rule_09999")
    expect(sections).to_have_count(1)
    asked = [parse_qs(urlsplit(u).query) for u in sent if api_path(u) == "/v1/rules"]
    assert asked == [{"prefix": ["rule_09999"], "limit": ["100"]}]
    only = page.locator("section.rule[data-rule='rule_09999']")
    expect(only).to_have_attribute("aria-busy", "false")
    expect(only.locator("table.firings tbody tr")).to_have_count(
        len(gapless_json(many_db, "firings", "--rule", "rule_09999")["firings"]))
    expect(page.locator("#view .pager-status")).to_have_text("1 rule shown.")
