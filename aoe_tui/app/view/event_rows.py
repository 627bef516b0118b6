"""Rows of the event list: one per event, except repeated identical failures.

A stuck agent produces hundreds of identical `milestone_failed` events; the
list shows them as one stall row whose count and span grow as the cursor
passes them. Rows are ordered by their first event, so the rows visible at a
cursor are always a prefix of the full list, which is what lets the table
add and remove rows at its end instead of rebuilding.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.events import OPERATOR_KINDS, EventBase
from aoe_tui.store.markers import find_stalls
from aoe_tui.app.view.presentation import first_line


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


def actor(event: EventBase) -> str:
    if event.kind in OPERATOR_KINDS:
        return "operator"
    return event.territory_id or event.agent_id or "referee"


def _arrow(event: EventBase) -> str:
    data = event.to_json()
    reason = f" ({data['reason']})" if data.get("reason") else ""
    return f"{data.get('from')} → {data.get('to')}{reason}"


def _usage(event: EventBase) -> str:
    data = event.to_json()
    tokens = (
        f"{data.get('input_tokens') or 0:,} in / {data.get('output_tokens') or 0:,} out"
        if data.get("input_tokens") is not None or data.get("output_tokens") is not None
        else "tokens n/a"
    )
    cost = f"${data['cost_microusd'] / 1_000_000:.4f}" if data.get("cost_microusd") is not None else "cost n/a"
    return f"+{data.get('resource_units') or 0} units, {tokens}, {cost}"


def summary(event: EventBase) -> str:
    """One line saying what the event means, not its raw fields."""
    data = event.to_json()
    kind = event.kind
    if kind in ("match_state_changed", "competitor_state_changed", "territory_state_changed"):
        return _arrow(event)
    if kind == "milestone_passed":
        return f"{data['milestone']} +{data['points']} pts"
    if kind == "milestone_failed":
        return f"{data['milestone']}: {data.get('category') or 'failed'} — {first_line(data.get('detail'))}"
    if kind in ("milestone_evaluation_started", "milestone_retry_requested", "milestone_paused", "milestone_resumed"):
        return data["milestone"] + (
            "" if data.get("territory") or kind == "milestone_evaluation_started" else " (all territories)"
        )
    if kind == "milestone_revoked":
        return f"{data['milestone']}: {data.get('reason') or 'revoked'}"
    if kind == "usage_charged":
        return _usage(event)
    if kind == "post_match_drain_started":
        return (
            f"{data.get('pending_agents', 0)} agents may still hand in results "
            f"(up to {format_clock(data.get('timeout_ms') or 0)})"
        )
    if kind == "post_match_drain_finished":
        return f"{data.get('captured_agents', 0)} captured, {data.get('terminated_agents', 0)} terminated"
    if kind == "match_paused":
        return data.get("reason") or "match paused"
    if kind == "match_resumed":
        return f"resumed after {format_clock(data.get('paused_ms') or 0)} paused (not counted on the match clock)"
    if kind == "match_finished":
        return f"winner {data.get('winner') or 'none'} ({data.get('reason') or 'no reason given'})"
    if kind == "agent_started":
        return f"model {data.get('model') or 'unavailable'}"
    if kind == "agent_finished":
        outcome = "succeeded" if data.get("success") else "failed"
        return f"{outcome} ({data.get('source') or 'unknown'}): {first_line(data.get('detail'))}"
    if kind in ("agent_interrupted", "territory_eliminated", "infrastructure_failure"):
        return f"{data.get('source') or data.get('component') or ''}: {first_line(data.get('detail'))}"
    if kind in ("agent_outraced", "agent_terminated"):
        return first_line(data.get("reason"))
    envelope = {"schema_version", "sequence", "elapsed_ms", "kind", "territory", "agent"}
    return first_line(", ".join(f"{k}={v}" for k, v in data.items() if k not in envelope))


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
