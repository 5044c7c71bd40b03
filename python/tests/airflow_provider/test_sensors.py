"""GaplessCoverageSensor under dag.test() against a real gapless server: poke,
reschedule and deferrable modes while the ledger becomes complete (the
missing hour lands only after the sensor has seen the range incomplete),
the joint coverage of two assets, a templated range, the partition window,
and timeouts that name the gaps in the task's log and error."""

from __future__ import annotations

import time

from conftest import clear_out, later, load_dag, out, served, ti_states

DAY = "2025-06-14"
DELAY = 1.5  # seconds after the sensor's first check that the last hour lands


def land_hours(client, asset: str, hours, day: str = DAY):
    client.record_many(
        [
            {"asset": asset, "id": f"h{h}", "start": f"{day}T{h:02d}:00:00Z", "end": f"{day}T{h + 1:02d}:00:00Z"}
            for h in hours
        ]
    )


def run_while_landing(dag_id: str, client, assets: list[str]):
    """Hours 0-5 but 3 landed; hour 3 lands DELAY s after the sensor first
    asked. Returns the run and the seconds from the landing to its end."""
    for a in assets:
        land_hours(client, a, [0, 1, 2, 4, 5])
    clear_out(dag_id)
    dag = load_dag(dag_id)
    landed: dict[str, float] = {}

    def land():
        for a in assets:
            land_hours(client, a, [3])
        landed["at"] = time.monotonic()

    landing = later(DELAY, land, after="/v1/")
    dr = dag.test()
    ended = time.monotonic()
    landing.join()
    return dr, ended - landed["at"]


def assert_complete(dag_id: str, dr):
    assert ti_states(dr) == {"wait": "success", "keep": "success"}, ti_states(dr)
    answer = out(dag_id)["wait"]
    assert answer["complete"] is True and answer["covered"] is True, answer
    assert answer["missing"] == [] and answer["covered_ratio"] == 1.0
    assert (answer["start"], answer["end"]) == (f"{DAY}T00:00:00Z", f"{DAY}T06:00:00Z")
    return answer


def test_poke_waits_until_complete(airflow_db, client):
    checks = served("/v1/assets/sensor_poke/coverage")
    dr, _ = run_while_landing("sensor_poke", client, ["sensor_poke"])
    answer = assert_complete("sensor_poke", dr)
    assert answer["asset"] == "sensor_poke" and answer["policy"] == "full"
    # Once incomplete, then complete: at least two pokes.
    assert served("/v1/assets/sensor_poke/coverage") - checks >= 2


def test_reschedule_frees_the_slot_between_pokes(airflow_db, client):
    from airflow.models.taskreschedule import TaskReschedule
    from airflow.utils.session import create_session
    from sqlalchemy import select

    dr, _ = run_while_landing("sensor_reschedule", client, ["sensor_reschedule"])
    assert_complete("sensor_reschedule", dr)
    with create_session() as session:
        tis = {ti.task_id: ti for ti in dr.get_task_instances(session=session)}
        reschedules = session.scalars(select(TaskReschedule).where(TaskReschedule.ti_id == tis["wait"].id)).all()
    assert len(reschedules) >= 1, "the sensor was never rescheduled"


def test_deferrable_waits_on_the_long_poll(airflow_db, client):
    waits = served("/v1/assets/sensor_deferrable/wait")
    checks = served("/v1/assets/sensor_deferrable/coverage")
    dr, after_landing = run_while_landing("sensor_deferrable", client, ["sensor_deferrable"])
    assert_complete("sensor_deferrable", dr)
    # The trigger ran (inline in dag.test) and waited on the server's long
    # poll: one check before deferring, then /wait, which the landing woke
    # (the poke interval is 600 s: no poll would have seen it).
    assert served("/v1/assets/sensor_deferrable/wait") - waits >= 1
    assert served("/v1/assets/sensor_deferrable/coverage") - checks == 1
    assert after_landing < 60, f"the run ended {after_landing:.1f}s after the landing"


def test_joint_coverage_of_two_assets(airflow_db, client):
    dr, _ = run_while_landing("sensor_joint", client, ["sensor_joint_a", "sensor_joint_b"])
    answer = assert_complete("sensor_joint", dr)
    assert answer["assets"] == ["sensor_joint_a", "sensor_joint_b"]


