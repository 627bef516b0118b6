"""The timeline index: fast "world at this moment" for scrubbing, and what views ask of every event.

Scrubbing a long log must not fold from event zero on every key press, so the index keeps a world every
`keyframe_every` events and folds forward from the nearest one. Keyframes are kept as JSON (a world of twelve
territories is 15 kB) within a byte budget: past it every other keyframe is dropped and the spacing doubles,
so a million events cost the same memory as a few thousand and a seek folds at most a few thousand events.

Beside the keyframes the index keeps, per event, its clock and its kind, territory and agent as small codes
(`EventColumns`) and the markers, so the event list, its filters and the scrubber never decode a million
events; they are worked out on first use (the app asks off its UI thread; `aoe replay --json` never does).
It grows with `append`, which is how a live match feeds the same index a replay uses; a replay reads its
whole log in one pass with `from_log` (validate, fold, keyframes) and keeps the events as lines
(`LogLines`).
"""

from __future__ import annotations

import bisect
import gc
import mmap
from array import array
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from aoe_tui.domain.events import EventBase
from aoe_tui.domain.reducer import apply_at
from aoe_tui.domain.world import World
from aoe_tui.store.event_log import ScanPoint, scan_log
from aoe_tui.store.fold_events import FoldStep
from aoe_tui.store.log_lines import LogLines, Split, Splitter, split_lines
from aoe_tui.store.markers import MarkerFinder

# A keyframe is a world dumped as JSON (about 50 us for twelve territories), so one every 128 events was a
# sixth of a long load (1.12x the bare json.loads loop at 10^5 events, 0.85x with 512); a seek then folds
# at most 511 events from its keyframe, about 1.5 ms, and a step or a play tick folds from the last state.
DEFAULT_KEYFRAME_EVERY = 512
KEYFRAME_BUDGET_BYTES = 24 * 1024 * 1024
PROGRESS_EVERY = 20_000  # events between two progress reports of `from_log` (a report may stop the read)


def copy_world(world: World) -> World:
    """A deep copy through JSON: four times faster than `model_copy(deep=True)` for a world."""
    return World.model_validate_json(world.model_dump_json())


FACTS_MEMO_LIMIT = 20_000  # events whose facts are remembered; most of a long log is a few thousand events


class EventColumns:
    """Per event: its kind, territory and agent as small codes into name tables (0: none).

    A log repeats a few thousand distinct events (`LogLines` shares one object per distinct body), so the
    codes of an event object are worked out once: asking a pydantic event for a field it lacks is slow."""

    def __init__(self) -> None:
        self.kinds, self.territories, self.agents = array("B"), array("H"), array("H")
        self.kind_names: list[str] = []
        self.territory_names: list[str | None] = [None]
        self.agent_names: list[str | None] = [None]
        self._codes: tuple[dict[str | None, int], ...] = ({}, {None: 0}, {None: 0})
        self._memo: dict[int, tuple[EventBase, int, int, int]] = {}  # id -> (the event, kept alive; codes)

    def _code(self, which: int, table: list, name: str | None) -> int:
        code = self._codes[which].get(name)
        if code is None:
            code = self._codes[which][name] = len(table)
            table.append(name)
        return code

    def append(self, event: EventBase) -> str | None:
        """Add the event's codes; returns its territory (what the marker finder asks next)."""
        memo = self._memo.get(id(event))
        if memo is None:
            if len(self._memo) >= FACTS_MEMO_LIMIT:
                self._memo.clear()
            memo = self._memo[id(event)] = (
                event,
                self._code(0, self.kind_names, event.kind),
                self._code(1, self.territory_names, event.territory_id),
                self._code(2, self.agent_names, event.agent_id),
            )
        _, kind, territory, agent = memo
        self.kinds.append(kind)
        self.territories.append(territory)
        self.agents.append(agent)
        return self.territory_names[territory]

    def __getstate__(self) -> dict:
        """Without the memo (its events), which only speeds up `append`."""
        return {**self.__dict__, "_memo": {}}

    def kind(self, position: int) -> str:
        return self.kind_names[self.kinds[position]]

    def territory(self, position: int) -> str | None:
        return self.territory_names[self.territories[position]]

    def agent(self, position: int) -> str | None:
        return self.agent_names[self.agents[position]]

    def positions(self, kind: str) -> list[int]:
        """Positions of the events of `kind`, in order."""
        code = self._codes[0].get(kind)
        return [] if code is None else [p for p, other in enumerate(self.kinds) if other == code]

    def first(self, kind: str, agent: str) -> int | None:
        """Position of the first event of `kind` by `agent`."""
        agent_code = self._codes[2].get(agent)
        return next((p for p in self.positions(kind) if self.agents[p] == agent_code), None)


