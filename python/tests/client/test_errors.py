"""Errors, tokens and retries, against real servers (and real broken sockets)."""

from __future__ import annotations

import socket
import threading
from datetime import datetime, timezone

import pytest
from conftest import PG_URL, Server, free_port, write_tokens

import gapless

UTC = timezone.utc
T0 = datetime(2025, 6, 14, tzinfo=UTC)
T1 = datetime(2025, 6, 14, 1, tzinfo=UTC)


def test_tokens(make_server, tmp_path, monkeypatch):
    tokens = write_tokens(tmp_path / "tokens.toml")
    server = make_server("--tokens-file", str(tmp_path / "tokens.toml"))
    monkeypatch.delenv("GAPLESS_TOKEN", raising=False)
    assert gapless.Client(server.url).health() == {"status": "ok"}  # open without a token
    with pytest.raises(gapless.Denied) as e:
        gapless.Client(server.url).assets()
    assert e.value.status == 401 and e.value.kind == "denied"
    with pytest.raises(gapless.Denied) as e:
        gapless.Client(server.url, token="not-a-token-0123456789").assets()
    assert e.value.status == 401
    reader = gapless.Client(server.url, token=tokens["read"])
    assert list(reader.assets()) == []
    with pytest.raises(gapless.Denied) as e:
        reader.record("orders", T0, T1, id="a")
    assert e.value.status == 403
    writer = gapless.Client(server.url, token=tokens["write"])
    assert writer.record("orders", T0, T1, id="a").accepted == 1
    with pytest.raises(gapless.Denied) as e:  # outside its prefixes: the batch is refused whole
        writer.record_many(
            [
                {"asset": "orders", "id": "b", "start": T0, "end": T1},
                {"asset": "payments", "id": "c", "start": T0, "end": T1},
            ]
        )
    assert e.value.status == 403 and "payments" in e.value.message
    with pytest.raises(gapless.Denied):
        writer.declare("orders", tz="UTC")
    with pytest.raises(gapless.Denied):
        writer.set_rule("r", assets=["orders"], every="1h", from_=T0)
    # GAPLESS_TOKEN is the token when none is given.
    monkeypatch.setenv("GAPLESS_TOKEN", tokens["admin"])
    admin = gapless.Client(server.url)
    assert admin.declare("payments", key_span="1h").key_span == "PT1H"
    assert admin.set_rule("r", assets=["orders"], every="1h", from_=T0).outcome == "created"


def test_bad_input_carries_message_status_detail(client):
    with pytest.raises(gapless.BadInput) as e:
        client.record("orders", "2025-13-01", T1)
    assert e.value.status == 400 and "2025-13-01" in e.value.message and e.value.detail is None
    assert str(e.value) == e.value.message
    client.declare("orders")
    with pytest.raises(gapless.BadInput, match="every"):
        client.windows("orders", T0, T1, "7x")
    with pytest.raises(gapless.BadInput, match="kind"):
        client.record_many([{"asset": "orders", "start": T0, "end": T1, "kind": "maybe"}])
    # Arguments the client can judge itself never reach the server.
    with pytest.raises(TypeError, match="assets"):
        client.check_all("orders", T0, T1)
    with pytest.raises(ValueError, match="^end: naive"):
        client.record("orders", T0, datetime(2025, 6, 14, 1))


def test_body_limit(make_server):
    server = make_server("--body-limit", "4096")
    client = gapless.Client(server.url)
    events = [{"asset": "orders", "id": f"e{i}", "start": T0, "end": T1} for i in range(200)]
    with pytest.raises(gapless.BadInput) as e:
        client.record_many(events)
    assert e.value.status == 413 and "4096" in e.value.message, e.value.message


def test_no_server_is_unavailable():
    port = free_port()
    client = gapless.Client(f"http://127.0.0.1:{port}", retries=0)
    with pytest.raises(gapless.Unavailable) as e:
        client.check("orders", T0, T1)
    assert e.value.status is None
    assert e.value.message.startswith(f"cannot reach the server at http://127.0.0.1:{port}: ")


