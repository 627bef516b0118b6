"""Server-sent events, read incrementally from a body's bytes as they arrive (the WHATWG event-stream format).

The gateway forwards each chunk as it comes and feeds a copy here; an event
may be split across chunks anywhere, even inside a UTF-8 sequence or a CRLF.
A single event is bounded: a stream that never ends an event cannot make the
referee buffer without limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_EVENT_BYTES = 8 * 1024 * 1024
_BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")


class EventTooLarge(ValueError):
    """One event grew past MAX_EVENT_BYTES without ending."""


@dataclass(frozen=True)
class ServerSentEvent:
    event: str  # "message" when the stream names none
    data: str


class SSEDecoder:
    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self._pending = bytearray()
        self._scanned = 0  # how much of _pending holds no boundary start (each byte is searched once)
        self._max = max_event_bytes

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by `chunk` (with what came before it)."""
        pending = self._pending
        pending += chunk
        events, begin, position = [], 0, self._scanned
        while (boundary := _BOUNDARY.search(pending, position)) is not None:
            if (event := _parse_block(bytes(pending[begin : boundary.start()]))) is not None:
                events.append(event)
            begin = position = boundary.end()
        del pending[:begin]
        # A boundary is at most 4 bytes: one may start in the last 3 bytes and end in the next chunk.
        self._scanned = max(0, len(pending) - 3)
        if len(pending) > self._max:
            raise EventTooLarge(f"a server-sent event longer than {self._max} bytes")
        return events

    def close(self) -> list[ServerSentEvent]:
        """The last event, when the stream ended without the blank line after it."""
        block = bytes(self._pending)
        self._pending, self._scanned = bytearray(), 0
        event = _parse_block(block)
        return [event] if event is not None else []


def _parse_block(block: bytes) -> ServerSentEvent | None:
    name, data, seen_data = "message", [], False
    for raw in re.split(rb"\r\n|\n|\r", block):
        line = raw.decode("utf-8", errors="replace")
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            name = value or "message"
        elif field == "data":
            data.append(value)
            seen_data = True
    return ServerSentEvent(name, "\n".join(data)) if seen_data else None
