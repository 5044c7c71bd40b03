"""gapless.iceberg's Kafka Connect mapping (SPEC §10): a real pyiceberg table
on a SQLite catalog whose snapshots carry the summary properties Iceberg's
Kafka Connect sink writes (its valid-through timestamp, commit id and
control-topic offsets), synced after each commit into a real `gapless serve`
(SQLite and PostgreSQL ledgers), and `gapless ingest --format
iceberg-snapshots` of the same table's metadata."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from itertools import pairwise

import pyarrow as pa
import pytest
from conftest import shared

from gapless import iceberg
from gapless._time import micros

T0 = datetime(2025, 6, 1, 10, tzinfo=timezone.utc)
SCHEMA = pa.schema([("event_ts", pa.timestamp("us", tz="UTC")), ("n", pa.int64())])
# The sink's offsets property: kafka.connect.offsets.<control topic>.<control group>.
OFFSETS = "kafka.connect.offsets.control-iceberg.cg-control-events-sink"


@pytest.fixture
def table(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse"
    )
    catalog.create_namespace("events")
    return catalog.create_table("events.orders", schema=SCHEMA)


def minutes(m: float) -> datetime:
    return T0 + timedelta(minutes=m)


def rows(end: datetime, n: int = 3) -> pa.Table:
    """Records whose Kafka timestamps lie before the commit's vtts."""
    ts = [end - timedelta(seconds=10 * (i + 1)) for i in range(n)]
    return pa.Table.from_pylist([{"event_ts": t, "n": i} for i, t in enumerate(ts)], schema=SCHEMA)


