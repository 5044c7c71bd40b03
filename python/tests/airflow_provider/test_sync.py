"""gapless_airflow.sync against a real Airflow api-server holding asset
events with interval extras, ISO interval keys and discrete keys: ids
`airflow:<event id>` make a rerun a no-op, the cursor makes the next run
continue, pages of 100 are followed, names come from the URI or the name."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import API_URL, GAPLESS_URL, USER

from gapless_airflow.sync import AirflowAPI, Cursor, SyncError, sync


@pytest.fixture(scope="module")
def events(api, client):
    """Events of three kinds of interval, and some without one."""
    ids = {}
    a = api.asset_id("s3://lake/sync_extra")
    ids["extra"] = [
        api.post_event(a, extra={"interval_start": f"2025-06-14T{h:02d}:00:00Z", "interval_end": f"2025-06-14T{h + 1:02d}:00:00Z", "rows": h})["id"]
        for h in range(4)
    ]
    b = api.asset_id("s3://lake/sync_interval")
    ids["interval"] = [api.post_event(b, partition_key=f"2025-06-14T{h:02d}:00:00Z/PT1H")["id"] for h in range(3)]
    # A retraction through extras, and an event without any interval.
    ids["interval"].append(api.post_event(b, partition_key="2025-06-14T01:00:00Z/PT30M", extra={"interval_kind": "retracted"})["id"])
    api.post_event(b)
    c = api.asset_id("s3://lake/sync_discrete")
    client.declare("s3://lake/sync_discrete", key_span="PT15M")
    ids["discrete"] = [api.post_event(c, partition_key=f"2025-06-14T00:{m:02d}:00")["id"] for m in (0, 15, 30)]
    # A reversed interval: skipped, named in the log.
    api.post_event(a, extra={"interval_start": "2025-06-15T02:00:00Z", "interval_end": "2025-06-15T01:00:00Z"})
    return ids


def api_client():
    from conftest import HOME

    password = json.loads((HOME / "simple_auth_manager_passwords.json.generated").read_text())[USER]
    return AirflowAPI(API_URL, username=USER, password=password)


def test_sync_then_rerun_is_a_noop(events, client):
    with api_client() as af:
        first = sync(af, client, assets=["s3://lake/sync_extra", "s3://lake/sync_interval", "s3://lake/sync_discrete"])
        assert first.sent == 4 + 4 + 3, first.summary()
        assert first.accepted == first.sent and first.duplicates == 0
        assert first.skipped["no interval"] >= 1 and first.skipped["unreadable interval"] == 1
        # Everything again, from no cursor: duplicates only.
        again = sync(af, client, assets=["s3://lake/sync_extra", "s3://lake/sync_interval", "s3://lake/sync_discrete"])
        assert again.sent == first.sent and again.duplicates == again.sent, again.summary()

    extra = list(client.events("s3://lake/sync_extra"))
    assert [e.id for e in extra] == [f"airflow:{i}" for i in events["extra"]]
    assert extra[2].extra["rows"] == 2 and extra[2].extra["from_rest_api"] is True
    assert client.check("s3://lake/sync_extra", "2025-06-14T00:00:00Z", "2025-06-14T04:00:00Z").covered
    # The retraction of 01:00-01:30 is the latest there: a gap.
    c = client.check("s3://lake/sync_interval", "2025-06-14T00:00:00Z", "2025-06-14T03:00:00Z")
    assert [(g.start.isoformat(), g.end.isoformat()) for g in c.missing] == [
        ("2025-06-14T01:00:00+00:00", "2025-06-14T01:30:00+00:00")
    ]
    d = client.check("s3://lake/sync_discrete", "2025-06-14T00:00:00Z", "2025-06-14T00:45:00Z")
    assert d.covered


def test_cursor_continues_and_pages_are_followed(api, events, client, tmp_path):
    """The command line with a state file: 250 new events in three pages,
    then a run that reads only what came after (less the overlap)."""
    state = tmp_path / "cursor.json"
    argv = [
        sys.executable, "-m", "gapless_airflow.sync", "--airflow-url", API_URL, "--username", USER,
        "--password", api.password, "--gapless-url", GAPLESS_URL, "--state", str(state),
        "--asset", "s3://lake/sync_paged", "--json",
    ]
    subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120)  # from no cursor
    cursor = Cursor.from_json(state.read_text())
    assert cursor.timestamp is not None

    p = api.asset_id("s3://lake/sync_paged")
    for i in range(250):
        start, end = divmod(i, 60), divmod(i + 1, 60)
        api.post_event(p, extra={"interval_start": "2025-06-20T{:02d}:{:02d}:00Z".format(*start),
                                 "interval_end": "2025-06-20T{:02d}:{:02d}:00Z".format(*end)})
    second = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout)
    assert second["sent"] == 250 and second["accepted"] == 250 and second["duplicates"] == 0, second
    assert second["pages"] >= 3  # 100 a page at most
    assert client.check("s3://lake/sync_paged", "2025-06-20T00:00:00Z", "2025-06-20T04:10:00Z").covered
    assert Cursor.from_json(state.read_text()).last_id == second["cursor"]["last_id"] > cursor.last_id

    # Again: what the overlap (5 minutes before the cursor) reads again is
    # duplicates only; without overlap, only the cursor's own timestamp.
    third = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout)
    assert third["accepted"] == 0 and third["duplicates"] == third["sent"] == 250, third
    fourth = json.loads(
        subprocess.run([*argv, "--overlap", "0s"], capture_output=True, text=True, check=True, timeout=120).stdout
    )
    assert fourth["read"] <= 2 and fourth["accepted"] == 0, fourth
    assert fourth["cursor"] == second["cursor"]


def test_names_from_the_asset_name(events, client):
    with api_client() as af:
        r = sync(af, client, name_from="name", assets=["sync_extra"])
    assert r.sent == 4 and r.accepted == 4, r.summary()
    assert client.check("sync_extra", "2025-06-14T00:00:00Z", "2025-06-14T04:00:00Z").covered


def test_errors_name_the_input():
    with pytest.raises(ValueError, match="name_from 'id': expected 'uri' or 'name'"):
        sync(None, None, name_from="id")  # type: ignore[arg-type]
    with (
        pytest.raises(SyncError, match="login as 'nobody' refused"),
        AirflowAPI(API_URL, username="nobody", password="wrong") as af,
    ):
        af.get("/api/v2/assets/events")
    r = subprocess.run([sys.executable, "-m", "gapless_airflow.sync"], capture_output=True, text=True, timeout=60, check=False)
    assert r.returncode == 2 and r.stderr.strip() == "gapless-airflow-sync: --airflow-url (or AIRFLOW_URL) is required"


def test_the_operator_keeps_its_cursor_in_a_variable(api, events, client, monkeypatch):
    from airflow.models.variable import Variable as VariableModel
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from conftest import load_dag, ti_states

    monkeypatch.setenv(
        "AIRFLOW_CONN_AIRFLOW_API",
        json.dumps({"conn_type": "http", "host": API_URL, "login": USER, "password": api.password}),
    )
    results = []
    for _ in range(2):
        dr = load_dag("sync_dag").test()
        assert ti_states(dr) == {"sync": "success"}, ti_states(dr)
        with create_session() as session:
            row = session.scalars(XComModel.get_many(run_id=dr.run_id, dag_ids="sync_dag", task_ids="sync")).first()
            results.append(XComModel.deserialize_value(row))
    first, second = results
    assert first["sent"] == 4, first
    assert second["sent"] == 4 and second["accepted"] == 0 and second["duplicates"] == 4, second  # within the overlap
    cursor = Cursor.from_json(VariableModel.get("gapless_sync_cursor"))
    assert cursor.last_id == first["cursor"]["last_id"] and cursor.timestamp
