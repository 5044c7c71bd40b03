"""Schemathesis hooks of scripts/fuzz-api (loaded through SCHEMATHESIS_HOOKS).

Two things the generic fuzzer cannot know:

- the check that no answer is a 422 (SPEC §4: bad input is 400, never 422);
- values that reach real data: a random asset name is almost always unknown
  (404), a random string is never an instant (400). The hooks below put the
  seeded assets and some valid instants, grids, zones and policies among the
  generated values, so the questions are also answered from the seeded
  ledger, not only refused. Each is drawn beside the fuzzer's own value,
  never instead of it.
"""

from __future__ import annotations

import schemathesis
from hypothesis import strategies as st

# What scripts/fuzz-api seeds.
ASSETS = ["orders", "clicks", "s3://lake/a/orders"]
# In time order, no two the same instant, so any two make a range.
INSTANTS = [
    "2025-06-01",
    "2025-06-01T03:00",
    "2025-06-01T12:00:00+02:00",
    "2025-06-02T00:00:00Z",
    "2025-06-03",
]
VALID = {
    "asset": ASSETS,
    "start": INSTANTS,
    "end": INSTANTS,
    "origin": INSTANTS,
    "produced_at": INSTANTS,
    "every": ["5m", "1h", "1d", "1w", "1mo"],
    "tz": ["UTC", "Europe/Berlin", "America/New_York"],
    "policy": ["full", "ratio>=0.9", "gap<10m"],
    "min_ratio": ["0.5", "1"],
    "max_gap": ["10m", "PT1H"],
    "kind": ["landed", "retracted"],
    "key_format": ["%Y-%m-%d", "%Y%m%dT%H"],
    "limit": [1, 2, 1000],
    # Firings' and events' cursors, and an assets page's ("orders" in
    # unpadded base64url).
    "after": ["0", "1", "2", "b3JkZXJz"],
    "prefix": ["s3://lake/", "o", "orders_"],
    "contains": ["orders", "c"],
    "buckets": [1, 10, 100],
    "key_span": ["PT5M", "1h", "none"],
    "extra": [{"rows": 1}, None],
    # Ids repeat, so that some events are duplicates and some conflicts.
    "id": ["fz-1", "fz-2", "fz-3"],
    "partition_key": ["2025-06-04/2025-06-05", "2025-06-01T10:15:00"],
    # Long polls: short waits, so that a run asks many questions.
    "timeout": ["1s", "PT0.2S"],
    "wait": ["1s", "PT0.2S"],
    "from": INSTANTS,
    "until": INSTANTS,
    # POST /v1/prune: its coverage answers stay; segments before it name
    # no event from then on.
    "before": INSTANTS,
}
POLICY_FORMS = ("policy", "min_ratio", "max_gap")


@schemathesis.check
def no_422(ctx, response, case):
    """SPEC §4: bad input is answered 400, never 422."""
    if response.status_code == 422:
        raise AssertionError(f"422 answered (SPEC §4: 400 for bad input, never 422): {response.text[:300]}")


def _coherent(values):
    """`values` made a valid question: a non-empty range, one policy form."""
    out = dict(values)
    # Both bounds or neither; an event needs an interval in some form.
    if ("start" in out) != ("end" in out) or ("asset" in out and "partition_key" not in out):
        out.setdefault("start", INSTANTS[0])
        out.setdefault("end", INSTANTS[1])
    if out.get("start") in INSTANTS and out.get("end") in INSTANTS:
        a, b = sorted((INSTANTS.index(out["start"]), INSTANTS.index(out["end"])))
        if a == b:
            a, b = (a, a + 1) if a + 1 < len(INSTANTS) else (a - 1, a)
        out["start"], out["end"] = INSTANTS[a], INSTANTS[b]
    if "partition_key" in out and ("start" in out or "end" in out):
        del out["partition_key"]
    forms = [k for k in POLICY_FORMS if k in out]
    for k in forms[1:]:
        del out[k]
    return out


def _valid(values):
    """The same keys as `values`, with valid values."""
    return st.fixed_dictionaries(
        {k: (st.sampled_from(VALID[k]) if k in VALID else st.just(v)) for k, v in values.items()}
    ).map(_coherent)


def _fill(values):
    """The fuzzer's `values`, or the same keys with valid values."""
    if not isinstance(values, dict) or not any(k in VALID for k in values):
        return st.just(values)
    return st.one_of(st.just(values), _valid(values))


@schemathesis.hook
def flatmap_path_parameters(ctx, path_parameters):
    if isinstance(path_parameters, dict) and "asset" in path_parameters:
        asset = path_parameters["asset"]
        return st.one_of(st.just(asset), st.sampled_from(ASSETS)).map(
            lambda a: {**path_parameters, "asset": a}
        )
    return st.just(path_parameters)


@schemathesis.hook
def flatmap_query(ctx, query):
    return _fill(query)


@schemathesis.hook
def flatmap_body(ctx, body):
    # POST /v1/coverage: {"assets", "start", "end", "tz"}; POST
    # /v1/buckets: {"assets": [{"asset", "start", "end"}], "buckets", "tz"};
    # events: one object or an array of them.
    if isinstance(body, dict):
        items = body.get("assets")
        if isinstance(items, list) and items and all(isinstance(i, dict) for i in items):
            valid_items = st.tuples(*[_fill(i) for i in items]).map(list)
            return st.tuples(valid_items, _fill({k: v for k, v in body.items() if k != "assets"})).map(
                lambda t: {**t[1], "assets": t[0]}
            )
        if "assets" in body and isinstance(body["assets"], list):
            assets = st.one_of(st.just(body["assets"]), st.lists(st.sampled_from(ASSETS), min_size=1, max_size=3))
            return st.tuples(assets, _fill({k: v for k, v in body.items() if k != "assets"})).map(
                lambda t: {**t[1], "assets": t[0]}
            )
        return _fill(body)
    if isinstance(body, list) and body and all(isinstance(item, dict) for item in body):
        return st.one_of(st.just(body), st.tuples(*[_valid(item) for item in body]).map(list))
    return st.just(body)
