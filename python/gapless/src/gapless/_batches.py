"""Sending a producer adapter's atomic batches of events (gapless.iceberg,
gapless.delta): whole batches packed into requests of at most
:data:`BATCH_EVENTS` events, so that what one commit maps to (an Iceberg
overwrite's pair, a Delta commit) is never split across two requests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._client import Client

#: Events go to the server in requests of at most this many (a batch is never split).
BATCH_EVENTS = 5000


def record_batches(client: Client, batches: Iterable[list[dict[str, Any]]]) -> tuple[int, int]:
    """Record ``batches`` in order; answers (events stored, duplicates).
    A failure raises; the requests answered before it stay stored."""
    recorded = duplicates = 0
    chunk: list[dict[str, Any]] = []

    def send() -> None:
        nonlocal recorded, duplicates, chunk
        if chunk:
            r = client.record_many(chunk)
            recorded += r.accepted
            duplicates += r.duplicates
            chunk = []

    for batch in batches:
        if len(chunk) + len(batch) > BATCH_EVENTS:
            send()
        chunk.extend(batch)
    send()
    return recorded, duplicates
