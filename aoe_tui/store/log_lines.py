"""An event log kept as its raw lines, read in one pass and decoded an event at a time.

A million-event log is about 200 MB of JSON; a million pydantic events would take ten times that. `LogLines`
keeps the file's bytes once and the offset of every event's line, and decodes an event only when asked.

Reading is the cost of a long replay, so the reader takes the recorder's own line shape apart by hand: the
envelope (`{"schema_version":1,"sequence":S,"elapsed_ms":E,`) is cut off and the rest, the body, is validated
once per distinct body: for the fold by msgspec, into its event's mirror (`fold_events`), and for an event
asked for by pydantic-core's JSON validation of the line as its kind's event class (what the event union
picks; the union itself for a kind it does not know), which also judges any line msgspec refuses. A long match
repeats the same body thousands of times (the same evaluation of the same milestone, the same failure, the
same charge), so most lines cost a dictionary look-up. A body that names a stamp itself (a duplicate key) is
never shared.
Any other line (another writer's key order, a blank line, a damaged record) goes through the strict reader
of `event_log`, which also words every error.

The read is two stages, so another process can take the first (`split_lines`: where each line starts, its
clock, its sequence checked, its body numbered by first sight) while the fold takes the chunks it hands on
(`TimelineIndex.from_log`): splitting is a third of a long load, and on a second core it is off the fold's path.
"""

from __future__ import annotations

import io
import json
import mmap
import re
from array import array
from collections.abc import Callable, Generator, Sequence
from typing import NamedTuple, overload

from aoe_tui.domain.events import EVENT_ADAPTER, EVENT_CLASSES, SCHEMA_VERSION, EventBase, parse_event
from aoe_tui.store.fold_events import FoldStep, decode_all_for_fold, decode_for_fold, fold_of

# The recorder's line: the envelope, then the body (the newline included). One regular expression takes it
# apart in one C call: a quarter cheaper than cutting and checking its parts in Python, per line of a long log.
RECORDER_LINE = re.compile(rb'\{"schema_version":%d,"sequence":(\d+),"elapsed_ms":(\d+),(.*)' % SCHEMA_VERSION, re.S)
KIND = b'"kind":"'
BODY_CACHE_LIMIT = 20_000  # distinct bodies kept (about 20 MB); the cache starts over when it is full
RECENT_LIMIT = 4_096  # events decoded lately, kept for the next frame (the event list shows the same rows)
CHUNK_LINES = 8_192  # lines of a `LineChunk` (about 160 kB through a pipe)

# An event with the stamps of its line: the event may carry another line's (a shared body), the fold
# reads the line's, and `stamped` makes the recorded event when one is asked for.
Split = tuple[EventBase, int, int]


def stamped(event: EventBase, sequence: int, elapsed_ms: int) -> EventBase:
    """`event` as recorded at `sequence` and `elapsed_ms`."""
    if (event.sequence, event.elapsed_ms) == (sequence, elapsed_ms):
        return event
    return event.model_copy(update={"sequence": sequence, "elapsed_ms": elapsed_ms})


def decode_line(line: bytes) -> EventBase:
    """The event of one line already known to be valid (pydantic-core's JSON parser, else Python's)."""
    try:
        return EVENT_ADAPTER.validate_json(line)
    except ValueError:  # a line only Python's parser takes (NaN in an evidence object)
        return parse_event(json.loads(line))


