"""OpenLineage end to end (SPEC §4 `POST /api/v1/lineage`, §10
`openlineage`): the real openlineage-python client, its HTTP transport with
`api_key` auth pointed at a real `gapless serve` with a tokens file, on a
SQLite and on a PostgreSQL ledger; what gapless then says is read with the
gapless client. The same events written by the client's file transport and
replayed with `gapless ingest --format openlineage` store the same events.

The server's answers are read from the transport's own requests session
(a response hook): the client itself answers nothing, and must not raise
for an event gapless cannot use.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import requests
from conftest import Server
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import nominal_time_run
from openlineage.client.uuid import generate_new_uuid

import gapless

PRODUCER = "https://github.com/gapless/tests/producers/test_openlineage"
NAMESPACE = "s3://lake"
ORDERS = "s3://lake/orders"
CUSTOMERS = "s3://lake/customers"
DAY = datetime(2025, 6, 1, tzinfo=timezone.utc)

TOKENS = {
    "lake": "lake-writer-0123456789abcdef",
    "read": "reader-0123456789abcdef",
}


def hour(h: int) -> tuple[datetime, datetime]:
    return DAY + timedelta(hours=h), DAY + timedelta(hours=h + 1)


def iso(t: datetime) -> str:
    return t.isoformat()


def event(
    state: RunState,
    run_id: str,
    interval: tuple[datetime, datetime] | None,
    outputs: tuple[str, ...] = ("orders", "customers"),
    *,
    job: str = "orders_dag.load",
    namespace: str = NAMESPACE,
) -> RunEvent:
    facets = {}
    if interval is not None:
        facets["nominalTime"] = nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=iso(interval[0]), nominalEndTime=iso(interval[1])
        )
    return RunEvent(
        eventType=state,
        eventTime=datetime.now(timezone.utc).isoformat(),
        run=Run(runId=run_id, facets=facets),
        job=Job(namespace="gapless-tests", name=job),
        producer=PRODUCER,
        outputs=[OutputDataset(namespace=namespace, name=n) for n in outputs],
    )


@dataclass
class Lineage:
    """An OpenLineageClient whose HTTP transport goes to `url` with
    `token` (api_key auth), and every answer its transport received."""

    url: str
    token: str | None
    compression: str | None = None
    answers: list[requests.Response] = field(default_factory=list)

    def __post_init__(self) -> None:
        transport: dict = {"type": "http", "url": self.url, "endpoint": "api/v1/lineage"}
        if self.compression is not None:
            transport["compression"] = self.compression
        if self.token is not None:
            transport["auth"] = {"type": "api_key", "apiKey": self.token}
        self.client = OpenLineageClient(config={"transport": transport})
        self.client.transport.session.hooks["response"].append(
            lambda r, *args, **kwargs: self.answers.append(r)
        )

    def emit(self, e: RunEvent) -> dict:
        """Emit `e` through the client; the server's answer (JSON)."""
        before = len(self.answers)
        self.client.emit(e)
        assert len(self.answers) == before + 1, "one POST per event"
        answer = self.answers[-1]
        assert answer.request.url == f"{self.url}/api/v1/lineage"
        assert answer.request.headers["Authorization"] == f"Bearer {self.token}"
        return answer.json()


@pytest.fixture
def served(ledger, tmp_path):
    """`gapless serve` with a tokens file on the test's ledger (both
    backends): a writer of `s3://lake/` and a reader."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[token]]\nsecret = "{TOKENS["lake"]}"\nscopes = ["read", "write"]\n'
        f'prefixes = ["s3://lake/"]\n\n'
        f'[[token]]\nsecret = "{TOKENS["read"]}"\nscopes = ["read"]\n'
    )
    s = Server(ledger.db, ["--tokens-file", str(tokens)]).start()
    yield s
    s.stop()


@pytest.fixture
def lineage(served) -> Lineage:
    return Lineage(served.url, TOKENS["lake"])


@pytest.fixture
def reader(served):
    with gapless.Client(served.url, token=TOKENS["read"]) as c:
        yield c


def missing(client: gapless.Client, asset: str, start: datetime, end: datetime) -> list:
    return [(i.start, i.end) for i in client.check(asset, start, end).missing]


def stored(client: gapless.Client, asset: str) -> list[tuple]:
    """The asset's events as (id, start, end, kind, extra, produced_at)."""
    return sorted(
        (e.id, e.start, e.end, e.kind, json.dumps(e.extra, sort_keys=True), e.produced_at)
        for e in client.events(asset)
    )


