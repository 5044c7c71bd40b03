"""record() and GaplessRecordOperator under dag.test(): the partition window
by default, an id derived from the DAG run, so a retry is a duplicate."""

from __future__ import annotations

from conftest import load_dag, ti_states

KEY = "2025-06-14T05:00:00"


def test_record_in_a_task_and_as_an_operator(airflow_db, client, partition_key):
    partition_key(KEY)
    dr = load_dag("record_dag").test()
    assert ti_states(dr) == {"produce": "success", "record_op": "success"}, ti_states(dr)

    # The task recorded its partition window (the key and the 1h grid) on
    # its first try, failed, and recorded the same event again on the retry.
    events = list(client.events("record_dag_out"))
    assert len(events) == 1, events
    e = events[0]
    assert e.id == f"airflow:record_dag/{dr.run_id}/produce"
    assert (e.start.isoformat(), e.end.isoformat()) == ("2025-06-14T05:00:00+00:00", "2025-06-14T06:00:00+00:00")
    assert e.extra == {"rows": 42}
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        row = session.scalars(XComModel.get_many(run_id=dr.run_id, dag_ids="record_dag", task_ids="produce")).first()
        value = XComModel.deserialize_value(row)
    # The server counts a duplicate apart from the events it accepted anew.
    assert value["accepted"] == 0 and value["duplicates"] == 1, value

    # The operator: both assets in one batch, [key, key + key_span).
    for asset in ("record_dag_op_a", "record_dag_op_b"):
        (op,) = client.events(asset)
        assert op.id == f"airflow:record_dag/{dr.run_id}/record_op"
        assert (op.start.hour, op.end.hour) == (5, 6)
        assert op.extra == {"by": "operator"}
    assert client.check("record_dag_op_a", "2025-06-14T05:00:00Z", "2025-06-14T06:00:00Z").covered