class BodyDecoder:
    """Recorder-shaped lines taken apart, each distinct body validated once."""

    def __init__(self) -> None:
        self.bodies: dict[bytes, EventBase | None] = {}

    def split(self, line: bytes) -> Split | None:
        """(event, sequence, elapsed_ms) of a line, or None when it is not in the recorder's shape or does
        not validate (the strict reader then reads it)."""
        parts = RECORDER_LINE.match(line)
        if parts is None:
            return None
        sequence, elapsed, body = parts.groups()
        event = self.bodies.get(body)
        if event is None:
            return self.first_sight(line, body, int(sequence), int(elapsed))
        return event, int(sequence), int(elapsed)

    def fold_step(self, line: bytes, body: int, sequence: int, elapsed_ms: int) -> FoldStep | None:
        """What the fold folds for a recorder-shaped line whose body (from index `body`) may stand for every line
        with that body (`LineChunk`'s new lines), and its fold; or None: the line does not validate, or its body
        names a stamp (the strict reader's). The body is decoded into its event's mirror (`fold_events`: a
        fraction of pydantic's cost, which a log of ever new bodies pays on every line); a line msgspec refuses
        is the event classes' to judge."""
        mirror = decode_for_fold(b"{" + line[body:])
        if mirror is None:
            event = self._shared(line, line[body:], sequence, elapsed_ms)
            return None if event is None else (event, fold_of(event))
        return mirror, fold_of(mirror)

    def _shared(self, line: bytes, body: bytes, sequence: int, elapsed_ms: int) -> EventBase | None:
        """The event of a line whose body may stand for every line with that body, or None (as `fold_step`)."""
        if body not in self.bodies and self.first_sight(line, body, sequence, elapsed_ms) is None:
            return None
        return self.bodies.get(body)

    def first_sight(self, line: bytes, body: bytes, sequence: int, elapsed_ms: int) -> Split | None:
        if body in self.bodies:
            return None  # a body that names a stamp: only the strict reader may read its line
        try:
            event = _validate(line, body)
        except ValueError:
            return None
        if (event.schema_version, event.sequence, event.elapsed_ms) != (SCHEMA_VERSION, sequence, elapsed_ms):
            return None  # not what the envelope said (a stamp inside the body won)
        if len(self.bodies) >= BODY_CACHE_LIMIT:
            self.bodies.clear()
        self.bodies[body] = None if _names_a_stamp(body) else event
        return event, sequence, elapsed_ms


def _names_a_stamp(body: bytes) -> bool:
    """Whether a body names a stamp itself (a duplicate key): its lines are only the strict reader's."""
    return b'"sequence"' in body or b'"elapsed_ms"' in body or b'"schema_version"' in body


def _validate(line: bytes, body: bytes) -> EventBase:
    """The union's own validation, its discriminator skipped when the body begins with a known kind: the
    class validates the line itself (a later duplicate `kind` key fails its literal and goes the slow way)."""
    if body.startswith(KIND):
        event_class = EVENT_CLASSES.get(body[len(KIND) : body.find(b'"', len(KIND))].decode())
        if event_class is not None:  # its validator itself: `model_validate_json` is a Python call around it
            return event_class.__pydantic_validator__.validate_json(line)  # type: ignore[no-any-return]
    return EVENT_ADAPTER.validate_json(line)


class LineChunk(NamedTuple):
    """Lines in the recorder's shape, each with its sequence and clock checked against the last (`split_lines`):
    where each starts, its clock, and its body's number (bodies are numbered from 0 in order of first sight);
    `new`: the first line of each body first seen here (its index in the chunk), in their numbers' order, and
    `new_bodies` their bodies as one JSON array of objects (decoded in one call: `LogLines.fold_steps`);
    `fresh`: the numbers start over at this chunk (the splitter forgot its bodies: `BODY_CACHE_LIMIT`); `end`:
    where the next line starts (after the last chunk: where the recorder's shape ends, the rest being the
    strict reader's)."""

    starts: array
    elapsed: array
    numbers: array
    new: array
    new_bodies: bytes
    fresh: bool
    end: int


# What reads a log's bytes into chunks: `split_lines` itself, or one that runs it in another process.
Splitter = Callable[[bytes], Generator[LineChunk, None, None]]


