"use strict";
// The gapless web page (SPEC §11): four views over the HTTP API, drawn
// with plain DOM and SVG. Coverage is always drawn from the buckets route,
// one request per redraw, never from events. The lists of assets and rules
// are read a page at a time, and what a row shows comes with its page or
// from one request for the page: a ledger may hold tens of thousands.

const SVG_NS = "http://www.w3.org/2000/svg";
const TOKEN_KEY = "gapless.token";
const FIRST_INSTANT = Date.parse("0001-01-01T00:00:00Z");
const LAST_INSTANT = Date.parse("9999-12-30T22:00:00Z");
const MIN_SPAN = 1000; // one second: the finest zoom
const MAX_BUCKETS = 10000;
const FINE_SEGMENTS = 200; // at most this many segments in view: draw them
const DAY = 864e5;
const FIRINGS_SHOWN = 100;
const COLORS = { covered: "#0072B2", missing: "#D55E00", retracted: "#CC79A7" };
const FILLS = { covered: COLORS.covered, missing: "url(#p-missing)", retracted: "url(#p-retracted)" };

// ---- DOM helpers

function h(tag, attrs, ...kids) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS(SVG_NS, tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const kid of kids.flat(Infinity)) if (kid != null) el.append(kid);
  return el;
}

const $ = (sel, root = document) => root.querySelector(sel);
const enc = encodeURIComponent;

// ---- time

const ms = (text) => Date.parse(text);

/** RFC 3339 UTC, with a fraction only when it is not zero (as the API). */
function iso(t) {
  return new Date(t).toISOString().replace(".000Z", "Z");
}

const UNITS = [["d", DAY], ["h", 36e5], ["min", 6e4], ["s", 1e3], ["ms", 1]];

/** A length for people: its two largest units ("1 h 30 min", "10 min"). */
function length(d) {
  const parts = [];
  let rest = Math.round(d);
  for (const [name, unit] of UNITS) {
    const n = Math.floor(rest / unit);
    if (n > 0) parts.push(`${n} ${name}`);
    rest -= n * unit;
    if (parts.length === 2 || (parts.length === 1 && n === 0)) break;
  }
  return parts.length ? parts.join(" ") : "0 s";
}

/** A length with its exact seconds: "10 min (600 s)". */
function lengthLabel(d) {
  return `${length(d)} (${+(d / 1000).toFixed(3)} s)`;
}

function percent(ratio) {
  return `${(ratio * 100).toFixed(ratio === 1 || ratio === 0 ? 0 : 2)}%`;
}

function clampRange(start, end) {
  let span = Math.min(Math.max(end - start, MIN_SPAN), LAST_INSTANT - FIRST_INSTANT);
  start = Math.min(Math.max(start, FIRST_INSTANT), LAST_INSTANT - span);
  return [Math.round(start), Math.round(start + span)];
}

// ---- the API

class NeedToken extends Error {}

/** GET `path` with the query `params` (empty values left out), or POST
 * `body` as JSON when one is given. */
async function api(path, params, body) {
  const query = params
    ? "?" + new URLSearchParams(Object.entries(params).filter(([, v]) => v != null && v !== ""))
    : "";
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { headers, credentials: "omit" };
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path + query, init);
  let answer = null;
  try {
    answer = await res.json();
  } catch (_) {
    answer = null;
  }
  if (res.status === 401) {
    askToken(token
      ? `The server refused the token (${answer && answer.error}): give a read token.`
      : "This server needs a read token.");
    throw new NeedToken();
  }
  if (!res.ok) throw new Error(answer && answer.error ? answer.error : `HTTP ${res.status} from ${path}`);
  return answer;
}

function askToken(reason) {
  sessionStorage.removeItem(TOKEN_KEY);
  $("#token-reason").textContent = reason;
  $("#token-form").hidden = false;
  $("#token-input").focus();
}

$("#token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("#token-input").value.trim());
  $("#token-input").value = "";
  $("#token-form").hidden = true;
  route();
});

/** Show a view: a hash already in place is not a change, so route by hand. */
function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

/** One line on the page for an API error (or any failure of a view). */
function fail(e) {
  if (e instanceof NeedToken) return;
  const line = $("#error");
  line.textContent = e && e.message ? e.message : String(e);
  line.title = line.textContent;
  line.hidden = false;
}

// ---- the tooltip: what a hovered or focused part's aria-label says

const tooltip = $("#tooltip");
function showTip(el, x, y) {
  tooltip.textContent = el.getAttribute("aria-label");
  tooltip.hidden = false;
  if (x == null) {
    const r = el.getBoundingClientRect();
    x = r.left + r.width / 2;
    y = r.bottom;
  }
  const w = tooltip.offsetWidth;
  tooltip.style.left = `${Math.max(4, Math.min(x + 12, window.innerWidth - w - 4))}px`;
  tooltip.style.top = `${y + 14}px`;
}
function hideTip() {
  tooltip.hidden = true;
}
document.addEventListener("pointerover", (e) => {
  const el = e.target.closest && e.target.closest("[data-tip]");
  if (el) showTip(el, e.clientX, e.clientY);
  else hideTip();
});
document.addEventListener("pointermove", (e) => {
  const el = e.target.closest && e.target.closest("[data-tip]");
  if (el && !tooltip.hidden) showTip(el, e.clientX, e.clientY);
});
document.addEventListener("focusin", (e) => {
  if (e.target.hasAttribute && e.target.hasAttribute("data-tip")) showTip(e.target);
  else hideTip();
});

// ---- drawing coverage from buckets

function svgDefs() {
  return h("svg:defs", {},
    h("svg:pattern", { id: "p-missing", patternUnits: "userSpaceOnUse", width: 8, height: 8 },
      h("svg:rect", { width: 8, height: 8, fill: COLORS.missing }),
      h("svg:circle", { cx: 4, cy: 4, r: 1.4, fill: "#fff" })),
    h("svg:pattern", { id: "p-retracted", patternUnits: "userSpaceOnUse", width: 6, height: 6,
      patternTransform: "rotate(45)" },
      h("svg:rect", { width: 6, height: 6, fill: "#fff" }),
      h("svg:rect", { width: 3, height: 6, fill: COLORS.retracted })));
}

