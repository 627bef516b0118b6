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
from dataclasses import dataclass, field

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.event_text import actor, summary
from aoe_tui.domain.events import EventBase
from aoe_tui.store.markers import find_stalls


@dataclass(frozen=True)
class EventFilter:
    kind: str | None = None
    territory: str | None = None
    agent: str | None = None

    def accepts(self, event: EventBase) -> bool:
        return (
            (self.kind is None or event.kind == self.kind)
            and (self.territory is None or event.territory_id == self.territory)
            and (self.agent is None or event.agent_id == self.agent)
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


class EventRows:
    """The rows for one filter over a whole timeline; `visible(position)` is the prefix begun by then."""

    def __init__(self, events: list[EventBase], event_filter: EventFilter) -> None:
        self.events = events
        self.event_filter = event_filter
        self.rows = self._build()
        self._firsts = [row.first_position for row in self.rows]

    def _build(self) -> list[EventRow]:
        stall_of: dict[int, str] = {}
        failures: set[int] = set()
        for stall in find_stalls(self.events):
            failures.update(stall.positions)
            for position in stall.positions + stall.evaluation_positions:
                stall_of[position] = f"stall-{stall.first_position}"
        rows: list[EventRow] = []
        stall_rows: dict[str, EventRow] = {}
        for position, event in enumerate(self.events):
            if not self.event_filter.accepts(event):
                continue
            stall_key = stall_of.get(position)
            if stall_key is None:
                rows.append(EventRow(f"event-{position}", [position]))
            else:
                if stall_key not in stall_rows:
                    stall_rows[stall_key] = EventRow(stall_key)
                    rows.append(stall_rows[stall_key])
                stall_rows[stall_key].positions.append(position)
                if position in failures:
                    stall_rows[stall_key].failure_positions.append(position)
        return rows

    def visible(self, position: int) -> list[EventRow]:
        return self.rows[: bisect.bisect_right(self._firsts, position)]

    def cells(self, row: EventRow, position: int) -> tuple[str, str, str, str]:
        return row_cells(row, self.events, position)


def row_cells(row: EventRow, events: list[EventBase], position: int) -> tuple[str, str, str, str]:
    first = events[row.failure_positions[0] if row.failure_positions else row.first_position]
    count = row.count_at(position)
    if not row.is_stall or count <= 1:
        shown = events[row.first_position] if count == 0 else first
        return format_clock(shown.elapsed_ms), shown.kind, actor(shown), summary(shown)
    last = events[row.failure_positions[count - 1]]
    span = format_clock(first.elapsed_ms) + (f"–{format_clock(last.elapsed_ms)}" if count > 1 else "")
    return span, f"stall ×{count}", actor(first), summary(first)
