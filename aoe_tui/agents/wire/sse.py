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
        self._pending = b""
        self._max = max_event_bytes

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events completed by `chunk` (with what came before it)."""
        self._pending += chunk
        events = []
        while (boundary := _BOUNDARY.search(self._pending)) is not None:
            block, self._pending = self._pending[: boundary.start()], self._pending[boundary.end() :]
            if (event := _parse_block(block)) is not None:
                events.append(event)
        if len(self._pending) > self._max:
            raise EventTooLarge(f"a server-sent event longer than {self._max} bytes")
        return events

    def close(self) -> list[ServerSentEvent]:
        """The last event, when the stream ended without the blank line after it."""
        block, self._pending = self._pending, b""
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
