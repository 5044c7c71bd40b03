"""SPEC §7 over HTTPS: a rule's firings start runs in a real Airflow 3.3.2
whose api-server speaks only TLS (`airflow api-server --ssl-cert --ssl-key`),
as managed Airflow does.

A certificate authority and a server certificate for 127.0.0.1 are made
here. A second api-server, on the same metadata database and secrets as the
suite's Airflow, serves HTTPS with them; a second `gapless serve` delivers
to it through a `dag_id` target whose `ca_file` names the authority. Each
complete hour of the test's own asset makes exactly one run, seen through
the suite's plain api-server. The same target without `ca_file` does not
trust the server: its firing stays pending, its error naming the unknown
authority, and no run starts.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
from pathlib import Path

import httpx
import pytest
from conftest import TRIGGER_DAG
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from airflow_harness import Procs, free_port, wait_for

DAY = dt.datetime(2031, 1, 6, tzinfo=dt.timezone.utc)
HOURS = 2
WAIT = 90  # seconds: the most any single step may take


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def make_tls(d: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate for 127.0.0.1 signed by it: (ca, cert, key)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("gapless test CA"))
        .issuer_name(_name("gapless test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("127.0.0.1"))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    d.mkdir(parents=True, exist_ok=True)
    paths = (d / "ca.pem", d / "server.pem", d / "server.key")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture(scope="module")
def https_airflow(airflow, workdir):
    """A second api-server of the suite's Airflow, over HTTPS only."""
    ca, cert, key = make_tls(workdir / "tls")
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    env = dict(airflow.env, AIRFLOW__API__PORT=str(port), AIRFLOW__API__BASE_URL=url)
    procs = Procs()
    try:
        p = procs.start(
            "api-server-tls",
            [airflow.bin, "api-server", "-w", "1", "--ssl-cert", str(cert), "--ssl-key", str(key)],
            env,
            workdir,
            workdir / "logs" / "api-server-tls.log",
        )
        wait_for(
            "the HTTPS api-server",
            lambda: httpx.get(
                f"{url}/api/v2/monitor/health",
                verify=ssl.create_default_context(cafile=str(ca)),
                timeout=5,
            ).is_success,
            120,
            0.5,
            [p],
        )
        # Plain HTTP to it is refused: it speaks only TLS.
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/api/v2/monitor/health", timeout=5)
        yield url, ca
    finally:
        procs.stop_all()


def serve(workdir: Path, airflow, url: str, ca: Path | None, name: str):
    """`gapless serve` on a fresh ledger with one dag_id target at `url`."""
    exe = os.environ["GAPLESS_BIN"]
    targets = workdir / f"targets-{name}.toml"
    ca_line = f'ca_file = "{ca}"\n' if ca else ""
    targets.write_text(
        'poll = "200ms"\n\n'
        f'[[target]]\nname = "airflow_tls"\nkind = "airflow"\nurl = "{url}"\n{ca_line}'
        f'username = "{airflow.username}"\npassword = "{airflow.password}"\n'
        f'timeout = "10s"\ndag_id = "{TRIGGER_DAG}"\n'
    )
    port = free_port()
    procs = Procs()
    p = procs.start(
        f"gapless-serve-{name}",
        [exe, "serve", "--db", str(workdir / f"ledger-{name}.db"), "--listen",
         f"127.0.0.1:{port}", "--targets-file", str(targets)],
        dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "info")),
        workdir,
        workdir / "logs" / f"gapless-serve-{name}.log",
    )
    base = f"http://127.0.0.1:{port}"
    wait_for("gapless serve", lambda: httpx.get(f"{base}/healthz", timeout=5).is_success, 30, 0.1, [p])
    return procs, base


def iso(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def key(hour: int) -> str:
    return (DAY + dt.timedelta(hours=hour)).strftime("%Y-%m-%dT%H:%M:%S")


def land_hours(base: str, rule: str, asset: str) -> None:
    c = httpx.Client(base_url=base, timeout=30)
    c.put(f"/v1/assets/{asset}", json={}).raise_for_status()
    c.put(f"/v1/rules/{rule}", json={
        "assets": [asset], "every": "1h", "from": iso(DAY), "target": "airflow_tls",
    }).raise_for_status()
    for h in range(HOURS):
        c.post("/v1/events", json={
            "asset": asset,
            "start": iso(DAY + dt.timedelta(hours=h)),
            "end": iso(DAY + dt.timedelta(hours=h + 1)),
            "id": f"{asset}-{h}",
        }).raise_for_status()


def firings(base: str) -> list[dict]:
    return httpx.get(f"{base}/v1/firings", timeout=30).json()["firings"]


def test_firings_start_runs_in_an_airflow_behind_https(airflow, https_airflow, workdir):
    url, ca = https_airflow
    procs, base = serve(workdir, airflow, url, ca, "tls")
    try:
        land_hours(base, "orders_tls", "orders_tls")
        done = wait_for(
            "every firing delivered over HTTPS",
            lambda: (f := firings(base)) and len(f) == HOURS
            and all(x["delivery"]["state"] == "delivered" for x in f) and f,
            WAIT,
            0.5,
        )
        for h in range(HOURS):
            runs = airflow.runs_for_key(TRIGGER_DAG, key(h))
            ids = [r["dag_run_id"] for r in runs]
            assert ids == [f"gapless__orders_tls__{key(h)}__1"], (h, ids, done)
    finally:
        procs.stop_all()


def test_an_untrusted_airflow_is_not_sent_to(airflow, https_airflow, workdir):
    url, _ = https_airflow
    procs, base = serve(workdir, airflow, url, None, "untrusted")
    try:
        land_hours(base, "orders_untrusted", "orders_untrusted")
        f = wait_for(
            "an error on the firings",
            lambda: (f := firings(base)) and all(x["delivery"]["last_error"] for x in f) and f,
            WAIT,
            0.5,
        )
        for x in f:
            assert x["delivery"]["state"] == "pending", x
            error = x["delivery"]["last_error"].lower()
            assert "certificate" in error and url in x["delivery"]["last_error"], error
        page = airflow.get(f"/api/v2/dags/{TRIGGER_DAG}/dagRuns", limit=100)
        assert not [r for r in page["dag_runs"] if "orders_untrusted" in r["dag_run_id"]]
    finally:
        procs.stop_all()
