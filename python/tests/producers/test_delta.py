"""gapless.delta against real deltalake (delta-rs) tables on disk and a real
`gapless serve` (SQLite and PostgreSQL ledgers); `gapless ingest --format
delta-log` on the same tables stores the same events."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest
from conftest import shared
from deltalake import CommitProperties, DeltaTable, Transaction, write_deltalake

import gapless
from gapless import delta

T0 = datetime(2025, 6, 1, 10, tzinfo=timezone.utc)
HOUR = T0 + timedelta(hours=1)
SCHEMA = pa.schema([("event_ts", pa.timestamp("us", tz="UTC")), ("n", pa.int64())])


def rows(start: datetime, minutes: int) -> pa.Table:
    ts = [start + timedelta(minutes=m) for m in range(minutes)]
    return pa.Table.from_pylist([{"event_ts": t, "n": i} for i, t in enumerate(ts)], schema=SCHEMA)


def five(i: int) -> tuple[datetime, datetime]:
    s = T0 + timedelta(minutes=5 * i)
    return s, s + timedelta(minutes=5)


def lit(t: datetime) -> str:
    return f"'{t.strftime('%Y-%m-%d %H:%M:%S')}'"


def ingest(server, path, *args: str):
    """`gapless ingest PATH --format delta-log ARGS` against the server."""
    return shared.run(
        "ingest", str(path), "--format", "delta-log", *args, "--url", server.url, "--json"
    )


@pytest.mark.parametrize("overwrite", ["replaceWhere", "whole table"])
def test_twelve_appends_then_an_overwrite_of_the_hour_fire_complete_once(
    client, tmp_path, overwrite
):
    path = str(tmp_path / "clicks")
    client.declare("clicks")
    client.set_rule("clicks_hourly", assets=["clicks"], every="1h", from_="2025-06-01")
    for i in range(12):
        s, e = five(i)
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e))
        synced = delta.sync(client, path, "clicks")
        assert synced == delta.Synced(recorded=1, duplicates=0, skipped=0, cursor=i)
    predicate = f"event_ts >= {lit(T0)} AND event_ts < {lit(HOUR)}"
    write_deltalake(
        path,
        rows(T0, 60),
        mode="overwrite",
        predicate=predicate if overwrite == "replaceWhere" else None,
        commit_properties=delta.commit_properties(T0, HOUR),
    )
    table = DeltaTable(path)
    [info] = table.history(1)
    assert info["operation"] == "WRITE" and info["operationParameters"]["mode"] == "Overwrite"
    assert table.count() == 60
    synced = delta.sync(client, table, "clicks")
    assert synced == delta.Synced(recorded=1, duplicates=0, skipped=0, cursor=12)
    assert delta.sync(client, table, "clicks").recorded == 0  # a rerun: nothing new

    firings = list(client.firings(rule="clicks_hourly"))
    assert [(f.kind, f.key, f.generation) for f in firings] == [("complete", "2025-06-01T10:00:00", 1)]
    table_id = table.metadata().id
    segs = list(client.segments("clicks", T0, HOUR))
    assert [(s.event.id, s.start, s.end, s.kind) for s in segs] == [
        (f"delta:{table_id}:12", T0, HOUR, "landed")
    ]
    [hourly] = [e for e in client.events("clicks") if e.id == f"delta:{table_id}:12"]
    expected = {"source": "delta", "table_id": table_id, "version": 12, "operation": "WRITE",
                "mode": "Overwrite"}
    if overwrite == "replaceWhere":  # as delta-rs wrote it down (with its casts)
        expected["predicate"] = info["operationParameters"]["predicate"]
        assert "2025-06-01T11:00:00" in expected["predicate"]
    assert hourly.extra == expected
    assert client.check("clicks", T0, HOUR).covered
    assert delta.cursor(client, "clicks", table_id) == 12


def test_a_delete_retracts_and_a_later_append_completes_again(client, tmp_path):
    path = str(tmp_path / "clicks")
    client.declare("clicks")
    client.set_rule("clicks_hourly", assets=["clicks"], every="1h", from_="2025-06-01")
    for i in range(12):
        s, e = five(i)
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e))
    assert delta.sync(client, path, "clicks").recorded == 12  # twelve commits in one sync
    half = T0 + timedelta(minutes=30)
    table = DeltaTable(path)
    table.delete(f"event_ts >= {lit(half)}", commit_properties=delta.commit_properties(half, HOUR))
    assert table.count() == 30
    assert delta.sync(client, table, "clicks") == delta.Synced(1, 0, 0, 12)
    [retracted] = client.events("clicks", kind="retracted")
    assert retracted.extra["operation"] == "DELETE" and retracted.extra["version"] == 12
    assert client.check("clicks", T0, HOUR).missing == [gapless.Interval(half, HOUR)]
    write_deltalake(path, rows(half, 30), mode="append", commit_properties=delta.commit_properties(half, HOUR))
    assert delta.sync(client, path, "clicks").recorded == 1
    firings = [(f.kind, f.generation) for f in client.firings(rule="clicks_hourly")]
    assert firings == [("complete", 1), ("incomplete", 1), ("complete", 2)]


def test_commits_without_an_interval_are_skipped_and_counted(client, tmp_path):
    path = str(tmp_path / "clicks")
    write_deltalake(path, rows(T0, 5), mode="append")  # no interval
    write_deltalake(
        path, rows(T0, 5), mode="append",
        commit_properties=CommitProperties(custom_metadata={"from": "2025-06-01T10:00Z", "to": "2025-06-01T10:05Z"}),
    )
    DeltaTable(path).optimize.compact(commit_properties=delta.commit_properties(T0, HOUR))
    synced = delta.sync(client, path, "clicks")
    assert (synced.recorded, synced.skipped, synced.cursor) == (0, 3, 2)
    synced = delta.sync(client, path, "clicks", start_property="from", end_property="to")
    assert (synced.recorded, synced.skipped, synced.cursor) == (1, 2, 2)
    [event] = client.events("clicks")
    assert (event.start, event.end, event.extra["version"]) == (T0, T0 + timedelta(minutes=5), 1)
    r = shared.run("ingest", path, "--format", "delta-log", "--asset", "other", "--db",
                   str(tmp_path / "side.db"), "--json")
    assert r.returncode == 0, r.stderr
    assert "left out 3: 2 no interval properties, 1 operation OPTIMIZE" in r.stderr


def test_streaming_txn_versions_name_the_batches(client, tmp_path):
    path = str(tmp_path / "clicks")

    def write(i: int, txn: int) -> None:
        s, e = five(i)
        props = delta.commit_properties(s, e, app_transactions=[Transaction(app_id="query-1", version=txn)])
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=props)

    write(0, 0)
    write(1, 1)
    assert delta.sync(client, path, "clicks").recorded == 2
    # a writer restarted from an old checkpoint commits batch 1 again: it is
    # already recorded (the txn version is not above the app's), not landed twice
    write(1, 1)
    write(2, 2)
    synced = delta.sync(client, path, "clicks")
    assert synced == delta.Synced(recorded=1, duplicates=0, skipped=1, cursor=3)
    table_id = DeltaTable(path).metadata().id
    events = list(client.events("clicks"))
    assert [e.id for e in events] == [f"delta:{table_id}:txn:query-1:{n}" for n in (0, 1, 2)]
    assert events[2].extra == {"source": "delta", "table_id": table_id, "version": 3,
                               "operation": "WRITE", "mode": "Append", "app_id": "query-1",
                               "txn_version": 2}
    assert delta.cursor(client, "clicks", table_id) == 3


def test_ingest_delta_log_stores_the_same_events(client, server, tmp_path):
    path = tmp_path / "clicks"
    for i in range(3):
        s, e = five(i)
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e))
    write_deltalake(path, rows(T0, 5), mode="append")  # skipped
    write_deltalake(
        path, rows(T0, 60), mode="overwrite", predicate=f"event_ts >= {lit(T0)}",
        commit_properties=delta.commit_properties(T0, HOUR),
    )
    DeltaTable(path).delete(
        f"event_ts >= {lit(T0 + timedelta(minutes=50))}",
        commit_properties=delta.commit_properties(T0 + timedelta(minutes=50), HOUR),
    )
    s, e = five(12)
    write_deltalake(
        path, rows(s, 5), mode="append",
        commit_properties=delta.commit_properties(s, e, app_transactions=[Transaction("q", 7)]),
    )
    assert delta.sync(client, str(path), "clicks") == delta.Synced(6, 0, 1, 6)
    # into the same asset: every event a duplicate (same ids, same content)
    r = ingest(server, path, "--asset", "clicks")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 0 and json.loads(r.stdout)["duplicates"] == 6
    assert "6 events from 7 delta-log records; left out 1: 1 no interval properties" in r.stderr
    # into another, from the _delta_log directory itself: the same events
    r = ingest(server, path / "_delta_log", "--asset", "copy")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["accepted"] == 6

    def content(asset):
        return [(e.id, e.start, e.end, e.kind, e.extra, e.produced_at) for e in client.events(asset)]

    assert len(content("copy")) == 6 and content("copy") == content("clicks")
    kinds = [e.kind for e in client.events("copy")]
    assert kinds == ["landed"] * 4 + ["retracted", "landed"]


def cleaned_table(tmp_path) -> str:
    """Five commits with intervals, the first three cleaned up by log
    retention (a checkpoint at version 3, then cleanup_metadata)."""
    path = str(tmp_path / "clicks")
    for i in range(5):
        s, e = five(i)
        write_deltalake(
            path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e),
            configuration={"delta.logRetentionDuration": "interval 0 seconds"} if i == 0 else None,
        )
        if i == 3:
            DeltaTable(path).create_checkpoint()
    time.sleep(0.05)
    DeltaTable(path).cleanup_metadata()
    names = sorted(n for n in os.listdir(f"{path}/_delta_log") if n.endswith(".json"))
    assert names == ["00000000000000000003.json", "00000000000000000004.json"]
    return path


def test_commits_cleaned_up_by_log_retention_are_named(client, server, tmp_path):
    path = cleaned_table(tmp_path)
    with pytest.raises(delta.MissingCommits, match=r"version 0 is not in the log .*oldest commit left is version 3") as err:
        delta.sync(client, path, "clicks")
    assert (err.value.version, err.value.oldest) == (0, 3)
    synced = delta.sync(client, path, "clicks", from_oldest=True)
    assert synced == delta.Synced(recorded=2, duplicates=0, skipped=0, cursor=4)
    assert [e.extra["version"] for e in client.events("clicks")] == [3, 4]

    r = ingest(server, path, "--asset", "copy")
    assert r.returncode == 2
    assert "version 0 is not in the log" in r.stderr and "--from-oldest" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    table_id = DeltaTable(path).metadata().id
    r = ingest(server, path, "--asset", "copy", "--from-oldest")
    assert r.returncode == 2 and "--table-uuid" in r.stderr  # metaData is in the checkpoint only
    r = ingest(server, path, "--asset", "clicks", "--from-oldest", "--table-uuid", table_id)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["duplicates"] == 2


def test_a_cursor_inside_the_cleaned_up_commits_names_the_next_version(client, tmp_path):
    path = str(tmp_path / "clicks")
    for i in range(2):
        s, e = five(i)
        write_deltalake(
            path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e),
            configuration={"delta.logRetentionDuration": "interval 0 seconds"} if i == 0 else None,
        )
    assert delta.sync(client, path, "clicks").cursor == 1
    for i in range(2, 6):
        s, e = five(i)
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e))
    DeltaTable(path).create_checkpoint()
    time.sleep(0.05)
    DeltaTable(path).cleanup_metadata()
    with pytest.raises(delta.MissingCommits, match=r"version 2 is not in the log"):
        delta.sync(client, path, "clicks")
    assert delta.sync(client, path, "clicks", from_oldest=True).recorded == 1
    assert client.check("clicks", T0, five(5)[1]).missing == [gapless.Interval(five(2)[0], five(5)[0])]


def test_the_store_reader_reads_what_the_local_one_does(tmp_path):
    path = tmp_path / "clicks"
    for i in range(3):
        s, e = five(i)
        write_deltalake(path, rows(s, 5), mode="append", commit_properties=delta.commit_properties(s, e))
    local = delta.log_commits(str(path), after=0)
    assert [v for v, _ in local] == [1, 2]
    uri = DeltaTable(path).table_uri
    assert uri.startswith("file://") and delta.log_commits(uri, after=0) == local
    # what a URI of an object store is read through (deltalake.fs), here on
    # the local file system
    assert delta._store_commits(uri, after=0, storage_options=None) == local


def test_bad_intervals_are_refused_naming_the_commit(client, tmp_path):
    with pytest.raises(ValueError, match="empty or reversed"):
        delta.commit_properties(HOUR, T0)
    path = str(tmp_path / "clicks")
    write_deltalake(
        path, rows(T0, 5), mode="append",
        commit_properties=CommitProperties(custom_metadata={"interval_start": 5, "interval_end": "x"}),
    )
    with pytest.raises(ValueError, match="version 0: commitInfo interval_start is 5, not RFC 3339 text"):
        delta.sync(client, path, "clicks")
    r = shared.run("ingest", path, "--format", "delta-log", "--asset", "a", "--db", str(tmp_path / "l.db"))
    assert r.returncode == 2
    assert "version 0: commitInfo interval_start is 5, not RFC 3339 text" in r.stderr


def test_the_captured_log_maps_as_ingest_does(ledger, make_server):
    """data/delta_clicks: the mapping of the real delta-rs log, and what
    `gapless ingest --format delta-log` stored from it duplicates exactly."""
    from conftest import DATA

    log = DATA / "delta_clicks" / "_delta_log"
    table_id = "b5fa1855-d74d-4f9f-88b4-c829413ae584"
    commits = delta.log_commits(str(DATA / "delta_clicks"))
    assert [v for v, _ in commits] == list(range(17))
    plan = delta.commit_batches(commits, "lake", table_id=table_id)
    events = [e for b in plan.batches for e in b]
    assert (len(events), plan.skipped, plan.cursor) == (15, 2, 16)
    assert [e["id"] for e in events[-3:]] == [
        f"delta:{table_id}:12", f"delta:{table_id}:14", f"delta:{table_id}:txn:query-1:0"
    ]
    assert [e["kind"] for e in events[-3:]] == ["landed", "retracted", "landed"]
    r = shared.run("ingest", str(log), "--format", "delta-log", "--asset", "lake", "--json",
                   db=ledger.db)
    assert r.returncode == 0, r.stderr
    with gapless.Client(make_server().url) as c:
        assert c.record_many(events) == gapless.Recorded(0, 15)
        assert delta.cursor(c, "lake", table_id) == 15  # the OPTIMIZE at 16 records nothing
    # later versions only, and the txn versions already recorded
    later = delta.commit_batches(commits, "lake", table_id=table_id, after=14,
                                 txn_versions={"query-1": 0})
    assert (later.batches, later.skipped, later.cursor) == ([], 2, 16)