def timed_out(dag_id: str, client, capfd):
    asset = dag_id
    client.record_many(
        [
            {"asset": asset, "id": "a", "start": f"{DAY}T00:00:00Z", "end": f"{DAY}T03:10:00Z"},
            {"asset": asset, "id": "b", "start": f"{DAY}T03:25:00Z", "end": f"{DAY}T20:00:00Z"},
        ]
    )
    clear_out(dag_id)
    dr = load_dag(dag_id).test()
    logged = capfd.readouterr()
    states = ti_states(dr)
    assert states["wait"] == "failed", states
    gaps = "2 gaps: [2025-06-14T03:10:00Z, 2025-06-14T03:25:00Z), [2025-06-14T20:00:00Z, 2025-06-15T00:00:00Z)"
    text = logged.out + logged.err
    # The task's log says it as an error line, and the exception raised is the same words.
    assert f"{asset} [2025-06-14T00:00:00Z, 2025-06-15T00:00:00Z) is not complete under full" in text
    assert gaps in text
    assert "AirflowSensorTimeout" in text
    return text


def test_poke_timeout_names_the_gaps(airflow_db, client, capfd):
    text = timed_out("sensor_timeout_poke", client, capfd)
    assert "Sensor has timed out" in text


def test_deferrable_timeout_names_the_gaps(airflow_db, client, capfd):
    text = timed_out("sensor_timeout_deferrable", client, capfd)
    assert "sensor timed out after" in text


def test_reschedule_timeout_names_the_gaps(airflow_db, client, capfd):
    text = timed_out("sensor_timeout_reschedule", client, capfd)
    assert "Sensor has timed out" in text


def test_joint_coverage_under_a_ratio_in_poke_mode(airflow_db, client):
    land_hours(client, "sensor_joint_ratio_a", range(6))
    land_hours(client, "sensor_joint_ratio_b", range(4))
    clear_out("sensor_joint_ratio")
    dr = load_dag("sensor_joint_ratio").test()
    assert ti_states(dr) == {"wait": "success", "keep": "success"}
    answer = out("sensor_joint_ratio")["wait"]
    assert answer["assets"] == ["sensor_joint_ratio_b", "sensor_joint_ratio_a"]  # as given
    assert answer["policy"] == "ratio>=0.5" and answer["complete"] is True and answer["covered"] is False
    assert answer["missing"] == [{"start": f"{DAY}T04:00:00Z", "end": f"{DAY}T06:00:00Z"}]


def test_templated_range_in_a_zone_with_a_policy(airflow_db, client):
    # A Berlin day is [22:00Z the day before, 22:00Z): one 5-minute gap, under gap<10m.
    client.record_many(
        [
            {"asset": "sensor_templated", "id": "a", "start": "2025-06-13T22:00:00Z", "end": "2025-06-14T12:00:00Z"},
            {"asset": "sensor_templated", "id": "b", "start": "2025-06-14T12:05:00Z", "end": "2025-06-14T22:00:00Z"},
        ]
    )
    clear_out("sensor_templated")
    dr = load_dag("sensor_templated").test()
    assert ti_states(dr) == {"wait": "success", "keep": "success"}
    answer = out("sensor_templated")["wait"]
    assert (answer["start"], answer["end"]) == ("2025-06-13T22:00:00Z", "2025-06-14T22:00:00Z")
    assert answer["complete"] is True and answer["covered"] is False and answer["policy"] == "gap<10m"
    assert answer["missing"] == [{"start": "2025-06-14T12:00:00Z", "end": "2025-06-14T12:05:00Z"}]


def test_partition_window_from_the_key_and_the_grid(airflow_db, client, partition_key):
    client.record("sensor_partition", f"{DAY}T03:00:00Z", f"{DAY}T04:00:00Z", id="hour3")
    partition_key(f"{DAY}T03:00:00")
    clear_out("sensor_partition")
    dr = load_dag("sensor_partition").test()
    assert ti_states(dr) == {"wait": "success", "keep": "success"}
    answer = out("sensor_partition")["wait"]
    assert (answer["start"], answer["end"]) == (f"{DAY}T03:00:00Z", f"{DAY}T04:00:00Z")
    assert answer["complete"] is True