def test_complete_runs_cover_their_nominal_time_on_each_output(lineage, reader):
    runs = {h: str(generate_new_uuid()) for h in (0, 1, 2, 4)}
    for h, run_id in runs.items():
        started = lineage.emit(event(RunState.START, run_id, hour(h)))
        assert started["accepted"] == 0 and started["skipped"] == 1, started
        if h == 2:
            failed = lineage.emit(event(RunState.FAIL, run_id, hour(h)))
            assert failed["accepted"] == 0 and failed["skipped"] == 1, failed
            continue
        done = lineage.emit(event(RunState.COMPLETE, run_id, hour(h)))
        # One event per output dataset.
        assert (done["accepted"], done["duplicates"], done["skipped"]) == (2, 0, 0), done

    # A run's outputs all get its interval: [00, 02) and [04, 05) of the
    # day; the failed 02:00 run and the hour no run wrote are gaps.
    for asset in (ORDERS, CUSTOMERS):
        assert missing(reader, asset, DAY, DAY + timedelta(hours=6)) == [
            (DAY + timedelta(hours=2), DAY + timedelta(hours=4)),
            (DAY + timedelta(hours=5), DAY + timedelta(hours=6)),
        ]
        events = list(reader.events(asset))
        assert sorted((e.start, e.end) for e in events) == [hour(0), hour(1), hour(4)]
        assert {e.id for e in events} == {f"openlineage:{runs[h]}" for h in (0, 1, 4)}
        assert all(e.kind == "landed" for e in events)
        assert {e.extra["run_id"] for e in events} == {runs[h] for h in (0, 1, 4)}
        assert {e.extra["job_name"] for e in events} == {"orders_dag.load"}


def test_a_gzipped_event_records_the_same(served, reader):
    # The transport's `compression: gzip` sends Content-Encoding: gzip.
    zipped = Lineage(served.url, TOKENS["lake"], compression="gzip")
    run_id = str(generate_new_uuid())
    assert zipped.emit(event(RunState.START, run_id, hour(7)))["skipped"] == 1
    answer = zipped.emit(event(RunState.COMPLETE, run_id, hour(7)))
    assert zipped.answers[-1].request.headers["Content-Encoding"] == "gzip"
    assert (answer["accepted"], answer["skipped"]) == (2, 0), answer
    assert missing(reader, CUSTOMERS, *hour(7)) == []
    assert [e.id for e in reader.events(ORDERS)] == [f"openlineage:{run_id}"]


def test_a_complete_delivered_again_is_a_duplicate(lineage, reader):
    run_id = str(generate_new_uuid())
    e = event(RunState.COMPLETE, run_id, hour(3))
    first = lineage.emit(e)
    assert (first["accepted"], first["duplicates"]) == (2, 0), first
    again = lineage.emit(e)
    assert (again["accepted"], again["duplicates"], again["skipped"]) == (0, 2, 0), again
    # Another COMPLETE of the same run (another eventTime) conflicts with
    # what is stored: skipped and counted per output, the client not
    # failing, the stored event unchanged (SPEC §10).
    before = stored(reader, ORDERS)
    later = lineage.emit(event(RunState.COMPLETE, run_id, hour(3)))
    assert (later["accepted"], later["duplicates"], later["skipped"]) == (0, 0, 2), later
    assert [r["reason"].startswith("a conflict") for r in later["skipped_reasons"]] == [True]
    assert stored(reader, ORDERS) == before
    assert len(before) == 1
    assert missing(reader, ORDERS, *hour(3)) == []