def split_lines(data: bytes) -> Generator[LineChunk, None, None]:
    """`data`'s recorder-shaped lines from its start, in chunks of `CHUNK_LINES`, up to the first line that is
    not in that shape, skips a sequence or goes back in time (the last chunk may be empty)."""
    numbers: dict[bytes, int] = {}
    match, expected, last_ms, offset = RECORDER_LINE.match, 0, -(2**63), 0
    new, new_bodies = array("I"), list[bytes]()
    starts, elapsed, bodies, fresh = array("Q"), array("q"), array("I"), False

    def chunk() -> LineChunk:
        objects = b"[{%s]" % b",{".join(new_bodies) if new_bodies else b"[]"  # a body is its object but the `{`
        return LineChunk(starts, elapsed, bodies, new, objects, fresh, offset)

    for raw in io.BytesIO(data):
        parts = match(raw)
        if parts is None:
            break
        sequence, elapsed_ms, body = parts.groups()
        sequence, elapsed_ms = int(sequence), int(elapsed_ms)
        if sequence != expected or elapsed_ms < last_ms:
            break
        number = numbers.get(body)
        if number is None:
            if len(numbers) >= BODY_CACHE_LIMIT:  # a log of ever new bodies: the numbers start over
                yield chunk()
                starts, elapsed, bodies, new, new_bodies, fresh = (
                    array("Q"),
                    array("q"),
                    array("I"),
                    array("I"),
                    [],
                    True,
                )
                numbers.clear()
            number = numbers[body] = len(numbers)
            new.append(len(bodies))
            new_bodies.append(body)
        starts.append(offset)
        elapsed.append(elapsed_ms)
        bodies.append(number)
        expected, last_ms, offset = expected + 1, elapsed_ms, offset + len(raw)
        if expected % CHUNK_LINES == 0:
            yield chunk()
            starts, elapsed, bodies, new, new_bodies, fresh = array("Q"), array("q"), array("I"), array("I"), [], False
    yield chunk()


class LogLines(Sequence[EventBase]):
    """The events of a log: its bytes and where each event's line starts; `lines[i]` decodes event i."""

    def __init__(self, data: bytes | mmap.mmap = b"") -> None:
        self.data = data  # the log's bytes, or the log file mapped (a log read by another process: `take_batches`)
        self.starts = array("Q")
        self.decoder = BodyDecoder()
        self._recent: dict[int, EventBase] = {}

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> EventBase: ...
    @overload
    def __getitem__(self, index: slice) -> list[EventBase]: ...
    def __getitem__(self, index: int | slice) -> EventBase | list[EventBase]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = index + len(self) if index < 0 else index
        event = self._recent.get(index)
        if event is None:
            if len(self._recent) >= RECENT_LIMIT:
                self._recent.clear()
            event = self._recent[index] = decode_line(self.line(index))
        return event

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same events (a list read another way, another log)."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(mine == theirs for mine, theirs in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # unhashable like a list, as it compares equal to one

    def line(self, index: int) -> bytes:
        start = self.starts[index]
        end = self.data.find(b"\n", start)
        return self.data[start : end if end >= 0 else len(self.data)]

    def fold_steps(self, chunk: LineChunk, first: int) -> list[FoldStep | None]:
        """What the fold folds for each body first seen in `chunk` (whose lines are events `first` on), and how
        (`BodyDecoder.fold_step`), in their numbers' order: all of them decoded by msgspec in one call, which is
        most of the load of a log of ever new bodies; line by line when it refuses one (which may be the strict
        reader's to refuse)."""
        steps = decode_all_for_fold(chunk.new_bodies)
        if steps is not None:
            return steps
        steps = []
        for at in chunk.new:
            end = chunk.starts[at + 1] if at + 1 < len(chunk.starts) else chunk.end
            line = self.data[chunk.starts[at] : end]
            parts = RECORDER_LINE.match(line)
            assert parts is not None  # the splitter took it
            steps.append(self.decoder.fold_step(line, parts.start(3), first + at, chunk.elapsed[at]))
        return steps

    def split(self, index: int) -> Split:
        """Event `index` taken apart: what a fold needs, without stamping a copy."""
        line = self.line(index)
        split = self.decoder.split(line)
        if split is None:
            event = decode_line(line)
            return event, event.sequence, event.elapsed_ms
        return split
