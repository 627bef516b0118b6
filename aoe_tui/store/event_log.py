"""The referee's append-only event log (`events.jsonl`).

The writer is the only thing between a match and its record, so it checks
what it appends (contiguous sequence, clock never going back), flushes every
line, and fsyncs the events that change the outcome: after a crash or a
`kill -9` the log on disk is still a valid prefix of the match. The flush
is what survives a killed process (the line is in the kernel); the fsync,
which only matters if the machine itself goes down, runs on a syncer thread
a moment later, so the referee's loop never waits for the disk (about 10 ms
per fsync here). The syncer gathers the requests of `SYNC_GATHER_SECONDS`
into one fsync: a busy tick passes a milestone of every territory within
milliseconds, and one fsync per pass was a third of the referee's own cost
(benchmarks/referee_overhead.py). `close` waits for the last fsync.

Each event goes to the file in one unbuffered write of its whole line, so
nothing is held back to be written again later. A write the file system
refuses (a full disk: `ENOSPC`, a quota) is cut back to the last whole event
and the writer fails for good (`LogWriteFailed`, one line naming the file
system): the log on disk stays a valid prefix, never holds a torn or doubled
event, and nothing is appended after the gap.

The reader is tolerant where a live writer can legitimately leave a mark (a
final line without newline, mid-append) and strict where the file is wrong
(a gap, a duplicate, bad JSON mid-file, another schema version), naming the
file and line in one sentence.
"""

from __future__ import annotations

import errno
import io
import json
import os
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from pydantic import ValidationError

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import SCHEMA_VERSION, EventBase, parse_event
from aoe_tui.domain.manifest_rules import format_location
from aoe_tui.store.log_lines import BodyDecoder, Split, stamped

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


# How long the syncer lets requests gather into one fsync: a verdict may reach the disk this much later,
# which matters only if the machine itself goes down (a killed referee loses nothing: each line is flushed).
SYNC_GATHER_SECONDS = 0.05


class _Syncer:
    """fsyncs a file soon after each request, off the caller's thread: `SYNC_GATHER_SECONDS` after the first
    request, so the requests of that moment, and any made while the fsync runs, share one. It holds its own
    duplicate of the descriptor, so a writer dropped without `close` (its file closed by the garbage
    collector, the number perhaps reused) never leaves it syncing someone else's file; it then simply ends."""

    def __init__(self, fd: int) -> None:
        self._fd = os.dup(fd)
        self._wanted = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="event-log-fsync", daemon=True)
        self._thread.start()

    def request(self) -> None:
        self._wanted.set()

    def _run(self) -> None:
        try:
            while True:
                self._wanted.wait()
                self._stopping.wait(SYNC_GATHER_SECONDS)  # the requests of this moment gather; a stop cuts it short
                self._wanted.clear()
                if self._stopping.is_set():  # read after the clear: a stop that came before it is seen here
                    return
                os.fsync(self._fd)
        except OSError:
            return  # the file system failed the sync (full, gone): the writer's own next write or close meets it
        finally:
            os.close(self._fd)

    def abandon(self) -> None:
        self._stopping.set()
        self._wanted.set()

    def stop(self) -> None:
        """Return once no fsync is running; the caller makes the final one."""
        self.abandon()
        self._thread.join()


def encode_event(event: EventBase) -> str:
    return json.dumps(event.to_json(), separators=(",", ":"), ensure_ascii=False)


class LogWriteFailed(AoeError):
    """The event log's file system refused a write: the log ends at the last whole event and takes no more."""


def _mount_point(path: Path) -> Path:
    """The mount point of the file system holding `path` (what an operator frees space on)."""
    path = path.resolve()
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return path


