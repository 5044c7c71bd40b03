"""A real `gapless serve` for the Python suites (the client's and the web
page's): started on a ledger at a port of its own choosing, its URL read
from the line it prints when it listens, its standard error kept."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (http://\S+)")


def gapless_bin() -> str:
    """`GAPLESS_BIN`, else the debug build of this clone."""
    if os.environ.get("GAPLESS_BIN"):
        return os.environ["GAPLESS_BIN"]
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    return str(Path(target) / "debug" / "gapless")


BIN = gapless_bin()


def free_port() -> int:
    """A loopback port free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """`gapless serve` on ledger `db`, with extra `serve` arguments and
    environment; `url` is known once `start` returns. The port is chosen at
    the first start and kept, so that a stopped server can start again
    where its clients expect it."""

    db: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    bin: str = BIN
    port: int = 0
    url: str = ""
    proc: subprocess.Popen | None = None
    log: list[str] = field(default_factory=list)

    def start(self, timeout: float = 30.0) -> Server:
        if self.port == 0:
            self.port = free_port()
        listen = f"127.0.0.1:{self.port}"
        argv = [self.bin, "serve", "--db", self.db, "--listen", listen, *self.args]
        self.proc = subprocess.Popen(
            argv,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **self.env},
        )
        listening = threading.Event()

        def drain(stream):
            for line in stream:
                self.log.append(line.rstrip("\n"))
                m = LISTENING.search(line)
                if m and not listening.is_set():
                    self.url = m.group(1)
                    listening.set()

        threading.Thread(target=drain, args=(self.proc.stderr,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while not listening.wait(0.05):
            if self.proc.poll() is not None:
                time.sleep(0.1)  # the rest of its last words
                raise RuntimeError(f"gapless serve exited {self.proc.returncode}: {self.log}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"gapless serve did not start in {timeout}s: {self.log}")
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