function partLabel(state, start, end, more) {
  const d = ms(end) - ms(start);
  return `${state} from ${start} to ${end}, length ${lengthLabel(d)}${more ? `; ${more}` : ""}`;
}

function part(state, start, end, x, y, w, hgt, { focusable = true, label, extraAttrs } = {}) {
  return h("svg:rect", {
    class: `part part-${state}`, x, y, width: Math.max(w, 0.5), height: hgt, fill: FILLS[state],
    "data-state": state, "data-start": start, "data-end": end,
    "aria-label": label || partLabel(state, start, end), "data-tip": true,
    role: "img", tabindex: focusable ? 0 : null, ...extraAttrs,
  });
}

const STATES = ["covered", "missing", "retracted"];

/** The buckets as parts: runs of buckets wholly in one state become one
 * part; a bucket of mixed states is a column split by its shares. */
function bucketParts(answer, width, y, hgt, focusable) {
  const g = h("svg:g", { class: "lane buckets" });
  const b = answer.buckets;
  const step = width / b.length;
  const stateOf = (k) => STATES.find((s) => k[`${s}_us`] > 0 && k[`${s}_us`] ===
    k.covered_us + k.missing_us + k.retracted_us);
  for (let i = 0; i < b.length;) {
    const s = stateOf(b[i]);
    if (s) {
      let j = i + 1;
      while (j < b.length && stateOf(b[j]) === s) j++;
      g.append(part(s, b[i].start, b[j - 1].end, i * step, y, (j - i) * step, hgt, { focusable }));
      i = j;
      continue;
    }
    const total = b[i].covered_us + b[i].missing_us + b[i].retracted_us;
    let top = y;
    for (const st of STATES) {
      const share = b[i][`${st}_us`] / total;
      if (share <= 0) continue;
      const label = `partly ${st}: ${percent(share)} of ${b[i].start} to ${b[i].end} ` +
        `(length ${lengthLabel(ms(b[i].end) - ms(b[i].start))})`;
      g.append(part(st, b[i].start, b[i].end, i * step, top, step, share * hgt,
        { focusable: false, label, extraAttrs: { "data-mixed": true } }));
      top += share * hgt;
    }
    i++;
  }
  return g;
}

function totalsText(answer) {
  const total = answer.covered_us + answer.missing_us + answer.retracted_us;
  if (!total) return "";
  return STATES.map((s) => `${s} ${percent(answer[`${s}_us`] / total)} ` +
    `(${length(answer[`${s}_us`] / 1000)})`).join(", ");
}

function bucketsParams(start, end, n) {
  return { start: iso(start), end: iso(end), buckets: Math.max(1, Math.min(MAX_BUCKETS, n)) };
}

// ---- the time axis

const TICKS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600,
  43200, 86400, 172800, 604800].map((s) => s * 1000);

function ticks(start, end, width) {
  const span = end - start;
  const wanted = Math.max(2, Math.floor(width / 110));
  const out = [];
  const step = TICKS.find((t) => span / t <= wanted);
  if (step) {
    for (let t = Math.ceil(start / step) * step; t <= end; t += step) {
      const s = iso(t);
      let label = step < 60e3 ? s.slice(11, 19) : s.slice(11, 16);
      if (step >= DAY) label = s.slice(0, 10);
      else if (t % DAY === 0) label = s.slice(5, 10);
      out.push([t, label]);
    }
    return out;
  }
  // Months and years: calendar steps (UTC).
  const months = [1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200, 2400, 6000]
    .find((m) => span / (m * 30.44 * DAY) <= wanted) || 12000;
  const d = new Date(start);
  let y = d.getUTCFullYear();
  let m = Math.ceil(d.getUTCMonth() / months) * months;
  if (months >= 12) { y = Math.ceil(y / (months / 12)) * (months / 12); m = 0; }
  for (;;) {
    const t = new Date(0);
    t.setUTCFullYear(y, m, 1);
    t.setUTCHours(0, 0, 0, 0);
    if (t.getTime() > end) break;
    if (t.getTime() >= start) out.push([t.getTime(), months >= 12 ? iso(t).slice(0, 4) : iso(t).slice(0, 7)]);
    m += months;
    y += Math.floor(m / 12);
    m %= 12;
  }
  return out;
}

function axis(start, end, width, y) {
  const g = h("svg:g", { class: "axis", "aria-hidden": "true" });
  for (const [t, label] of ticks(start, end, width)) {
    const x = ((t - start) / (end - start)) * width;
    g.append(h("svg:line", { x1: x, x2: x, y1: y, y2: y + 5 }),
      h("svg:text", { x: x + 2, y: y + 16, text: label }));
  }
  return g;
}

// ---- router

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const [view, arg] = path.split("/");
  return { view: view || "assets", arg: arg ? decodeURIComponent(arg) : null,
    params: Object.fromEntries(new URLSearchParams(query || "")) };
}

const VIEWS = { assets: assetsView, asset: timelineView, windows: windowsView, rules: rulesView };
let currentView = null; // the live view's teardown

async function route() {
  $("#error").hidden = true;
  hideTip();
  if (currentView) currentView();
  currentView = null;
  const { view, arg, params } = parseHash();
  const main = $("#view");
  main.replaceChildren();
  main.setAttribute("aria-busy", "true");
  try {
    await (VIEWS[view] || assetsView)(main, arg, params);
  } catch (e) {
    fail(e);
  } finally {
    main.setAttribute("aria-busy", "false");
  }
}

// ---- lists a page at a time

