"""The referee's append-only event log (`events.jsonl`).

The writer is the only thing between a match and its record, so it checks
what it appends (contiguous sequence, clock never going back), flushes every
line, and fsyncs the events that change the outcome: after a crash or a
`kill -9` the log on disk is still a valid prefix of the match.

The reader is tolerant where a live writer can legitimately leave a mark (a
final line without newline, mid-append) and strict where the file is wrong
(a gap, a duplicate, bad JSON mid-file, another schema version), naming the
file and line in one sentence.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import SCHEMA_VERSION, EventBase, parse_event
from aoe_tui.domain.manifest_rules import format_location

DURABLE_KINDS = frozenset(
    {
        "match_state_changed",
        "milestone_passed",
        "milestone_revoked",
        "durable_deployment_completed",
        "match_finished",
        "post_match_drain_finished",
        "match_paused",
        "match_resumed",
        "milestone_paused",
        "milestone_resumed",
        "milestone_retry_requested",
    }
)


def encode_event(event: EventBase) -> str:
    return json.dumps(event.to_json(), separators=(",", ":"), ensure_ascii=False)


class EventLogWriter:
    """Appends events to a new log; refuses to overwrite an existing one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.stat().st_size > 0:
            raise AoeError(f"{self.path}: refusing to write into an existing, non-empty event log")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(self.path, "a", encoding="utf-8")
        self.next_sequence = 0
        self.last_elapsed_ms = 0

    def append(self, event: EventBase) -> EventBase:
        if self._file is None:
            raise AoeError(f"{self.path}: event log is closed")
        if event.sequence != self.next_sequence:
            raise AoeError(
                f"{self.path}: event {event.kind} has sequence {event.sequence}, expected {self.next_sequence}"
            )
        if event.elapsed_ms < self.last_elapsed_ms:
            raise AoeError(
                f"{self.path}: event {event.sequence} goes back in time "
                f"({event.elapsed_ms} ms < {self.last_elapsed_ms} ms)"
            )
        self._file.write(encode_event(event) + "\n")
        self._file.flush()
        if event.kind in DURABLE_KINDS:
            os.fsync(self._file.fileno())
        self.next_sequence += 1
        self.last_elapsed_ms = event.elapsed_ms
        return event

    def close(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def __enter__(self) -> EventLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_event_log(path: Path) -> list[EventBase]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise AoeError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AoeError(f"{path}: is a directory, not an event log") from None
    except OSError as error:
        raise AoeError(f"{path}: cannot read ({error.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise AoeError(f"{path} line {line}: not UTF-8 text (binary file?)") from None
    return parse_event_lines(text, str(path))


def _lines(text: str) -> Iterator[tuple[int, str, bool]]:
    """(line number, content, complete) — complete is False for a final line without newline."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        last = index == len(lines) - 1
        if last and line == "":
            return
        yield index + 1, line, not last


def parse_event_lines(text: str, source: str) -> list[EventBase]:
    events: list[EventBase] = []
    for number, line, complete in _lines(text):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as error:
            if not complete:
                break  # a live writer is mid-append; the prefix is the log
            raise AoeError(f"{source} line {number}: bad JSON ({error.msg} at column {error.colno})") from None
        events.append(
            parse_event_record(
                raw, f"{source} line {number}", expected=len(events), previous=events[-1] if events else None
            )
        )
    return events


def parse_event_record(raw: object, where: str, expected: int, previous: EventBase | None) -> EventBase:
    """Validate one event object against the envelope rules and its predecessor."""
    if not isinstance(raw, dict):
        raise AoeError(f"{where}: an event must be a JSON object")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        raise AoeError(f"{where}: schema_version {version!r} is not supported (expected {SCHEMA_VERSION})")
    for stamp in ("sequence", "elapsed_ms"):  # defaults of an event the engine has not emitted yet, never of a record
        if stamp not in raw:
            raise AoeError(f"{where}: {raw.get('kind', 'event')} field {stamp}: Field required")
    try:
        event = parse_event(raw)
    except ValidationError as error:
        first = error.errors()[0]
        field = format_location(tuple(p for p in first["loc"] if p not in (raw.get("kind"), "unknown")))
        raise AoeError(f"{where}: {raw.get('kind', 'event')} field {field or '?'}: {first['msg']}") from None
    if event.sequence != expected:
        problem = "duplicate" if previous is not None and event.sequence <= previous.sequence else "gap"
        raise AoeError(f"{where}: sequence {event.sequence} where {expected} was expected ({problem})")
    if previous is not None and event.elapsed_ms < previous.elapsed_ms:
        raise AoeError(f"{where}: elapsed_ms {event.elapsed_ms} goes back from {previous.elapsed_ms}")
    return event


def parse_event_objects(records: list[object], source: str) -> list[EventBase]:
    """Events embedded in a single-file match, checked like a log."""
    events: list[EventBase] = []
    for index, raw in enumerate(records):
        events.append(
            parse_event_record(
                raw, f"{source} events[{index}]", expected=len(events), previous=events[-1] if events else None
            )
        )
    return events
