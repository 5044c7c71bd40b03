#!/usr/bin/env python3
"""The task-side baseline of the ledger bench: what a consumer task does
without gapless. Read the month's events of one asset from the ledger file,
then sort, merge and complement them in Python to find the gaps.

usage: task_side.py LEDGER.db ASSET START END   (instants in RFC 3339, UTC)
"""
import sqlite3
import sys
from datetime import datetime, timezone


def micros(text):
    dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return int(dt.timestamp()) * 1_000_000 + dt.microsecond


def main():
    path, asset, start, end = sys.argv[1:5]
    s, e = micros(start), micros(end)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = db.execute(
        "SELECT e.start_us, e.end_us FROM events e JOIN assets a ON a.id = e.asset_id "
        "WHERE a.name = ? AND e.kind = 0 AND e.start_us < ? AND e.end_us > ?",
        (asset, e, s),
    ).fetchall()
    rows.sort()
    merged = []
    for a, b in rows:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    gaps, cursor = [], s
    for a, b in merged:
        if a > cursor:
            gaps.append((cursor, min(a, e)))
        cursor = max(cursor, b)
        if cursor >= e:
            break
    if cursor < e:
        gaps.append((cursor, e))
    covered = (e - s) - sum(b - a for a, b in gaps)
    print({"events": len(rows), "gaps": len(gaps), "covered_ratio": covered / (e - s)})


if __name__ == "__main__":
    main()
