"""The shared mappings (SPEC §10) on the real captures of data/ (README
there): what gapless.spark and gapless.iceberg make of them, and what a
server then says about coverage. The listener is driven here without
Spark (its callbacks fed the captured progresses), so restarts, replays
and an unavailable server are exact."""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timezone
from itertools import pairwise
from types import SimpleNamespace

import pytest
from conftest import load

import gapless
from gapless import iceberg
from gapless import spark as gs

QID = "e65b5d88-ca68-4712-8046-97f7a8bd1799"
UUID = "0f7e8b1c-1b7a-4c7e-9a57-2d9c3c1f0a11"  # the capture's metadata has no table-uuid


def t(text: str) -> datetime:
    return gapless._time.parse_instant(text)


def intervals(events):
    return [(t(e["start"]), t(e["end"])) for e in events]


def tiles(ivs) -> bool:
    return all(a[1] == b[0] for a, b in pairwise(ivs))


def test_progress_all_in_watermark_mode_tiles_batches_3_to_6():
    events, last = gs.progress_events(load("spark_progress_all.json"), "clicks")
    assert [e["id"] for e in events] == [f"{QID}:{b}" for b in (3, 4, 5, 6)]
    ivs = intervals(events)
    assert tiles(ivs)
    assert ivs[0][0] == t("2026-11-30T11:30:50.416Z")
    assert ivs[-1][1] == t("2026-11-30T11:31:09.416Z")
    assert last == {QID: t("2026-11-30T11:31:09.416Z")}
    assert events[0]["extra"] == {
        "source": "spark",
        "query_id": QID,
        "run_id": "72be8e83-81ca-4532-bce8-a19443140f07",
        "batch_id": 3,
        "num_input_rows": 200,
        "offsets": [
            {
                "description": "RateStreamV2[rowsPerSecond=20, rampUpTimeSeconds=0, numPartitions=default",
                "start": 8,
                "end": 13,
            }
        ],
    }


def test_progress_with_data_only_and_a_restart():
    events, _ = gs.progress_events(load("spark_progress.json"), "clicks")
    assert [e["id"] for e in events] == [f"{QID}:3", f"{QID}:4"]
    assert intervals(events) == [
        (t("2026-11-30T11:30:50.416Z"), t("2026-11-30T11:30:54.416Z")),
        (t("2026-11-30T11:30:54.416Z"), t("2026-11-30T11:30:59.416Z")),
    ]
    # a restart: the watermark before the first progress given
    all_ = load("spark_progress_all.json")
    again, _ = gs.progress_events(all_[5:], "clicks", previous={QID: t("2026-11-30T11:30:59.416Z")})
    assert [e["id"] for e in again] == [f"{QID}:5", f"{QID}:6"]
    assert again[0]["start"] == "2026-11-30T11:30:59.416Z"


def test_a_batch_run_again_maps_to_the_same_event():
    all_ = load("spark_progress_all.json")
    rerun = [dict(p, runId="another-run") for p in all_[4:6]]  # batches 4 and 5 again
    events, _ = gs.progress_events(all_ + rerun, "clicks")
    plain, _ = gs.progress_events(all_, "clicks")
    assert events == plain


def test_progress_events_recorded_give_a_gap_free_frontier(client):
    events, _ = gs.progress_events(load("spark_progress_all.json"), "clicks")
    assert client.record_many(events) == gapless.Recorded(4, 0)
    assert client.record_many(events) == gapless.Recorded(0, 4)  # a rerun: duplicates
    c = client.check("clicks", "2026-11-30T11:30:50.416Z", "2026-11-30T11:31:09.416Z")
    assert c.covered
    assert client.frontier("clicks").frontier == t("2026-11-30T11:31:09.416Z")


def test_foreachbatch_min_max_leaves_holes_that_snapping_closes():
    rows = [r for r in load("spark_foreachbatch_intervals.json") if r["rows"]]
    raw = [(r["event_min"] + "Z", r["event_max"] + "Z") for r in rows]
    seen = gapless.coverage(raw, raw[0][0], raw[-1][1])
    assert seen.missing_count == len(raw) - 1  # ~50 ms between one max and the next min
    snapped = [
        gs.snap(
            gapless._time.micros(t(a)), gapless._time.micros(t(b)), 1
        )
        for a, b in raw
    ]
    c = gapless.coverage(snapped, "2026-11-30T11:30:56Z", "2026-11-30T11:31:25Z")
    assert c.covered
    assert snapped[0][0] == t("2026-11-30T11:30:56Z") and snapped[-1][1] == t("2026-11-30T11:31:25Z")