const PAGE_ROWS = 100;
const FILTER_DELAY = 250; // ms after the last keystroke before the server is asked
const READ_AHEAD = 300; // px below the view where a "More" button already reads on

/** Whether `el` is shown and within the view or READ_AHEAD below it. */
function nearView(el) {
  const r = el.getBoundingClientRect();
  return r.height > 0 && r.top < window.innerHeight + READ_AHEAD && r.bottom > 0;
}

/** A list the server gives a page at a time (`limit=`, `after=` and the
 * answer's `next` cursor). `fetchPage(after)` answers `{ items, next,
 * answer }`; `show(items, answer)` adds them to the view; `clear()` empties
 * it. The "More" button reads the next page, and so does its coming into
 * view (an IntersectionObserver): scrolling to the end reads on. `restart()`
 * begins again (a new filter): an answer to an older request never lands.
 * The status line says how many are shown (`noun`: what is listed, one
 * and many) and whether there are more. */
function pager({ noun: [one, many], fetchPage, show, clear }) {
  const status = h("p", { class: "pager-status", role: "status", "aria-live": "polite",
    "data-shown": 0, "data-more": "false" });
  const button = h("button", { type: "button", class: "more", text: `More ${many}` });
  const box = h("div", { class: "pager" }, status, button);
  let generation = 0;
  let next = null;
  let shown = 0;
  let busy = false;
  let done = false;
  const count = (n) => `${n} ${n === 1 ? one : many}`;
  const say = (text) => {
    status.textContent = text;
    status.dataset.shown = shown;
    status.dataset.more = String(!done);
  };
  async function more() {
    if (busy || done) return;
    const mine = generation;
    busy = true;
    // aria-disabled, not disabled: a disabled button loses the keyboard's
    // focus, and a press while busy does nothing anyway.
    button.setAttribute("aria-disabled", "true");
    say(shown ? `${count(shown)} shown, reading more…` : `Reading ${many}…`);
    try {
      const page = await fetchPage(next);
      if (mine !== generation) return;
      next = page.next;
      done = next == null;
      shown += page.items.length;
      show(page.items, page.answer);
      say(!shown ? `No ${many}.` : !done ? `${count(shown)} shown; more below (scroll, or the button).`
        : shown === 1 ? `1 ${one} shown.` : `All ${count(shown)} shown.`);
    } catch (e) {
      if (mine !== generation) return;
      say(`${count(shown)} shown; reading more failed.`);
      throw e;
    } finally {
      if (mine === generation) {
        busy = false;
        button.removeAttribute("aria-disabled");
        button.hidden = done;
      }
    }
    // A page too short to scroll leaves the button in view for good, and
    // the observer sees no change: read on. (Only then: where the browser
    // keeps the pressed button in view as rows come, this would read every
    // page.)
    const short = document.documentElement.scrollHeight <= window.innerHeight + READ_AHEAD;
    if (mine === generation && !done && short && nearView(button)) await more();
  }
  const observer = new IntersectionObserver((entries) => {
    if (entries.some((e) => e.isIntersecting)) more().catch(fail);
  }, { rootMargin: `0px 0px ${READ_AHEAD}px 0px` });
  observer.observe(button);
  button.addEventListener("click", () => more().catch(fail));
  return {
    box,
    more,
    restart() {
      generation++;
      next = null;
      shown = 0;
      busy = false;
      done = false;
      button.hidden = false;
      clear();
      return more();
    },
    stop() {
      generation++;
      observer.disconnect();
    },
  };
}

/** `fn` called FILTER_DELAY after the last of a burst of calls. */
function debounced(fn) {
  let timer = null;
  const call = () => {
    clearTimeout(timer);
    timer = setTimeout(fn, FILTER_DELAY);
  };
  call.cancel = () => clearTimeout(timer);
  return call;
}

// ---- view 1: assets

const BAR_PARTS = 160;
const BAR_DELAY = 100; // ms the rows coming into view are gathered for one request
const BARS_MAX = 1000; // items of one request of the buckets route

/** An RFC 3339 UTC instant `days` days before `text`, keeping its
 * microseconds (a Date keeps only milliseconds). */
function daysBefore(text, days) {
  const frac = (/\.(\d+)Z$/.exec(text) || [, ""])[1].padEnd(6, "0").replace(/0+$/, "");
  const whole = Math.floor(ms(text) / 1000) * 1000 - days * DAY;
  return `${iso(Math.max(FIRST_INSTANT, whole)).slice(0, 19)}${frac ? `.${frac}` : ""}Z`;
}

async function assetsView(main) {
  const filter = h("input", { type: "search", id: "asset-filter", placeholder: "part of a name (case-sensitive)",
    size: 30, autocomplete: "off", "aria-controls": "assets" });
  const rows = h("tbody");
  const bars = barPainter();
  const list = pager({
    noun: ["asset", "assets"],
    fetchPage: async (after) => {
      const answer = await api("/v1/assets", { contains: filter.value, limit: PAGE_ROWS, after });
      return { items: answer.assets, next: answer.next, answer };
    },
    show: (assets, answer) => {
      for (const a of assets) {
        const tr = assetRow(a, answer.as_of);
        rows.append(tr);
        bars.watch(tr, a);
      }
    },
    clear: () => {
      bars.forget();
      rows.replaceChildren();
    },
  });
  const refilter = debounced(() => list.restart().catch(fail));
  filter.addEventListener("input", refilter);
  currentView = () => {
    refilter.cancel();
    list.stop();
    bars.forget();
  };
  // The first page before anything is shown: a server that wants a token
  // shows only its form.
  await list.more();
  main.append(h("h2", { text: "Assets" }),
    h("div", { class: "controls" }, h("label", {}, "Filter by name", filter)),
    h("table", { id: "assets" },
      h("thead", {}, h("tr", {}, ["Asset", "Events", "Frontier", "Last covered", "Last received", "Last day",
        "Last week", "Covered history", ""].map((t) => h("th", { scope: "col", text: t })))),
      rows),
    list.box,
    h("p", { class: "keys", text: "Last day and last week: the covered share of the 24 hours and the " +
      "7 days up to now (a producer that stopped shows here). The bar: the asset's history from its " +
      `first to its last covered instant, drawn as the row comes into view. The filter keeps the names ` +
      "that contain what is typed; " +
      `${PAGE_ROWS} rows are read at a time, more as you scroll.` }));
}