class TimelineBatch(NamedTuple):
    """What a reader of a log (another process) hands on of what it read since its last batch: the lines' starts
    and clocks from position `first`, the keyframes kept since (at their spacing `keyframe_every`), the world
    after the last event, and how far into the log's bytes it has read."""

    first: int
    starts: bytes
    elapsed: bytes
    keyframe_positions: list[int]
    keyframes: list[bytes]
    keyframe_every: int
    head: bytes
    read_bytes: int


class TimelineIndex:
    def __init__(
        self,
        events: Iterable[EventBase] = (),
        keyframe_every: int = DEFAULT_KEYFRAME_EVERY,
        initial: World | None = None,
        budget_bytes: int = KEYFRAME_BUDGET_BYTES,
    ) -> None:
        self.keyframe_every = keyframe_every
        self.budget_bytes = budget_bytes
        self.events: Sequence[EventBase] = []
        self._columns: EventColumns | None = None
        self._markers: MarkerFinder | None = None
        self._elapsed = array("q")
        self._head = copy_world(initial) if initial else World()
        self._keyframe_positions = [0]
        self._keyframes = [self._head.model_dump_json().encode()]
        self._keyframe_bytes = len(self._keyframes[0])
        self._recent: tuple[int, bytes] | None = None  # the last state asked for: (events applied, its JSON)
        for event in events:
            self.append(event)

    @classmethod
    def from_log(
        cls,
        data: bytes,
        source: str,
        progress: Callable[[float], None] | None = None,
        grown: Callable[[TimelineIndex], None] | None = None,
        *,
        keyframe_every: int = DEFAULT_KEYFRAME_EVERY,
        budget_bytes: int = KEYFRAME_BUDGET_BYTES,
        split: Splitter = split_lines,
    ) -> TimelineIndex:
        """The index of a whole log's bytes, read in one pass; `progress` hears the fraction read, and `grown`
        the index itself as it grows (after each chunk of lines that passed a multiple of `PROGRESS_EVERY`
        events; not at the end). `split` takes the lines apart (`split_lines`, or the same in another
        process)."""
        index = cls(keyframe_every=keyframe_every, budget_bytes=budget_bytes)
        lines = LogLines(data)
        index.events = lines
        head, starts, elapsed = index._head, lines.starts, index._elapsed
        # The splitter's chunks are folded here with `apply_at` inlined, each body's handler found once (a
        # call and a look-up per event were a tenth of the fold), the chunk's starts and clocks taken whole;
        # from the first line that is not in the recorder's shape, does not validate or breaks a rule,
        # `scan_log` reads the rest (and words any error).
        known: list[FoldStep | None] = []  # by body number: (what is folded, its fold)
        fold_steps = lines.fold_steps
        expected, offset = 0, 0
        every, size = index.keyframe_every, max(len(data), 1)
        # The read makes millions of short-lived objects and keeps almost nothing: the cycle collector
        # would walk the heap again and again for no garbage (reference counting frees all of it).
        collecting = gc.isenabled()
        gc.disable()
        chunks = split(data)
        try:
            for chunk in chunks:
                if chunk.fresh:
                    known.clear()
                first = expected
                known.extend(fold_steps(chunk, first))
                for elapsed_ms, number in zip(chunk.elapsed, chunk.numbers):
                    step = known[number]
                    if step is None:
                        break
                    head.last_sequence, head.elapsed_ms = expected, elapsed_ms
                    event, handler = step
                    handler(head, event)
                    expected += 1
                    if expected % every == 0:
                        index._keep_keyframe(expected)
                        every = index.keyframe_every
                done = expected - first
                whole = done == len(chunk.numbers)
                starts.extend(chunk.starts if whole else chunk.starts[:done])
                elapsed.extend(chunk.elapsed if whole else chunk.elapsed[:done])
                offset = chunk.end if whole else chunk.starts[done]
                if expected // PROGRESS_EVERY != first // PROGRESS_EVERY:
                    if progress is not None:
                        progress(offset / size)
                    if grown is not None:
                        grown(index)
                if not whole:
                    break
            if offset == len(data):
                return index
            last_ms = elapsed[-1] if expected else -(2**63)
            previous = (lines[expected - 1], expected - 1, last_ms) if expected else None
            for at, split_line in scan_log(data, source, lines.decoder, ScanPoint(offset, expected, last_ms, previous)):
                starts.append(at)
                index._add(split_line)
                if progress is not None and len(index) % PROGRESS_EVERY == 0:
                    progress(at / size)
        finally:
            chunks.close()  # another process's split ends with the read
            if collecting:
                gc.enable()
        return index

    def __len__(self) -> int:
        return len(self._elapsed)

    @property
    def head(self) -> World:
        """The world after the last event (do not mutate)."""
        return self._head

    @property
    def duration_ms(self) -> int:
        return self._elapsed[-1] if self._elapsed else 0

    @property
    def columns(self) -> EventColumns:
        """Every event's kind, territory and agent (worked out on first use: a view's need, not a load's)."""
        if self._columns is None:
            self.find_details()
        assert self._columns is not None
        return self._columns

    @property
    def markers(self) -> MarkerFinder:
        """The markers and stalls (worked out on first use, with the columns)."""
        if self._markers is None:
            self.find_details()
        assert self._markers is not None
        return self._markers

    def find_details(self, progress: Callable[[float], None] | None = None) -> None:
        """Work out the columns and markers now (`progress` hears the fraction done, and may stop it)."""
        columns, markers = EventColumns(), MarkerFinder()
        for position in range(len(self)):
            event, _, elapsed_ms = self._split(position)
            markers.add(position, event, elapsed_ms, columns.append(event))
            if progress is not None and position % PROGRESS_EVERY == 0:
                progress(position / len(self))
        self._columns, self._markers = columns, markers

    def batch_since(self, first: int) -> TimelineBatch:
        """The events from position `first` on, and the keyframes after it, as another process takes them
        (`take_batches`); a log read with `from_log`."""
        assert isinstance(self.events, LogLines)
        lines, end = self.events, len(self)
        kept = bisect.bisect_left(self._keyframe_positions, first + 1) if first else 0
        read = lines.starts[end - 1] + len(lines.line(end - 1)) + 1 if end else 0
        return TimelineBatch(
            first,
            lines.starts[first:end].tobytes(),
            self._elapsed[first:end].tobytes(),
            self._keyframe_positions[kept:],
            self._keyframes[kept:],
            self.keyframe_every,
            self._head.model_dump_json().encode(),
            read,
        )

    def take_batches(self, batches: Sequence[TimelineBatch], data: bytes | mmap.mmap | None = None) -> None:
        """Grow by batches another reader of the same log made (`batch_since`), in order; the events they have
        that this index has too (a preview of the log's start) are skipped. `data`: the log's bytes, now or
        later read further than this index's (the lines are read from them). The world after the last event is
        the last batch's (one decode for all)."""
        assert isinstance(self.events, LogLines)
        if not batches:
            return
        lines = self.events
        if data is not None:
            lines.data = data
        for batch in batches:
            self._take_lines(lines, batch)
        self._head = World.model_validate_json(batches[-1].head)

    def _take_lines(self, lines: LogLines, batch: TimelineBatch) -> None:
        skip = len(self) - batch.first
        if skip < 0:
            raise ValueError(f"a batch from event {batch.first} cannot follow {len(self)} events")
        starts, elapsed = array("Q", batch.starts), array("q", batch.elapsed)
        lines.starts.extend(starts[skip:])
        self._elapsed.extend(elapsed[skip:])
        last = self._keyframe_positions[-1]
        for position, frame in zip(batch.keyframe_positions, batch.keyframes):
            if position > last:
                self._keyframe_positions.append(position)
                self._keyframes.append(frame)
                self._keyframe_bytes += len(frame)
        if batch.keyframe_every != self.keyframe_every:  # the reader went over its budget: as it thinned, so here
            self.keyframe_every = batch.keyframe_every
            kept = [i for i, p in enumerate(self._keyframe_positions) if p % self.keyframe_every == 0]
            self._keyframe_positions = [self._keyframe_positions[i] for i in kept]
            self._keyframes = [self._keyframes[i] for i in kept]
            self._keyframe_bytes = sum(map(len, self._keyframes))

    def take_details(self, columns: EventColumns, markers: MarkerFinder) -> None:
        """The columns and markers another reader of the same log worked out (`find_details`)."""
        self._columns, self._markers = columns, markers

    def elapsed_at(self, position: int) -> int:
        return self._elapsed[position]

    def append(self, event: EventBase) -> None:
        """A live event (a replay's log is read by `from_log`)."""
        if not isinstance(self.events, list):
            raise TypeError("the timeline of a saved log does not grow")
        self.events.append(event)
        self._add((event, event.sequence, event.elapsed_ms))

    def _add(self, split: Split) -> None:
        event, sequence, elapsed_ms = split
        position = len(self._elapsed)
        self._elapsed.append(elapsed_ms)
        if self._columns is not None and self._markers is not None:
            self._markers.add(position, event, elapsed_ms, self._columns.append(event))
        apply_at(self._head, event, sequence, elapsed_ms)
        if (position + 1) % self.keyframe_every == 0:
            self._keep_keyframe(position + 1)

    def _keep_keyframe(self, applied: int) -> None:
        frame = self._head.model_dump_json().encode()
        self._keyframe_positions.append(applied)
        self._keyframes.append(frame)
        self._keyframe_bytes += len(frame)
        if self._keyframe_bytes > self.budget_bytes and len(self._keyframes) > 2:
            self.keyframe_every *= 2  # over budget: every other keyframe goes
            kept = [i for i, p in enumerate(self._keyframe_positions) if p % self.keyframe_every == 0]
            self._keyframe_positions = [self._keyframe_positions[i] for i in kept]
            self._keyframes = [self._keyframes[i] for i in kept]
            self._keyframe_bytes = sum(map(len, self._keyframes))

    def _split(self, position: int) -> Split:
        if isinstance(self.events, LogLines):
            return self.events.split(position)
        event = self.events[position]
        return event, event.sequence, event.elapsed_ms

    def state_at(self, position: int) -> World:
        """World after the event at `position` (-1: before any event).

        Folded from the nearest keyframe before it, or from the last state asked for when that is nearer:
        a step or a play tick applies the few events since the last frame, not up to a keyframe's span
        (512 events or more, 13 ms a frame at 10^6)."""
        if position >= len(self) - 1:
            return copy_world(self._head)
        applied = position + 1
        keyframe = bisect.bisect_right(self._keyframe_positions, applied) - 1
        start, frame = self._keyframe_positions[keyframe], self._keyframes[keyframe]
        if self._recent is not None and start <= self._recent[0] <= applied:
            start, frame = self._recent
        world = World.model_validate_json(frame)
        for at in range(start, applied):
            apply_at(world, *self._split(at))
        self._recent = (applied, world.model_dump_json().encode())
        return world

    def position_at_time(self, elapsed_ms: int) -> int:
        """Last event at or before `elapsed_ms` (-1 if none)."""
        return bisect.bisect_right(self._elapsed, elapsed_ms) - 1

    def state_at_time(self, elapsed_ms: int) -> World:
        return self.state_at(self.position_at_time(elapsed_ms))