def test_iceberg_snapshots_map_to_appends_and_one_overwrite_pair():
    meta = load("iceberg_snapshots.json")
    plan = iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID)
    assert plan.skipped == 0 and plan.cursor == 5
    assert [len(b) for b in plan.batches] == [1, 1, 1, 2]
    pair = plan.batches[-1]
    assert [e["kind"] for e in pair] == ["retracted", "landed"]
    assert [e["id"] for e in pair] == [
        f"iceberg:{UUID}:3088215254477912892",
        f"iceberg:{UUID}:4884366213967367083",
    ]
    assert pair[1]["extra"] == {
        "source": "iceberg",
        "snapshot_id": "4884366213967367083",
        "operation": "append",
        "sequence_number": 5,
    }
    assert (pair[0]["start"], pair[0]["end"]) == ("2025-06-01T10:00:00Z", "2025-06-01T11:00:00Z")
    assert pair[1]["produced_at"] == "2026-11-30T11:30:08.004Z"  # timestamp-ms 1796038208004
    assert iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID, after=5).batches == []
    assert len(iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID, after=3).batches) == 1


def test_iceberg_other_snapshots_are_skipped_and_counted():
    meta = load("iceberg_snapshots.json")
    snaps = meta["snapshots"]
    snaps[0]["summary"] = {"operation": "append"}  # no interval
    snaps[1]["summary"]["operation"] = "replace"  # a compaction: no data change
    # a delete whose append has another interval is not a pair
    snaps[4]["summary"]["interval_end"] = "2025-06-01T10:30:00Z"
    plan = iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID)
    assert plan.skipped == 2
    assert [[e["kind"] for e in b] for b in plan.batches] == [["landed"], ["retracted"], ["landed"]]
    snaps[0]["summary"]["interval_start"] = "2025-06-01T10:00:00Z"  # one property alone
    assert iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID).skipped == 2
    # without sequence numbers (a format-1 table): file order, every snapshot each time
    for snap in snaps:
        del snap["sequence-number"]
    plan = iceberg.snapshot_batches(meta, "clicks", table_uuid=UUID, after=5)
    assert [[e["extra"]["sequence_number"] for e in b] for b in plan.batches] == [[None]] * 3


def test_iceberg_capture_recorded(client):
    plan = iceberg.snapshot_batches(load("iceberg_snapshots.json"), "clicks", table_uuid=UUID)
    for batch in plan.batches:
        client.record_many(batch)
    assert client.check("clicks", "2025-06-01T10:00Z", "2025-06-01T11:00Z").covered
    segs = list(client.segments("clicks", "2025-06-01T10:00Z", "2025-06-01T11:00Z"))
    assert [(s.event.id, s.start, s.end) for s in segs] == [
        (f"iceberg:{UUID}:4884366213967367083", t("2025-06-01T10:00Z"), t("2025-06-01T11:00Z"))
    ]
    assert iceberg.cursor(client, "clicks", UUID) == 5
    assert iceberg.cursor(client, "clicks", "another-table") == 0
    assert iceberg.cursor(client, "nothing-here", UUID) == 0


def test_write_properties():
    assert iceberg.write_properties(
        datetime(2025, 6, 1, 12, tzinfo=timezone.utc), "2025-06-01T14:05:00+02:00"
    ) == {"interval_start": "2025-06-01T12:00:00Z", "interval_end": "2025-06-01T12:05:00Z"}
    assert iceberg.write_properties(
        "2025-06-01T10:00", "2025-06-01T11:00", start_property="from", end_property="to"
    ) == {"from": "2025-06-01T10:00:00Z", "to": "2025-06-01T11:00:00Z"}
    with pytest.raises(ValueError, match="empty or reversed"):
        iceberg.write_properties("2025-06-01T11:00Z", "2025-06-01T10:00Z")


# -- the listener, fed the captured progresses --------------------------------


def feed(listener, progresses):
    for p in progresses:
        listener.onQueryProgress(SimpleNamespace(progress=SimpleNamespace(json=json.dumps(p))))
    assert listener.flush(30)