/** An asset's row, from one entry of the assets route (its day and week
 * shares are of the 24 hours and 7 days up to the answer's `as_of`). */
function assetRow(a, asOf) {
  const share = (field, ratio, days) => {
    if (ratio == null) return h("td", { class: "num", "data-field": field, text: "—" });
    const start = daysBefore(asOf, days);
    return h("td", { class: "num", "data-field": field, "data-ratio": ratio, "data-start": start,
      "data-end": asOf, title: `covered ${percent(ratio)} from ${start} to ${asOf}`, text: percent(ratio) });
  };
  return h("tr", { "data-asset": a.asset },
    h("th", { scope: "row" }, h("a", { href: `#/asset/${enc(a.asset)}`, text: a.asset })),
    h("td", { class: "num", "data-field": "events", text: String(a.events) }),
    h("td", { class: "num", "data-field": "frontier", text: a.frontier || "—" }),
    h("td", { "data-field": "last_covered", text: a.last_covered || "never" }),
    h("td", { "data-field": "last_received", text: a.last_received || "never" }),
    share("day", a.covered_ratio_day, 1), share("week", a.covered_ratio_week, 7),
    h("td", { class: "bar", "data-field": "bar" }),
    h("td", {}, h("a", { href: `#/windows/${enc(a.asset)}`, text: "windows" })));
}

/** The history bars of the rows in view, each from the asset's first to
 * its last covered instant: the rows that come into view within BAR_DELAY
 * of each other are drawn from one request of the buckets route, so a
 * page's first view is one request and each stop of a scroll one more,
 * and a row scrolled past is never asked for. */
function barPainter() {
  const assetOf = new WeakMap();
  const wanted = new Set(); // rows in view, not yet asked for
  let timer = null;
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) wanted.add(e.target);
      else wanted.delete(e.target);
    }
    clearTimeout(timer);
    if (wanted.size) timer = setTimeout(ask, BAR_DELAY);
  });
  function ask() {
    const trs = [...wanted].slice(0, BARS_MAX);
    for (const tr of trs) {
      wanted.delete(tr);
      observer.unobserve(tr);
    }
    drawBars(trs.map((tr) => [assetOf.get(tr), tr])).catch(fail);
    if (wanted.size) timer = setTimeout(ask, BAR_DELAY);
  }
  return {
    watch(tr, a) {
      if (!a.first_covered || !a.last_covered) return;
      assetOf.set(tr, a);
      observer.observe(tr);
    },
    forget() {
      clearTimeout(timer);
      wanted.clear();
      observer.disconnect();
    },
  };
}

async function drawBars(drawn) {
  const items = drawn.map(([a]) => ({ asset: a.asset, start: a.first_covered, end: a.last_covered }));
  const { buckets } = await api("/v1/buckets", null, { assets: items, buckets: BAR_PARTS });
  buckets.forEach((bar, k) => {
    const [a, tr] = drawn[k];
    const svg = h("svg:svg", { width: BAR_PARTS, height: 14, viewBox: `0 0 ${BAR_PARTS} 14`, role: "img",
      "aria-label": `${a.asset} from ${bar.start} to ${bar.end}: ${totalsText(bar)}` }, svgDefs());
    svg.append(bucketParts(bar, BAR_PARTS, 0, 14, false));
    $(`[data-field="bar"]`, tr).replaceChildren(svg);
  });
}

// ---- view 2: an asset's timeline

const KEYS_HELP = "Keys, with the timeline focused: + or = zoom in (half the span, around the " +
  "centre), - zoom out (twice the span), ← and → pan a quarter of the view (with Shift: a whole " +
  "view), 0 fit the asset's covered extent, Tab steps through the parts. Mouse: the wheel zooms " +
  "around the pointer, dragging pans.";