@pytest.mark.parametrize("with_id", [True, False])
def test_a_refused_connection_is_sent_again(ledger, with_id):
    """The server is down when the request goes out and back a moment later
    on the same port: nothing was sent, so even an event without an id is
    sent again, and stored once."""
    server = Server(ledger.db).start()
    url = server.url
    server.stop()
    restarted = threading.Timer(0.4, server.start)
    restarted.start()
    try:
        client = gapless.Client(url, retries=6, backoff=0.2)
        r = client.record("orders", T0, T1, id="a" if with_id else None)
        assert (r.accepted, r.duplicates) == (1, 0)
        restarted.join()
        assert client.asset("orders").events == 1
    finally:
        restarted.join()
        server.stop()


class Hangup:
    """A TCP listener that reads each request and closes the connection
    without an answer: the outcome of the request is unknown."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.recv(65536)
            conn.close()

    def close(self) -> None:
        self.sock.close()


def test_a_lost_answer_is_sent_again_only_when_safe():
    hangup = Hangup()
    try:
        client = gapless.Client(hangup.url, retries=3, backoff=0.01)
        with pytest.raises(gapless.Unavailable):
            client.record("orders", T0, T1)  # no id: a second copy would be a second event
        assert hangup.connections == 1
        with pytest.raises(gapless.Unavailable):
            client.record_many(
                [
                    {"asset": "orders", "id": "a", "start": T0, "end": T1},
                    {"asset": "orders", "start": T0, "end": T1},
                ]
            )
        assert hangup.connections == 2
        with pytest.raises(gapless.Unavailable):
            client.record("orders", T0, T1, id="a")  # with an id a copy is a duplicate
        assert hangup.connections == 2 + 4
        with pytest.raises(gapless.Unavailable):
            client.check("orders", T0, T1)  # questions are safe to ask again
        assert hangup.connections == 6 + 4
        with pytest.raises(gapless.Unavailable):
            client.delete_rule("r")  # a delete that went through would then be a 404
        assert hangup.connections == 10 + 1
    finally:
        hangup.close()


class Proxy:
    """A TCP proxy to PostgreSQL that can be cut (connections closed, new
    ones refused) and restored on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = free_port()
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", self.port))
        s.listen(64)
        self.listener = s
        threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def cut(self) -> None:
        assert self.listener is not None
        try:  # wakes the accepting thread (close alone would leave it listening)
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        with self.lock:
            for c in self.conns:
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                c.close()
            self.conns.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                down, _ = listener.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(self.target)
            except OSError:
                down.close()
                continue
            with self.lock:
                self.conns += [down, up]
            for a, b in ((down, up), (up, down)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_503_while_the_database_is_away_is_sent_again(tmp_path):
    """PostgreSQL goes away under a running server (503: the ledger's
    database is unavailable, nothing stored) and comes back: the client's
    retries get the write through, once."""
    import uuid
    from urllib.parse import urlsplit

    from conftest import psql

    pg = urlsplit(PG_URL)
    proxy = Proxy((pg.hostname or "127.0.0.1", pg.port or 5432))
    schema = f"py_{uuid.uuid4().hex[:12]}"
    url = f"postgres://{pg.username or 'postgres'}@127.0.0.1:{proxy.port}{pg.path}?schema={schema}&pool_size=2"
    server = Server(url).start()
    try:
        client = gapless.Client(server.url, retries=0)
        client.record("orders", T0, T1, id="a")
        proxy.cut()
        with pytest.raises(gapless.Unavailable) as e:
            client.record("orders", T1, datetime(2025, 6, 14, 2, tzinfo=UTC), id="b")
        assert e.value.status == 503 and "the ledger's database is unavailable" in e.value.message
        threading.Timer(1.0, proxy.restore).start()
        patient = gapless.Client(server.url, retries=8, backoff=0.25)
        r = patient.record("orders", T1, datetime(2025, 6, 14, 2, tzinfo=UTC), id="b")
        assert (r.accepted, r.duplicates) == (1, 0)
        assert patient.asset("orders").events == 2
    finally:
        server.stop()
        proxy.cut()
        psql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