def stored(client, asset):
    return [(e.id, e.start, e.end) for e in client.events(asset)]


def test_listener_records_each_moving_watermark_and_continues_after_a_restart(client):
    all_ = load("spark_progress_all.json")
    first = gs.GaplessListener(client, "clicks")
    feed(first, all_[:5])  # batches 0-4
    first.close()
    assert first.recorded == 2
    # the process restarts; Spark runs batch 4 again (another run id), then 5 and 6
    second = gs.GaplessListener(client, "clicks")
    feed(second, [dict(p, runId="run-2") for p in all_[4:]])
    second.close()
    assert (second.recorded, second.duplicates, second.dropped) == (2, 1, 0)
    rows = stored(client, "clicks")
    assert [r[0] for r in rows] == [f"{QID}:{b}" for b in (3, 4, 5, 6)]
    assert tiles([r[1:] for r in rows])
    assert client.frontier("clicks").frontier == t("2026-11-30T11:31:09.416Z")


def test_listener_never_blocks_and_retries_while_the_server_is_down(server, caplog):
    all_ = load("spark_progress_all.json")
    with gapless.Client(server.url, retries=0) as c:
        listener = gs.GaplessListener(c, "clicks", retry_backoff=0.1, max_backoff=0.5)
        server.stop()
        began = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="gapless.spark"):
            for p in all_:
                listener.onQueryProgress(SimpleNamespace(progress=SimpleNamespace(json=json.dumps(p))))
            assert time.monotonic() - began < 1.0  # the query never waits
            assert not listener.flush(1.0)
            server.start()
            assert listener.flush(30)
        listener.close()
        assert listener.failures > 0 and listener.recorded == 4
        assert any("trying again" in r.message for r in caplog.records)
        assert c.check("clicks", "2026-11-30T11:30:50.416Z", "2026-11-30T11:31:09.416Z").covered


def test_listener_mode_is_checked(client):
    with pytest.raises(ValueError, match="record_batch"):
        gs.GaplessListener(client, "clicks", mode="event_time")


def test_listener_drops_and_logs_what_the_server_refuses(client, caplog):
    client.record("clicks", "2026-11-30T11:00Z", "2026-11-30T11:01Z", id=f"{QID}:3")  # another interval
    listener = gs.GaplessListener(client, "clicks")
    with caplog.at_level(logging.ERROR, logger="gapless.spark"):
        feed(listener, load("spark_progress_all.json"))
    listener.close()
    assert (listener.recorded, listener.dropped) == (3, 1)
    assert any(f"batch 3 of query {QID} not recorded" in r.getMessage() for r in caplog.records)


def test_listener_warns_once_for_a_query_without_a_watermark(client, caplog):
    listener = gs.GaplessListener(client, "clicks")
    plain = [{k: v for k, v in p.items() if k != "eventTime"} for p in load("spark_progress_all.json")]
    with caplog.at_level(logging.WARNING, logger="gapless.spark"):
        feed(listener, plain)
    listener.close()
    assert listener.recorded == 0
    assert sum("reports no watermark" in r.getMessage() for r in caplog.records) == 1


def test_gapless_ingest_format_maps_the_captures_event_for_event(ledger, make_server):
    """The shared mappings: what `gapless ingest --format` stored from a
    capture, the adapters' events of the same capture duplicate exactly
    (same ids, same content; a difference would be a conflict)."""
    from conftest import DATA, shared

    for args in (
        ["spark_progress_all.json", "--format", "spark-progress", "--asset", "clicks"],
        ["iceberg_snapshots.json", "--format", "iceberg-snapshots", "--asset", "orders",
         "--table-uuid", UUID],
    ):
        r = shared.run("ingest", str(DATA / args[0]), *args[1:], "--json", db=ledger.db)
        assert r.returncode == 0, r.stderr
    spark_events, _ = gs.progress_events(load("spark_progress_all.json"), "clicks")
    plan = iceberg.snapshot_batches(load("iceberg_snapshots.json"), "orders", table_uuid=UUID)
    with gapless.Client(make_server().url) as c:
        assert c.record_many(spark_events) == gapless.Recorded(0, 4)
        assert c.record_many([e for b in plan.batches for e in b]) == gapless.Recorded(0, 5)
        assert iceberg.cursor(c, "orders", UUID) == 5