async function timelineView(main, asset, params) {
  const path = `/v1/assets/${enc(asset)}`;
  const info = await api(path);
  const fit = info.first_covered
    ? [ms(info.first_covered), ms(info.last_covered)]
    : [Date.now() - DAY, Date.now()];
  let [start, end] = params.start && params.end ? [ms(params.start), ms(params.end)] : fit;
  if (!(start < end)) [start, end] = fit;
  [start, end] = clampRange(start, end);

  const startIn = h("input", { id: "range-start", size: 24 });
  const endIn = h("input", { id: "range-end", size: 24 });
  const svg = h("svg:svg", { height: 104 });
  const box = h("div", { id: "timeline", tabindex: 0, role: "group", "aria-roledescription": "timeline",
    "aria-describedby": "timeline-keys", "data-asset": asset }, svg);
  const summary = h("p", { id: "timeline-summary" });
  const gaps = h("div", { id: "gaps" });
  const button = (text, label, action) =>
    h("button", { type: "button", "aria-label": label, text, onclick: action });
  const swatch = (state) => h("span", {},
    h("svg:svg", { width: 22, height: 12, "aria-hidden": "true" }, svgDefs(),
      h("svg:rect", { width: 22, height: 12, fill: FILLS[state], stroke: "#888" })), state);

  main.append(
    h("h2", {}, `Timeline of ${asset} `, h("small", {},
      h("a", { href: `#/windows/${enc(asset)}`, text: "(windows)" }))),
    h("form", { class: "controls", onsubmit: (e) => {
      e.preventDefault();
      const [s, t] = [ms(startIn.value), ms(endIn.value)];
      if (!(s < t)) return fail(new Error("the range needs a start before its end (RFC 3339)"));
      setRange(s, t);
    } },
      h("label", {}, "Start", startIn), h("label", {}, "End", endIn),
      h("button", { type: "submit", text: "Show" }),
      button("+", "Zoom in", () => zoom(0.5, 0.5)),
      button("−", "Zoom out", () => zoom(2, 0.5)),
      button("←", "Pan left", () => pan(-0.25)),
      button("→", "Pan right", () => pan(0.25)),
      button("Fit", "Fit the covered extent", () => setRange(...fit))),
    h("p", { id: "timeline-keys", class: "keys", text: KEYS_HELP }),
    h("div", { class: "legend", "aria-hidden": "true" }, STATES.map(swatch)),
    box, summary, gaps);

  let generation = 0;
  let timer = null;

  function setRange(s, t, delay = 0) {
    [start, end] = clampRange(s, t);
    box.dataset.start = iso(start);
    box.dataset.end = iso(end);
    box.setAttribute("aria-busy", "true");
    box.setAttribute("aria-label", `coverage of ${asset} from ${iso(start)} to ${iso(end)} ` +
      `(${length(end - start)})`);
    startIn.value = iso(start);
    endIn.value = iso(end);
    history.replaceState(null, "", `#/asset/${enc(asset)}?start=${iso(start)}&end=${iso(end)}`);
    clearTimeout(timer);
    timer = setTimeout(redraw, delay);
  }
  function zoom(factor, at) {
    const span = end - start;
    const t = start + at * span;
    setRange(t - at * span * factor, t + (1 - at) * span * factor, 120);
  }
  function pan(share) {
    const d = (end - start) * share;
    setRange(start + d, end + d, 120);
  }

  async function redraw() {
    const gen = ++generation;
    const width = Math.max(1, Math.min(MAX_BUCKETS, Math.floor(box.clientWidth)));
    const range = { start: iso(start), end: iso(end) };
    const [s, t] = [start, end];
    try {
      const [buckets, segments, coverage] = await Promise.all([
        api(`${path}/buckets`, bucketsParams(s, t, width)),
        api(`${path}/segments`, { ...range, limit: FINE_SEGMENTS + 1 }),
        api(`${path}/coverage`, range)]);
      const fine = segments.next == null && segments.segments.length <= FINE_SEGMENTS;
      let events = new Map();
      if (fine && segments.segments.length) {
        const answer = await api(`${path}/events`, { ...range, limit: 1000 });
        events = new Map(answer.events.map((e) => [e.seq, e]));
      }
      if (gen !== generation) return;
      const keep = document.activeElement && document.activeElement.closest("#timeline") ? box : null;
      svg.replaceChildren(svgDefs());
      svg.setAttribute("viewBox", `0 0 ${width} 104`);
      svg.append(h("svg:text", { class: "note", x: 2, y: 10, text: "coverage" }),
        bucketParts(buckets, width, 14, 36, true));
      if (fine) svg.append(h("svg:text", { class: "note", x: 2, y: 62, text: "segments: the event that provides each part" }),
        segmentParts(segments, events, s, t, width, 66, 18));
      else svg.append(h("svg:text", { class: "note", x: 2, y: 72,
        text: `more than ${FINE_SEGMENTS} segments in view: zoom in to see which event provides each part` }));
      svg.append(axis(s, t, width, 86));
      if (keep) keep.focus();
      summary.textContent = `From ${buckets.start} to ${buckets.end} (${length(t - s)}): ${totalsText(buckets)}.`;
      gaps.replaceChildren(gapTable(coverage));
    } catch (e) {
      if (gen === generation) fail(e);
    } finally {
      if (gen === generation) box.setAttribute("aria-busy", "false");
    }
  }

  box.addEventListener("keydown", (e) => {
    const keys = {
      "+": () => zoom(0.5, 0.5), "=": () => zoom(0.5, 0.5), "-": () => zoom(2, 0.5),
      ArrowLeft: () => pan(e.shiftKey ? -1 : -0.25), ArrowRight: () => pan(e.shiftKey ? 1 : 0.25),
      0: () => setRange(...fit),
    };
    if (keys[e.key] && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      keys[e.key]();
    }
  });
  box.addEventListener("wheel", (e) => {
    e.preventDefault();
    const r = svg.getBoundingClientRect();
    const at = Math.min(1, Math.max(0, (e.clientX - r.left) / r.width));
    zoom(Math.exp(e.deltaY * 0.002), at);
  }, { passive: false });
  let drag = null;
  box.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, start, end, moved: false };
    box.setPointerCapture(e.pointerId);
  });
  box.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const dx = e.clientX - drag.x;
    if (!drag.moved && Math.abs(dx) < 3) return;
    drag.moved = true;
    box.classList.add("dragging");
    const d = (-dx / svg.getBoundingClientRect().width) * (drag.end - drag.start);
    setRange(drag.start + d, drag.end + d, 60);
  });
  const endDrag = () => { drag = null; box.classList.remove("dragging"); };
  box.addEventListener("pointerup", endDrag);
  box.addEventListener("pointercancel", endDrag);
  const onResize = () => setRange(start, end, 150);
  window.addEventListener("resize", onResize);
  currentView = () => { clearTimeout(timer); generation++; window.removeEventListener("resize", onResize); };
  setRange(start, end);
}

/** The segments of the view and the holes between them, each part naming
 * the event that provides it. */
