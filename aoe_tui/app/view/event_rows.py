"""Rows of the event list: one per event, except repeated identical failures.

A stuck agent produces hundreds of identical `milestone_failed` events; the
list shows them as one stall row whose count and span grow as the cursor
passes them. Rows are ordered by their first event, so the rows visible at a
cursor are always a prefix of the full list, which is what lets the table
add and remove rows at its end instead of rebuilding. What a row says of its
event (actor, summary) comes from `domain.event_text`, as the headless lines do.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import overload

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.event_text import actor, summary
from aoe_tui.domain.events import EventBase
from aoe_tui.store.timeline import EventColumns, TimelineIndex


@dataclass(frozen=True)
class EventFilter:
    kind: str | None = None
    territory: str | None = None
    agent: str | None = None

    def accepted(self, columns: EventColumns) -> Callable[[int], bool] | None:
        """Whether the event at a position passes, read from the columns (None: every event passes)."""
        if self.kind is None and self.territory is None and self.agent is None:
            return None
        return lambda position: (
            (self.kind is None or columns.kind(position) == self.kind)
            and (self.territory is None or columns.territory(position) == self.territory)
            and (self.agent is None or columns.agent(position) == self.agent)
        )

    def describe(self) -> str:
        parts = [
            f"{name}={value}"
            for name, value in (("kind", self.kind), ("territory", self.territory), ("agent", self.agent))
            if value
        ]
        return " ".join(parts) or "all events"


@dataclass
class EventRow:
    """One table row; a stall row also absorbs its attempts' evaluation_started events."""

    key: str
    positions: list[int] = field(default_factory=list)
    failure_positions: list[int] = field(default_factory=list)

    @property
    def first_position(self) -> int:
        return self.positions[0]

    @property
    def is_stall(self) -> bool:
        return self.key.startswith("stall-")

    def count_at(self, position: int) -> int:
        """Failures of a stall row (events of a plain row) at or before `position`."""
        return bisect.bisect_right(self.failure_positions or self.positions, position)


class EventRows(Sequence[EventRow]):
    """The rows for one filter over a whole timeline; the rows visible at a cursor are a prefix.

    A million-event match has hundreds of thousands of rows, so rows are kept as two columns (the first
    position of each row, and its stall or -1) and an `EventRow` is made when one is shown."""

    def __init__(self, timeline: TimelineIndex, event_filter: EventFilter) -> None:
        self.events = timeline.events
        self.event_filter = event_filter
        self._stalls = timeline.markers.stalls()
        self._accepted = event_filter.accepted(timeline.columns)
        self._firsts, self._row_stall = array("q"), array("i")
        # The events the columns know: all of them, but while a long log loads only its start's (the rest's
        # rows come with the whole match).
        stall_at = array("i", [-1]) * len(timeline.columns.kinds)
        for number, stall in enumerate(self._stalls):
            for position in stall.positions + stall.evaluation_positions:
                stall_at[position] = number
        begun: set[int] = set()
        accepted = self._accepted
        for position, number in enumerate(stall_at):
            if accepted is not None and not accepted(position):
                continue
            if number >= 0:
                if number in begun:
                    continue
                begun.add(number)
            self._firsts.append(position)
            self._row_stall.append(number)

    def __len__(self) -> int:
        return len(self._firsts)

    @overload
    def __getitem__(self, index: int) -> EventRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[EventRow]: ...
    def __getitem__(self, index: int | slice) -> EventRow | list[EventRow]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        first, number = self._firsts[index], self._row_stall[index]
        if number < 0:
            return EventRow(f"event-{first}", [first])
        stall = self._stalls[number]
        keep = self._accepted or (lambda position: True)
        return EventRow(
            f"stall-{stall.first_position}",
            sorted(p for p in stall.positions + stall.evaluation_positions if keep(p)),
            [p for p in stall.positions if keep(p)],
        )

    def visible_count(self, position: int) -> int:
        """How many rows have begun by `position`."""
        return bisect.bisect_right(self._firsts, position)

    def visible(self, position: int) -> list[EventRow]:
        return self[: self.visible_count(position)]

    def cells(self, row: EventRow, position: int) -> tuple[str, str, str, str]:
        return row_cells(row, self.events, position)


def row_cells(row: EventRow, events: Sequence[EventBase], position: int) -> tuple[str, str, str, str]:
    first = events[row.failure_positions[0] if row.failure_positions else row.first_position]
    count = row.count_at(position)
    if not row.is_stall or count <= 1:
        shown = events[row.first_position] if count == 0 else first
        return format_clock(shown.elapsed_ms), shown.kind, actor(shown), summary(shown)
    last = events[row.failure_positions[count - 1]]
    span = format_clock(first.elapsed_ms) + (f"–{format_clock(last.elapsed_ms)}" if count > 1 else "")
    return span, f"stall ×{count}", actor(first), summary(first)