def test_a_run_without_nominal_time_is_skipped_and_the_client_does_not_raise(lineage, reader):
    answer = lineage.emit(event(RunState.COMPLETE, str(generate_new_uuid()), None))
    assert (answer["accepted"], answer["duplicates"], answer["skipped"]) == (0, 0, 1), answer
    reasons = answer["skipped_reasons"]
    assert [r["count"] for r in reasons] == [1]
    assert "nominalTime" in reasons[0]["reason"], reasons
    assert [a.asset for a in reader.assets()] == []
    with pytest.raises(gapless.NotFound):
        list(reader.events(ORDERS))


def test_an_output_outside_the_tokens_prefixes_is_skipped(served, lineage, reader):
    # One COMPLETE writing a dataset the token may write and one it may not:
    # the first is recorded, the second counted (an emitter never fails).
    e = event(RunState.COMPLETE, str(generate_new_uuid()), hour(1))
    e.outputs.append(OutputDataset(namespace="s3://other", name="orders"))
    answer = lineage.emit(e)
    assert (answer["accepted"], answer["skipped"]) == (2, 1), answer
    assert [a.asset for a in reader.assets()] == [CUSTOMERS, ORDERS]


def test_a_wrong_token_is_refused(served, reader):
    e = event(RunState.COMPLETE, str(generate_new_uuid()), hour(0))
    for token, status in ((None, 401), ("not-a-token-0123456789", 401), (TOKENS["read"], 403)):
        client = Lineage(served.url, token)
        with pytest.raises(requests.HTTPError) as refused:
            client.client.emit(e)
        assert refused.value.response.status_code == status, token
        assert "error" in refused.value.response.json()
    assert [a.asset for a in reader.assets()] == []


def test_the_file_transports_output_replayed_stores_the_same_events(
    served, lineage, reader, tmp_path
):
    log = tmp_path / "openlineage.ndjson"
    to_file = OpenLineageClient(
        config={"transport": {"type": "file", "log_file_path": str(log), "append": True}}
    )
    for h in range(6):
        run_id = str(generate_new_uuid())
        sequence = [RunState.START, RunState.FAIL if h == 3 else RunState.COMPLETE]
        for state in sequence:
            e = event(state, run_id, hour(h), outputs=("orders",))
            to_file.emit(e)
            lineage.emit(e)
    to_file.emit(event(RunState.COMPLETE, str(generate_new_uuid()), None, outputs=("orders",)))
    assert len(log.read_text().splitlines()) == 13

    live = stored(reader, ORDERS)
    assert sorted((s, e) for _, s, e, *_ in live) == [hour(h) for h in (0, 1, 2, 4, 5)]

    # Replayed into the server that holds them: every one a duplicate.
    again = ingest(served, log, token=TOKENS["lake"])
    assert (again["accepted"], again["duplicates"]) == (0, 5), again

    # Replayed into a fresh ledger: the same events, id for id.
    fresh = Server(str(tmp_path / "fresh.db")).start()
    try:
        first = ingest(fresh, log)
        assert (first["accepted"], first["duplicates"]) == (5, 0), first
        with gapless.Client(fresh.url) as c:
            assert stored(c, ORDERS) == live
    finally:
        fresh.stop()


def ingest(server: Server, path: Path, token: str | None = None) -> dict:
    """`gapless ingest --format openlineage FILE --json` against `server`."""
    argv = [server.bin, "ingest", "--format", "openlineage", str(path), "--url", server.url]
    env = {k: v for k, v in os.environ.items() if k != "GAPLESS_TOKEN"}
    if token:
        env["GAPLESS_TOKEN"] = token
    r = subprocess.run(
        [*argv, "--json"], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert r.returncode == 0, r.stderr
    # Standard error says what was left out: six STARTs, the FAIL and the
    # run without nominalTime.
    assert "left out 8" in r.stderr, r.stderr
    return json.loads(r.stdout)