function segmentParts(answer, events, start, end, width, y, hgt) {
  const g = h("svg:g", { class: "lane segments" });
  const x = (text) => ((ms(text) - start) / (end - start)) * width;
  const add = (state, s, t, more, attrs) => {
    const w = x(t) - x(s);
    g.append(part(state, s, t, x(s), y, w, hgt, { label: partLabel(state, s, t, more), extraAttrs: attrs }));
    if (w > 70 && more) {
      g.append(h("svg:text", { class: `part-label${state === "covered" ? " on-dark" : ""}`,
        x: x(s) + 3, y: y + hgt - 5, text: more.split(";")[0] }));
    }
  };
  let at = iso(start);
  for (const seg of answer.segments) {
    if (ms(seg.start) > ms(at)) add("missing", at, seg.start, "no event covers it");
    const state = seg.kind === "retracted" ? "retracted" : "covered";
    if (seg.event == null) {
      // Before the asset's prune watermark the ledger keeps coverage, not
      // which event provided it.
      add(state, seg.start, seg.end, `event detail pruned before ${answer.pruned_before}`,
        { "data-pruned": "true" });
      at = seg.end;
      continue;
    }
    const ev = events.get(seg.event.seq);
    const name = `event ${seg.event.id == null ? "(no id)" : seg.event.id} (seq ${seg.event.seq})`;
    const extra = ev && ev.extra != null ? `; extra ${JSON.stringify(ev.extra)}` : "";
    add(state, seg.start, seg.end, name + extra,
      { "data-event-id": seg.event.id, "data-event-seq": seg.event.seq });
    at = seg.end;
  }
  if (ms(at) < end) add("missing", at, iso(end), "no event covers it");
  return g;
}