class EventLogWriter:
    """Appends events to a new log; refuses to overwrite an existing one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.stat().st_size > 0:
            raise AoeError(f"{self.path}: refusing to write into an existing, non-empty event log")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[bytes] | None = open(self.path, "ab", buffering=0)  # noqa: SIM115  (the writer's, until close())
        self.next_sequence = 0
        self.last_elapsed_ms = 0
        self._size = 0  # the bytes of whole events: where a refused write is cut back to
        self.failure: LogWriteFailed | None = None
        self._syncer = _Syncer(self._file.fileno())
        # Detached at close: the registry of finalizers is global and holds the syncer, whose thread holds the
        # sys.stderr of its start (a running app's print capture, the app, the match that owns this writer): kept
        # after close, every match of a process stayed in memory for good.
        self._abandon_if_dropped = weakref.finalize(self, self._syncer.abandon)

    def append(self, event: EventBase) -> EventBase:
        if self.failure is not None:
            raise self.failure
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
        line = (encode_event(event) + "\n").encode("utf-8")
        try:
            written = 0
            while written < len(line):  # an unbuffered write may take part of the line; the rest follows
                taken = self._file.write(line[written:])
                if not taken:
                    raise OSError(errno.EIO, "the file took none of the line")
                written += taken
        except OSError as error:
            raise self._refused(event, error) from None
        self._size += len(line)
        if event.kind in DURABLE_KINDS:
            self._syncer.request()
        self.next_sequence += 1
        self.last_elapsed_ms = event.elapsed_ms
        return event

    def _refused(self, event: EventBase, error: OSError) -> LogWriteFailed:
        """Cut the file back to its last whole event and fail for good, saying which file system refused."""
        assert self._file is not None
        try:
            os.ftruncate(self._file.fileno(), self._size)
        except OSError:
            pass  # nothing more can be done to this file; a reader skips a cut final line
        why = "no space left" if error.errno == errno.ENOSPC else (error.strerror or type(error).__name__).lower()
        self.failure = LogWriteFailed(
            f"{self.path}: the file system at {_mount_point(self.path)} refused event {event.sequence} "
            f"({event.kind}): {why}; the log ends at event {event.sequence - 1} and records nothing more"
        )
        return self.failure

    def close(self) -> None:
        if self._file is not None:
            self._abandon_if_dropped.detach()
            self._syncer.stop()
            try:
                os.fsync(self._file.fileno())
            except OSError:
                pass  # a full file system: what was written is what it kept (a failed append already said so)
            self._file.close()
            self._file = None

    def __enter__(self) -> EventLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_log_bytes(path: Path) -> bytes:
    """A log file's bytes, or one line saying why it cannot be read."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise AoeError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AoeError(f"{path}: is a directory, not an event log") from None
    except OSError as error:
        raise AoeError(f"{path}: cannot read ({error.strerror})") from None


def read_event_log(path: Path) -> list[EventBase]:
    """Every event of a log file (a long replay keeps them as lines instead: `TimelineIndex.from_log`)."""
    return [stamped(*split) for _, split in scan_log(read_log_bytes(path), str(path), BodyDecoder())]


class ScanPoint(NamedTuple):
    """Where a scan of a log stands: the next line's offset, the sequence it must carry, the clock it must not
    go below, and the event before it (what a reader that read the lines so far itself hands on)."""

    offset: int = 0
    expected: int = 0
    last_ms: int = -(2**63)
    previous: Split | None = None


def scan_log(
    data: bytes, source: str, decoder: BodyDecoder, start: ScanPoint = ScanPoint()
) -> Iterator[tuple[int, Split]]:
    """(offset, (event, sequence, elapsed_ms)) of every event of a log's bytes from `start`, each checked
    against the last.

    A line in the recorder's shape is taken apart by `decoder`; any other line, and any line that breaks a
    rule, is read by the strict reader (`parse_event_record`), which words the error. An invalid byte
    anywhere is reported first, as when the whole file is read as text."""
    offset, expected, last_ms, previous = start
    split_line = decoder.split
    lines = io.BytesIO(data)
    lines.seek(offset)
    for number, raw in enumerate(lines, data.count(b"\n", 0, offset) + 1):
        split = split_line(raw)
        if split is None or split[1] != expected or split[2] < last_ms:
            try:
                event = _strict_line(raw, f"{source} line {number}", expected, previous and stamped(*previous))
            except (AoeError, UnicodeDecodeError):
                _check_text(data, source)
                raise
            if event is _END:
                return
            if event is None:
                offset += len(raw)
                continue
            split = event, event.sequence, event.elapsed_ms
        yield offset, split
        expected, last_ms, previous = expected + 1, split[2], split
        offset += len(raw)


_END = object()  # a final line cut mid-append: the log ends before it


def _strict_line(raw: bytes, where: str, expected: int, previous: EventBase | None) -> Any:
    """The event of one line (None for a blank line, `_END` for a cut final line), or the error it has."""
    text = raw.decode("utf-8")  # an undecodable line is reported by the caller's _check_text
    complete = text.endswith("\n")
    if not text.strip():
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        if not complete:
            return _END  # a live writer is mid-append; the prefix is the log
        raise AoeError(f"{where}: bad JSON ({error.msg} at column {error.colno})") from None
    return parse_event_record(record, where, expected, previous)


def _check_text(data: bytes, source: str) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise AoeError(f"{source} line {line}: not UTF-8 text (binary file?)") from None


def parse_event_lines(text: str, source: str) -> list[EventBase]:
    return [stamped(*split) for _, split in scan_log(text.encode("utf-8"), source, BodyDecoder())]


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
