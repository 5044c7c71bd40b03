"""gapless.iceberg against a real pyiceberg table on a SQLite catalog and a
real `gapless serve` (SQLite and PostgreSQL ledgers)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pyarrow as pa
import pytest

import gapless
from gapless import iceberg

T0 = datetime(2025, 6, 1, 10, tzinfo=timezone.utc)
SCHEMA = pa.schema([("event_ts", pa.timestamp("us", tz="UTC")), ("n", pa.int64())])


@pytest.fixture
def table(tmp_path):
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog(
        "test", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/warehouse"
    )
    catalog.create_namespace("events")
    return catalog.create_table("events.clicks", schema=SCHEMA)


def rows(start: datetime, minutes: int) -> pa.Table:
    ts = [start + timedelta(minutes=m) for m in range(minutes)]
    return pa.Table.from_pylist([{"event_ts": t, "n": i} for i, t in enumerate(ts)], schema=SCHEMA)


def test_five_minute_appends_then_an_overwrite_of_the_hour_fire_once(client, table):
    client.declare("clicks")
    client.set_rule("clicks_hourly", assets=["clicks"], every="1h", from_="2025-06-01")
    for i in range(12):
        s = T0 + timedelta(minutes=5 * i)
        table.append(rows(s, 5), snapshot_properties=iceberg.write_properties(s, s + timedelta(minutes=5)))
        synced = iceberg.sync(client, table, "clicks")
        assert (synced.recorded, synced.skipped, synced.cursor) == (1, 0, i + 1)
    end = T0 + timedelta(hours=1)
    table.overwrite(
        rows(T0, 60),
        overwrite_filter=f"event_ts >= '{T0.isoformat()}' and event_ts < '{end.isoformat()}'",
        snapshot_properties=iceberg.write_properties(T0, end),
    )
    ops = [s.summary.operation.value for s in table.metadata.snapshots[12:]]
    assert ops == ["delete", "append"]  # pyiceberg's overwrite: two snapshots
    synced = iceberg.sync(client, table, "clicks")
    assert (synced.recorded, synced.duplicates, synced.skipped, synced.cursor) == (2, 0, 0, 14)
    assert iceberg.sync(client, table, "clicks").recorded == 0  # a rerun: nothing new

    firings = list(client.firings(rule="clicks_hourly"))
    assert [(f.kind, f.key, f.generation) for f in firings] == [("complete", "2025-06-01T10:00:00", 1)]

    uuid = str(table.metadata.table_uuid)
    hourly = table.metadata.snapshots[-1].snapshot_id
    segs = list(client.segments("clicks", T0, end))
    assert [(s.event.id, s.start, s.end, s.kind) for s in segs] == [
        (f"iceberg:{uuid}:{hourly}", T0, end, "landed")
    ]
    deleted = [e for e in client.events("clicks", kind="retracted")]
    assert [e.extra["snapshot_id"] for e in deleted] == [str(table.metadata.snapshots[-2].snapshot_id)]
    assert client.check("clicks", T0, end).covered


def test_snapshots_without_an_interval_are_skipped_and_counted(client, table):
    table.append(rows(T0, 5))  # no properties
    table.append(rows(T0, 5), snapshot_properties={"from": "2025-06-01T10:00Z", "to": "2025-06-01T10:05Z"})
    synced = iceberg.sync(client, table, "clicks")
    assert (synced.recorded, synced.skipped) == (0, 2)
    synced = iceberg.sync(client, table, "clicks", start_property="from", end_property="to")
    assert (synced.recorded, synced.skipped, synced.cursor) == (1, 1, 2)
    [event] = client.events("clicks")
    assert event.extra["sequence_number"] == 2 and event.extra["operation"] == "append"
    assert event.extra["snapshot_id"] == str(table.metadata.snapshots[1].snapshot_id)


def test_a_delete_alone_retracts_and_a_later_append_completes_again(client, table):
    client.declare("clicks")
    client.set_rule("clicks_hourly", assets=["clicks"], every="1h", from_="2025-06-01")
    for i in range(12):
        s = T0 + timedelta(minutes=5 * i)
        table.append(rows(s, 5), snapshot_properties=iceberg.write_properties(s, s + timedelta(minutes=5)))
    assert iceberg.sync(client, table, "clicks").recorded == 12  # twelve snapshots in one sync
    half, end = T0 + timedelta(minutes=30), T0 + timedelta(hours=1)
    table.delete(
        delete_filter=f"event_ts >= '{half.isoformat()}'",
        snapshot_properties=iceberg.write_properties(half, end),
    )
    assert table.metadata.snapshots[-1].summary.operation.value == "delete"
    assert iceberg.sync(client, table, "clicks").recorded == 1
    assert client.check("clicks", T0, end).missing == [gapless.Interval(half, end)]
    table.append(rows(half, 30), snapshot_properties=iceberg.write_properties(half, end))
    assert iceberg.sync(client, table, "clicks").recorded == 1
    firings = [(f.kind, f.generation) for f in client.firings(rule="clicks_hourly")]
    assert firings == [("complete", 1), ("incomplete", 1), ("complete", 2)]
