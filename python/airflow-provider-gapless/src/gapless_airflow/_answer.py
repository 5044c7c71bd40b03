"""The coverage answer the sensors return (their XCom) and the words their
logs and errors use: one shape for one asset and for several.

The answer is the server's check JSON (SPEC §3 ``check --json``):
``{"asset", "start", "end", "covered", "covered_ratio", "missing",
"missing_count", "policy", "complete"}``; for several assets (their joint
coverage, ``POST /v1/coverage``) ``"assets"`` in place of ``"asset"``, with
``policy`` and ``complete`` judged here as the server judges them.
"""

from __future__ import annotations

import re
from typing import Any

from . import _time as t

_RATIO = re.compile(r"ratio\s*>=\s*([0-9]*\.?[0-9]+)$")
_GAP = re.compile(r"gap\s*<\s*(.+)$")


def policy_text(
    policy: str | None = None, min_ratio: float | None = None, max_gap: t.DurationLike | None = None
) -> str | None:
    """One policy text from the three ways of giving one (at most one)."""
    given = [x for x in (policy, min_ratio, max_gap) if x is not None and x != ""]
    if len(given) > 1:
        raise ValueError("policy: give at most one of policy, min_ratio and max_gap")
    if min_ratio is not None:
        return f"ratio>={min_ratio}"
    if max_gap is not None:
        d = t.duration(max_gap, "max_gap")
        return f"gap<{t.iso_duration(d)}"
    return policy or None


def complete_under(answer: dict[str, Any], policy: str | None) -> bool:
    """Whether a coverage answer is complete under ``policy`` (SPEC §1):
    ``full`` no gap, ``ratio>=R`` covered share at least R, ``gap<D`` every
    gap shorter than D."""
    p = (policy or "full").strip()
    if p == "full":
        return not answer["missing_count"]
    m = _RATIO.match(p)
    if m:
        r = float(m.group(1))
        if not 0 <= r <= 1:
            raise ValueError(f"policy {policy!r}: the ratio {r} is not between 0 and 1")
        return r >= 1 and not answer["missing_count"] or r < 1 and answer["covered_ratio"] >= r
    m = _GAP.match(p)
    if m:
        d = t.duration(m.group(1).strip(), f"policy {policy!r}")
        if d.fixed is None:
            raise ValueError(
                f"policy {policy!r}: a gap length is a fixed duration (no months or years)"
            )
        if answer["missing_count"] > len(answer["missing"]):
            return False  # gaps beyond the listed ones cannot be judged: not complete
        for g in answer["missing"]:
            if t.instant(g["end"], "end") - t.instant(g["start"], "start") >= d.fixed:
                return False
        return True
    raise ValueError(f"policy {policy!r}: not a policy (full, ratio>=R, gap<D)")


def joint(raw: dict[str, Any], policy: str | None) -> dict[str, Any]:
    """The answer of several assets: the joint coverage with its policy and completeness."""
    out = dict(raw)
    out["policy"] = (policy or "full").strip()
    out["complete"] = complete_under(raw, policy)
    return out


def subject(answer: dict[str, Any]) -> str:
    """``orders`` or ``orders+payments``."""
    if "asset" in answer:
        return str(answer["asset"])
    return "+".join(answer.get("assets", []))


def describe(answer: dict[str, Any], gaps: int = 10) -> str:
    """One line: the assets, the range, the policy, the covered share and
    the gaps (the first ``gaps`` listed, then how many more).

    >>> describe({"asset": "orders", "start": "2025-06-14T00:00:00Z", "end": "2025-06-15T00:00:00Z",
    ...           "covered_ratio": 0.99, "missing_count": 1, "policy": "full", "complete": False,
    ...           "missing": [{"start": "2025-06-14T03:10:00Z", "end": "2025-06-14T03:25:00Z"}]})
    'orders [2025-06-14T00:00:00Z, 2025-06-15T00:00:00Z) is not complete under full: covered 99.000%, 1 gap: [2025-06-14T03:10:00Z, 2025-06-14T03:25:00Z)'
    """
    state = "complete" if answer.get("complete") else "not complete"
    head = (
        f"{subject(answer)} [{answer['start']}, {answer['end']}) is {state} under "
        f"{answer.get('policy', 'full')}: covered {100 * answer['covered_ratio']:.3f}%"
    )
    n = answer["missing_count"]
    if not n:
        return head + ", no gap"
    listed = ", ".join(f"[{g['start']}, {g['end']})" for g in answer["missing"][:gaps])
    more = n - min(n, gaps, len(answer["missing"]))
    return (
        head + f", {n} gap{'s' if n != 1 else ''}: {listed}" + (f" and {more} more" if more else "")
    )