class Sink:
    """What the sink's coordinator writes to the table per commit: every
    snapshot of a commit carries the commit id; the last one carries the
    control-topic offsets (Jackson's JSON of partition -> offset) and, when
    every partition reported a record, the vtts (Tabular's connector:
    milliseconds as decimal text; Apache Iceberg's: `valid-through-ts`,
    Java's OffsetDateTime text)."""

    def __init__(self, table) -> None:
        self.table = table
        self.control_offset = 0
        self.commit_ids: list[str] = []

    def commit(self, vtts: datetime | str | None, *, snapshots: int = 1) -> None:
        commit_id = str(uuid.uuid4())
        self.commit_ids.append(commit_id)
        self.control_offset += 2 * snapshots + 1
        last = {
            "kafka.connect.commit-id": commit_id,
            OFFSETS: json.dumps({"0": self.control_offset}, separators=(",", ":")),
        }
        if isinstance(vtts, datetime):
            last["kafka.connect.vtts"] = str(micros(vtts) // 1000)
        elif isinstance(vtts, str):
            last["kafka.connect.valid-through-ts"] = vtts
        data = rows(vtts if isinstance(vtts, datetime) else minutes(60))
        if snapshots == 1:
            self.table.append(data, snapshot_properties=last)
            return
        # One snapshot per partition spec in one transaction (Tabular's
        # connector): only the last carries the offsets and the vtts.
        with self.table.transaction() as tx:
            for _ in range(snapshots - 1):
                tx.append(data, snapshot_properties={"kafka.connect.commit-id": commit_id})
            tx.append(data, snapshot_properties=last)


def stored(client, asset: str) -> list[tuple[str, datetime, datetime]]:
    return sorted(((e.id, e.start, e.end) for e in client.events(asset)), key=lambda r: r[1])


def test_synced_after_each_commit_the_vtts_tile_time_without_a_gap(client, server, table):
    sink = Sink(table)
    steps = [
        # (the commit's vtts, snapshots in the commit, recorded, skipped)
        (minutes(0), 1, 0, 1),  # the first vtts opens the time line
        (minutes(5), 1, 1, 1),  # the first one is looked at (and counted) again
        (minutes(10), 2, 1, 1),  # two snapshots, one vtts
        (None, 1, 0, 1),  # a timed-out commit: no vtts
        (minutes(20), 1, 1, 1),  # still tiles, over the commit without one
        (minutes(20), 1, 0, 1),  # the vtts did not advance
        (minutes(30), 1, 1, 1),
    ]
    for vtts, snapshots, recorded, skipped in steps:
        sink.commit(vtts, snapshots=snapshots)
        synced = iceberg.sync(client, table, "orders")
        assert (synced.recorded, synced.duplicates, synced.skipped) == (recorded, 0, skipped), vtts
    assert synced.cursor == len(table.metadata.snapshots) == 8
    assert iceberg.sync(client, table, "orders").recorded == 0  # a rerun: nothing new

    uuid_ = str(table.metadata.table_uuid)
    ids = [s.snapshot_id for s in table.metadata.snapshots]
    got = stored(client, "orders")
    assert got == [
        (f"iceberg:{uuid_}:{ids[1]}", minutes(0), minutes(5)),
        (f"iceberg:{uuid_}:{ids[3]}", minutes(5), minutes(10)),
        (f"iceberg:{uuid_}:{ids[5]}", minutes(10), minutes(20)),
        (f"iceberg:{uuid_}:{ids[7]}", minutes(20), minutes(30)),
    ]
    assert all(a[2] == b[1] for a, b in pairwise(got))
    assert client.check("orders", minutes(0), minutes(30)).covered
    assert not client.check("orders", minutes(-1), minutes(30)).covered
    assert client.frontier("orders").frontier == minutes(30)

    third = next(e for e in client.events("orders") if e.id == got[2][0])
    assert third.kind == "landed"
    assert third.extra == {
        "source": "iceberg",
        "snapshot_id": str(ids[5]),
        "operation": "append",
        "sequence_number": 6,
        "vtts": str(micros(minutes(20)) // 1000),
        "commit_id": sink.commit_ids[4],
    }
    assert iceberg.last_vtts(client, "orders", uuid_) == minutes(30)


def test_ingest_of_the_tables_metadata_stores_the_same_events(client, server, table, tmp_path):
    sink = Sink(table)
    for vtts, snapshots in [(minutes(0), 1), (minutes(5), 2), (None, 1), (minutes(5), 1), (minutes(15), 1)]:
        sink.commit(vtts, snapshots=snapshots)
        iceberg.sync(client, table, "orders")
    assert len(list(client.events("orders"))) == 2
    meta = iceberg.table_metadata(table)
    plan = iceberg.snapshot_batches(meta, "orders")
    assert (len(plan.batches), plan.skipped, plan.cursor, plan.vtts) == (2, 4, 6, minutes(15))
    path = tmp_path / "metadata.json"
    path.write_text(json.dumps(meta))
    r = shared.run(
        "--url", server.url, "ingest", str(path), "--format", "iceberg-snapshots", "--asset", "orders",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    # The same ids with the same content: duplicates, never a conflict.
    assert json.loads(r.stdout) == {"accepted": 0, "duplicates": 2}
    assert "the first vtts" in r.stderr and "the vtts did not advance" in r.stderr
    assert client.check("orders", minutes(0), minutes(15)).covered


def test_a_sync_resumed_after_snapshots_expired_continues_from_the_ledger(client, table):
    sink = Sink(table)
    sink.commit(minutes(0))
    sink.commit(minutes(5))
    assert iceberg.sync(client, table, "orders").recorded == 1
    sink.commit(minutes(10))
    sink.commit(minutes(15))
    # Expire every snapshot but the current one before the next sync: the
    # vtts of minute 10 is gone from the table, minute 5's too.
    expired = [s.snapshot_id for s in table.metadata.snapshots[:-1]]
    table.maintenance.expire_snapshots().by_ids(expired).commit()
    table.refresh()
    assert [s.sequence_number for s in table.metadata.snapshots] == [4]
    # The table alone opens a new time line at minute 15 ...
    assert iceberg.snapshot_batches(iceberg.table_metadata(table), "orders").batches == []
    # ... the sync continues from the vtts gapless holds.
    synced = iceberg.sync(client, table, "orders")
    assert (synced.recorded, synced.skipped, synced.cursor) == (1, 0, 4)
    assert [(s, e) for _, s, e in stored(client, "orders")] == [
        (minutes(0), minutes(5)),
        (minutes(5), minutes(15)),
    ]
    assert client.check("orders", minutes(0), minutes(15)).covered


def test_apache_icebergs_valid_through_ts_tiles_the_same_way(client, table):
    sink = Sink(table)
    sink.commit("2025-06-01T10:00Z")  # Java leaves zero seconds out
    sink.commit("2025-06-01T10:05:00.250Z")
    synced = iceberg.sync(client, table, "orders")
    assert (synced.recorded, synced.skipped) == (1, 1)
    [event] = client.events("orders")
    assert (event.start, event.end) == (minutes(0), minutes(5) + timedelta(milliseconds=250))
    assert event.extra["vtts"] == "2025-06-01T10:05:00.250Z"
    assert event.extra["commit_id"] == sink.commit_ids[1]
