"""AssetEventCoverageSensor under dag.test(): Airflow's own asset events
(posted through the REST API of a real api-server) with interval extras,
ISO interval keys and discrete keys cover the range, the last one arriving
while the sensor waits; no gapless server is asked."""

from __future__ import annotations

from conftest import clear_out, later, load_dag, out, served, ti_states

URI = "gapless-test://provider/events"


def test_sensor_reads_inlet_events(airflow_db, api):
    asset_id = api.asset_id(URI)
    api.post_event(asset_id, extra={"interval_start": "2025-06-14T00:00:00Z", "interval_end": "2025-06-14T01:00:00Z"})
    api.post_event(asset_id, partition_key="2025-06-14T01:00:00Z/PT1H")
    api.post_event(asset_id, partition_key="2025-06-14T03:00:00")  # discrete, key_span PT1H
    api.post_event(asset_id)  # no interval: says nothing about time
    clear_out("asset_events_sensor")
    before = served("/v1/")
    # Hour 2 arrives (as a retraction first, then landed) while the sensor waits.
    landing = later(
        3.0,
        lambda: [
            api.post_event(asset_id, partition_key="2025-06-14T02:00:00Z/PT1H", extra={"interval_kind": "retracted"}),
            api.post_event(asset_id, partition_key="PT1H/2025-06-14T03:00:00Z"),
        ],
    )
    dr = load_dag("asset_events_sensor").test()
    landing.join()
    assert ti_states(dr) == {"wait": "success", "keep": "success"}, ti_states(dr)
    answer = out("asset_events_sensor")["wait"]
    assert answer["asset"] == URI
    assert answer["complete"] is True and answer["covered_ratio"] == 1.0 and answer["missing"] == []
    assert served("/v1/") == before, "the asset-event sensor asked the gapless server"