function gapTable(coverage) {
  const shown = coverage.missing.slice(0, 500);
  const rows = shown.map((gap) => {
    const text = `${gap.start}/${gap.end}`;
    const copy = h("button", { type: "button", class: "copy", "aria-label": `copy ${text}`, text: "Copy" });
    copy.addEventListener("click", () => copyText(text, copy));
    return h("tr", { "data-start": gap.start, "data-end": gap.end },
      h("td", { text: gap.start }), h("td", { text: gap.end }),
      h("td", { class: "num", text: length(ms(gap.end) - ms(gap.start)) }),
      h("td", {}, h("code", { text })), h("td", {}, copy));
  });
  const more = coverage.missing_count > shown.length ? ` (the first ${shown.length} shown)` : "";
  return h("table", { id: "gap-table" },
    h("caption", { text: `${coverage.missing_count} gap${coverage.missing_count === 1 ? "" : "s"} in view${more}; ` +
      `covered ${percent(coverage.covered_ratio)}` }),
    h("thead", {}, h("tr", {}, ["Start", "End", "Length", "ISO range", ""].map((t) => h("th", { scope: "col", text: t })))),
    h("tbody", {}, rows));
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (_) {
    // Without the clipboard API (an insecure origin): the old way.
    const area = h("textarea", { readonly: true });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

// ---- view 3: windows as a calendar heat map

function localParts(tz) {
  const f = new Intl.DateTimeFormat("en-GB", { timeZone: tz, year: "numeric", month: "2-digit",
    day: "2-digit", hour: "2-digit", minute: "2-digit", weekday: "short", hourCycle: "h23" });
  return (t) => Object.fromEntries(f.formatToParts(new Date(t)).map((p) => [p.type, p.value]));
}

/** Rows and cell labels by the grid's unit: sub-day grids one row per
 * local day, day grids one per month, longer ones one per year. */
function layout(every) {
  const unit = (/^\d+(mo|m|h|d|w|y)$/.exec(every) || [])[1] || "h";
  if (unit === "m" || unit === "h") {
    return { unit, row: (p) => `${p.weekday} ${p.year}-${p.month}-${p.day}`, cell: (p) => `${p.hour}:${p.minute}` };
  }
  if (unit === "d") return { unit, row: (p) => `${p.year}-${p.month}`, cell: (p) => p.day };
  return { unit, row: (p) => p.year, cell: (p) => `${p.month}-${p.day}` };
}

function heatmap(answer) {
  const local = localParts(answer.tz);
  const { row, cell } = layout(answer.every);
  const rows = new Map();
  for (const w of answer.windows) {
    const p = local(ms(w.start));
    const key = row(p);
    if (!rows.has(key)) rows.set(key, { cells: [], seen: new Map() });
    const r = rows.get(key);
    const base = cell(p);
    // A fold repeats a local time: the second one says so.
    const n = (r.seen.get(base) || 0) + 1;
    r.seen.set(base, n);
    const label = n === 1 ? base : `${base} (${n === 2 ? "2nd" : `${n}th`})`;
    const state = w.complete ? "complete" : w.covered_ratio === 0 ? "empty" : "partial";
    // Rounded down: a window not complete never reads 100%.
    const mark = w.complete ? "✓" : w.covered_ratio === 0 ? "✗" : `${Math.floor(w.covered_ratio * 100)}%`;
    const words = `${label} (${answer.tz}), key ${w.key}, ${w.start} to ${w.end}, covered ` +
      `${percent(w.covered_ratio)}, ${w.complete ? "complete" : "not complete"}` +
      (w.missing_count ? `, ${w.missing_count} gap${w.missing_count === 1 ? "" : "s"}` : "");
    r.cells.push(h("td", { class: `cell ${state}`, tabindex: -1, role: "gridcell", "data-tip": true,
      "data-key": w.key, "data-start": w.start, "data-end": w.end, "data-complete": String(w.complete),
      "data-ratio": w.covered_ratio, "data-label": label, "aria-label": words,
      onclick: () => go(`#/asset/${enc(answer.asset || answer.assets[0])}?start=${w.start}&end=${w.end}`) },
      label, h("span", { class: "mark", "aria-hidden": "true", text: mark })));
  }
  const table = h("table", { class: "heatmap", role: "grid", "aria-label": `windows of ${answer.every} in ${answer.tz}, policy ${answer.policy}`,
    onkeydown: gridKeys },
    h("tbody", {}, [...rows].map(([key, r]) => h("tr", { "data-row": key },
      h("th", { scope: "row", role: "rowheader", text: key }), r.cells))));
  const first = $("td.cell", table);
  if (first) first.tabIndex = 0;
  return table;
}

/** The heat map is one tab stop: the arrow keys move between its cells
 * (left and right through the windows in order, up and down to the same
 * place of the row above or below), Home and End to a row's ends, Enter
 * opens the window. */
function gridKeys(e) {
  const cell = e.target.closest("td.cell");
  if (!cell) return;
  if (e.key === "Enter") {
    cell.click();
    return;
  }
  const table = cell.closest("table");
  const all = [...table.querySelectorAll("td.cell")];
  const row = [...cell.parentElement.querySelectorAll("td.cell")];
  const i = row.indexOf(cell);
  const rowAt = (tr) => (tr ? [...tr.querySelectorAll("td.cell")] : []);
  const vertical = (tr) => { const r = rowAt(tr); return r[Math.min(i, r.length - 1)]; };
  const next = {
    ArrowRight: () => all[all.indexOf(cell) + 1],
    ArrowLeft: () => all[all.indexOf(cell) - 1],
    ArrowDown: () => vertical(cell.parentElement.nextElementSibling),
    ArrowUp: () => vertical(cell.parentElement.previousElementSibling),
    Home: () => row[0],
    End: () => row[row.length - 1],
  }[e.key];
  if (!next) return;
  e.preventDefault();
  const target = next();
  if (!target) return;
  cell.tabIndex = -1;
  target.tabIndex = 0;
  target.focus();
}

const HEAT_HELP = "Each cell is a window: ✓ complete (blue), ✗ nothing covered (vermillion), " +
  "a percentage: partly covered, not complete (striped). Hover or focus a cell for its key, " +
  "start, end and ratio. Tab into the map, then the arrow keys move between cells (Home, End: a " +
  "row's ends); Enter or a click opens the window on the timeline.";

/** The ledger's own facts of one asset (`asset show`), or null when it has
 * never seen it (the windows route then says so). */
async function assetInfo(asset) {
  try {
    return await api(`/v1/assets/${enc(asset)}`);
  } catch (e) {
    if (e instanceof NeedToken) throw e;
    return null;
  }
}

async function windowsView(main, asset, params) {
  // Without an asset: the first by name, one row of the assets route.
  const info = asset ? await assetInfo(asset) : (await api("/v1/assets", { limit: 1 })).assets[0];
  if (!asset && info) asset = info.asset;
  const day = (t) => iso(t).slice(0, 10);
  const defStart = info && info.first_covered ? day(ms(info.first_covered)) : day(Date.now() - DAY);
  const defEnd = info && info.last_covered ? day(ms(info.last_covered) + DAY - 1) : day(Date.now() + DAY);
  const v = { start: defStart, end: defEnd, every: "1h", tz: "UTC", policy: "full", ...params };
  const input = (name, size) => h("input", { name, id: `w-${name}`, value: v[name], size });
  const fields = { start: input("start", 22), end: input("end", 22), every: input("every", 5),
    tz: input("tz", 16), policy: input("policy", 12) };
  // The asset by name, with the names that start with what is typed as
  // suggestions (a page of the assets route, not every asset).
  const picker = h("input", { name: "asset", id: "w-asset", value: asset || "", size: 24, list: "w-assets",
    autocomplete: "off" });
  const names = h("datalist", { id: "w-assets" });
  let asked = 0;
  const suggest = debounced(async () => {
    const mine = ++asked;
    const answer = await api("/v1/assets", { prefix: picker.value, limit: 20 }).catch(fail);
    if (answer && mine === asked) names.replaceChildren(...answer.assets.map((a) => h("option", { value: a.asset })));
  });
  picker.addEventListener("input", suggest);
  currentView = () => suggest.cancel();
  const form = h("form", { class: "controls", onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams(Object.entries(fields).map(([k, el]) => [k, el.value]));
    go(`#/windows/${enc(picker.value)}?${q}`);
  } },
    h("label", {}, "Asset", picker, names),
    h("label", {}, "Start", fields.start), h("label", {}, "End", fields.end),
    h("label", {}, "Grid", fields.every), h("label", {}, "Zone", fields.tz),
    h("label", {}, "Policy", fields.policy), h("button", { type: "submit", text: "Show" }));
  main.append(h("h2", { text: "Windows" }), form, h("p", { class: "keys", text: HEAT_HELP }));
  if (!asset) return;
  const answer = await api(`/v1/assets/${enc(asset)}/windows`,
    { start: v.start, end: v.end, every: v.every, tz: v.tz, policy: v.policy });
  main.append(h("div", { id: "heatmap", "data-asset": asset }, heatmap(answer)));
}

// ---- view 4: rules and firings

const GRID_MS = { m: 6e4, h: 36e5, d: DAY, w: 7 * DAY, mo: 30.44 * DAY, y: 365.25 * DAY };

function gridLength(every) {
  const m = /^(\d+)(mo|m|h|d|w|y)$/.exec(every);
  return m ? Number(m[1]) * GRID_MS[m[2]] : 36e5;
}

/** The newest firings of a rule, newest first: one page of the newest. */
async function recentFirings(rule) {
  const answer = await api("/v1/firings", { rule, limit: FIRINGS_SHOWN, newest: true });
  return answer.firings.reverse();
}

const RULES_LOADING = 2; // rules whose windows and firings are read at once

async function rulesView(main, _arg, params) {
  const startIn = h("input", { id: "r-start", name: "start", value: params.start || "", size: 22 });
  const endIn = h("input", { id: "r-end", name: "end", value: params.end || "", size: 22 });
  const filter = h("input", { type: "search", id: "rule-filter", placeholder: "start of a name",
    autocomplete: "off", "aria-controls": "rules" });
  const sections = h("div", { id: "rules" });
  const details = ruleDetails(params);
  const list = pager({
    noun: ["rule", "rules"],
    fetchPage: async (after) => {
      const answer = await api("/v1/rules", { prefix: filter.value, limit: PAGE_ROWS, after });
      return { items: answer.rules, next: answer.next, answer };
    },
    show: (rules) => {
      for (const rule of rules) {
        const section = ruleSection(rule);
        sections.append(section);
        details.watch(section, rule);
      }
    },
    clear: () => {
      details.forget();
      sections.replaceChildren();
    },
  });
  const refilter = debounced(() => list.restart().catch(fail));
  filter.addEventListener("input", refilter);
  currentView = () => {
    refilter.cancel();
    list.stop();
    details.stop();
  };
  await list.more();
  main.append(h("h2", { text: "Rules and firings" }),
    h("form", { class: "controls", onsubmit: (e) => {
      e.preventDefault();
      go(`#/rules?${new URLSearchParams({ start: startIn.value, end: endIn.value })}`);
    } },
      h("label", {}, "Windows from", startIn), h("label", {}, "to", endIn),
      h("button", { type: "submit", text: "Show" })),
    h("div", { class: "controls" }, h("label", {}, "Filter by name", filter)),
    h("p", { class: "keys", text: "Without a range: the 48 windows up to the latest firing's window. " +
      `Firings: the newest ${FIRINGS_SHOWN}, newest first. ${PAGE_ROWS} rules are read at a time, ` +
      "more as you scroll; a rule's windows and firings are read when it comes into view." }),
    sections, list.box);
}

/** A rule's section: its definition at once, its windows and firings once
 * `ruleDetails` reads them. */
function ruleSection(rule) {
  const def = ["assets", "every", "tz", "policy", "from", "until", "deadline", "target", "key_format"];
  return h("section", { class: "rule", "data-rule": rule.rule, "aria-label": `rule ${rule.rule}`,
    "aria-busy": "true" },
    h("h3", { text: rule.rule }),
    h("dl", {}, def.map((k) => [h("dt", { text: k }),
      h("dd", { text: Array.isArray(rule[k]) ? rule[k].join(", ") : rule[k] == null ? "—" : String(rule[k]) })])),
    h("p", { class: "pending keys", text: "Windows and firings: read when this rule is in view." }));
}

/** Reads each rule's windows and firings once its section comes into view,
 * RULES_LOADING rules at a time: a section scrolled past before its turn
 * waits until it is seen again, so the requests stay with the rules that
 * were looked at, however many rules there are. */
function ruleDetails(params) {
  const ruleOf = new WeakMap();
  const seen = new Set(); // in view, not yet read
  let running = 0;
  let stopped = false;
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (e.isIntersecting) seen.add(e.target);
      else seen.delete(e.target);
    }
    pump();
  });
  // Where an earlier section grew as it was read, a section seen a moment
  // ago may be out of view by its turn: it stays seen (the observer drops
  // it) and is read only once in view.
  const inView = (el) => {
    const r = el.getBoundingClientRect();
    return r.top < window.innerHeight && r.bottom > 0;
  };
  function pump() {
    while (!stopped && running < RULES_LOADING) {
      const section = [...seen].find(inView);
      if (!section) return;
      seen.delete(section);
      observer.unobserve(section);
      running++;
      fillRule(section, ruleOf.get(section), params)
        .catch((e) => {
          if (e instanceof NeedToken) return;
          fail(e);
          section.append(h("p", { class: "error", text: e.message }));
        })
        .finally(() => {
          section.setAttribute("aria-busy", "false");
          running--;
          pump();
        });
    }
  }
  return {
    watch(section, rule) {
      ruleOf.set(section, rule);
      observer.observe(section);
    },
    forget() {
      seen.clear();
      observer.disconnect();
    },
    stop() {
      stopped = true;
      seen.clear();
      observer.disconnect();
    },
  };
}

