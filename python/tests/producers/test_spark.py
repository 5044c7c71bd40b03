"""gapless.spark against real pyspark 4 streaming queries (local[2], one
session for the module) and a real `gapless serve`.

File-source queries read one JSON file a batch (`maxFilesPerTrigger=1`,
`availableNow`), so each batch's rows, and so each watermark, are known in
advance: batch b's watermark is the newest event time of the batches before
it less the delay (Spark's own rule). A rate-source query with 1-second
triggers runs the listener and foreachBatch's `record_batch` as a user
would."""

from __future__ import annotations

import json
import os
import time
import uuid
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path

import pytest

import gapless
from gapless import spark as gs

pytest.importorskip("pyspark")

T0 = datetime(2025, 6, 1, 10, tzinfo=timezone.utc)
DELAY = 5  # seconds of withWatermark


def asset() -> str:
    return f"spark-{uuid.uuid4().hex[:8]}"


def write_files(folder: Path, sizes: list[int], first: int = 0) -> None:
    """File k holds `sizes[k]` rows, one a second from T0 + 10k s; mtimes
    increase, so the file source takes them in order."""
    folder.mkdir(exist_ok=True)
    for k, size in enumerate(sizes, first):
        path = folder / f"part-{k:03d}.json"
        with path.open("w") as f:
            for i in range(size):
                ts = T0 + timedelta(seconds=10 * k + i)
                f.write(json.dumps({"ts": ts.isoformat(), "n": i}) + "\n")
        os.utime(path, (1_700_000_000 + k, 1_700_000_000 + k))


def run_files(spark, folder: Path, checkpoint: Path, listener, each_batch=None):
    """One availableNow run over the files not yet read; waits until the
    listener has recorded every progress of it."""
    spark.streams.addListener(listener)
    try:
        df = (
            spark.readStream.schema("ts TIMESTAMP, n BIGINT")
            .option("maxFilesPerTrigger", 1)
            .json(str(folder))
            .withWatermark("ts", f"{DELAY} seconds")
        )
        q = (
            df.writeStream.foreachBatch(each_batch or (lambda d, b: d.count()))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(120)
        last = q.lastProgress["batchId"] if q.lastProgress else None
        deadline = time.monotonic() + 30
        while last is not None and listener.last_batch.get(q.id) != last:
            assert time.monotonic() < deadline, "the listener missed progresses"
            time.sleep(0.05)
        assert listener.flush(30)
        return q
    finally:
        spark.streams.removeListener(listener)


def stored(client, name):
    try:
        return [(e.id, e.start, e.end) for e in client.events(name)]
    except gapless.NotFound:
        return []


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def assert_tiles(rows):
    for a, b in pairwise(rows):
        assert a[2] == b[1], f"{a} and {b} leave a gap or overlap"


def test_watermark_mode_is_gap_free_and_an_empty_batch_records_nothing(
    spark, module_client, tmp_path
):
    name, explicit = asset(), asset()
    write_files(tmp_path / "in", [10, 10, 0, 10, 10])  # file 2 is empty
    listener = gs.GaplessListener(module_client, name)

    def each_batch(df, batch_id):
        # Spark's event-time statistics (so the watermark) come from rows
        # the batch function reads: a sink that reads nothing moves nothing.
        df.write.mode("append").parquet(str(tmp_path / "out"))
        s = at(10 * batch_id)
        gs.record_batch(module_client, explicit, df, batch_id, start=s, end=s + timedelta(seconds=10))

    q = run_files(spark, tmp_path / "in", tmp_path / "ckpt", listener, each_batch)
    listener.close()
    # watermarks: 0 epoch, 1 @4s, 2 @14s, 3 (after the empty file) @14s, 4 @34s
    rows = stored(module_client, name)
    assert [r[0] for r in rows] == [f"{q.id}:2", f"{q.id}:4"]
    assert [(r[1], r[2]) for r in rows] == [(at(4), at(14)), (at(14), at(34))]
    assert module_client.frontier(name).frontier == at(34)
    assert module_client.check(name, at(4), at(34)).covered
    assert listener.dropped == 0 and listener.duplicates == 0
    # record_batch with explicit intervals, id <query id>:<batch id>
    assert [r[0] for r in stored(module_client, explicit)] == [f"{q.id}:{b}" for b in range(5)]
    assert module_client.check(explicit, at(0), at(50)).covered


def test_a_restart_from_the_checkpoint_records_no_overlap_and_no_duplicate(
    spark, module_client, tmp_path
):
    name = asset()
    folder, ckpt = tmp_path / "in", tmp_path / "ckpt"
    write_files(folder, [10, 10, 10])
    first = gs.GaplessListener(module_client, name)
    q1 = run_files(spark, folder, ckpt, first)
    first.close()
    write_files(folder, [10, 10, 10], first=3)
    second = gs.GaplessListener(module_client, name)  # a new process: knows nothing
    q2 = run_files(spark, folder, ckpt, second)
    second.close()
    assert q1.id == q2.id and q1.runId != q2.runId
    rows = stored(module_client, name)
    ids = [r[0] for r in rows]
    assert len(ids) == len(set(ids))
    assert ids == [f"{q1.id}:{b}" for b in (2, 3, 4, 5)]
    assert_tiles(rows)
    assert (rows[0][1], rows[-1][2]) == (at(4), at(44))
    assert module_client.frontier(name).frontier == at(44)


def test_rate_source_with_one_second_triggers(spark, module_client, tmp_path):
    name, seen = asset(), asset()
    listener = gs.GaplessListener(module_client, name)
    spark.streams.addListener(listener)
    try:
        df = (
            spark.readStream.format("rate")
            .option("rowsPerSecond", 20)
            .load()
            .withWatermark("timestamp", "1 second")
        )

        def each_batch(batch_df, batch_id):
            batch_df.count()
            gs.record_batch(module_client, seen, batch_df, batch_id, column="timestamp", resolution=1)

        q = (
            df.writeStream.foreachBatch(each_batch)
            .option("checkpointLocation", str(tmp_path / "ckpt"))
            .trigger(processingTime="1 second")
            .start()
        )
        deadline = time.monotonic() + 60
        while len(stored(module_client, name)) < 2:
            assert time.monotonic() < deadline, "no watermark moved in 60 s"
            time.sleep(0.5)
        q.stop()
        last = q.lastProgress["batchId"]
        deadline = time.monotonic() + 30
        while listener.last_batch.get(q.id, -1) < last:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert listener.flush(30)
    finally:
        spark.streams.removeListener(listener)
        listener.close()
    rows = stored(module_client, name)
    assert_tiles(rows)
    assert module_client.check(name, rows[0][1], rows[-1][2]).covered
    assert module_client.frontier(name).frontier == rows[-1][2]
    # min/max snapped to 1 s: rows every 50 ms, so consecutive batches touch or overlap
    batches = stored(module_client, seen)
    assert batches and all(r[0].startswith(f"{q.id}:") for r in batches)
    lo, hi = min(r[1] for r in batches), max(r[2] for r in batches)
    assert module_client.check(seen, lo, hi).covered