async function fillRule(section, rule, params) {
  const firings = await recentFirings(rule.rule);
  let end = params.end ? params.end : null;
  let start = params.start ? params.start : null;
  if (!end) {
    const latest = firings.reduce((m, f) => Math.max(m, ms(f.window.end)), -Infinity);
    const stop = rule.until ? ms(rule.until) : Infinity;
    end = iso(Math.min(stop, Number.isFinite(latest) ? latest : ms(rule.from) + DAY));
  }
  if (!start) start = iso(Math.max(ms(rule.from), ms(end) - 48 * gridLength(rule.every)));
  const windows = h("div", { class: "rule-windows" }, h("h4", { text: `Windows from ${start} to ${end}` }));
  $(".pending", section).remove();
  section.append(windows);
  try {
    const answer = await api(`/v1/rules/${enc(rule.rule)}/windows`, { start, end });
    windows.append(heatmap(answer));
  } catch (e) {
    if (e instanceof NeedToken) throw e;
    fail(e);
    windows.append(h("p", { class: "error", text: e.message }));
  }
  const cols = ["Seq", "Kind", "Window", "Key", "Generation", "Covered", "Delivery", "Attempts", "Last error", "Recorded"];
  section.append(h("h4", { text: `Recent firings (${firings.length})` }),
    h("table", { class: "firings" },
      h("thead", {}, h("tr", {}, cols.map((t) => h("th", { scope: "col", text: t })))),
      h("tbody", {}, firings.map((f) => h("tr", { "data-seq": f.seq, "data-kind": f.kind, "data-key": f.key,
        "data-generation": f.generation, "data-delivery": f.delivery.state,
        "data-start": f.window.start, "data-end": f.window.end },
        h("td", { class: "num", text: String(f.seq) }), h("td", { text: f.kind }),
        h("td", { text: `${f.window.start} – ${f.window.end}` }), h("td", {}, h("code", { text: f.key })),
        h("td", { class: "num", text: String(f.generation) }), h("td", { class: "num", text: percent(f.covered_ratio) }),
        h("td", { class: `state-${f.delivery.state}`, text: f.delivery.target ? `${f.delivery.state} → ${f.delivery.target}` : f.delivery.state }),
        h("td", { class: "num", text: String(f.delivery.attempts) }),
        h("td", { class: "wrap", text: f.delivery.last_error || "" }), h("td", { text: f.recorded_at }))))));
}

window.addEventListener("hashchange", route);
route();
