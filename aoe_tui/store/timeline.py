"""The timeline index: fast "world at this moment" for scrubbing.

Scrubbing a long log must not fold from event zero on every key press, so the
index keeps a full world every `keyframe_every` events and folds forward from
the nearest one. It also keeps per-kind, per-territory and per-agent
positions so the event list and the markers can filter without scanning.
It grows with `append`, which is how a live match feeds the same index a
replay uses.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable

from aoe_tui.domain.events import EventBase
from aoe_tui.domain.reducer import apply_event, reduce
from aoe_tui.domain.world import World

DEFAULT_KEYFRAME_EVERY = 128


class TimelineIndex:
    def __init__(self, events: Iterable[EventBase] = (), keyframe_every: int = DEFAULT_KEYFRAME_EVERY,
                 initial: World | None = None) -> None:
        self.keyframe_every = keyframe_every
        self.events: list[EventBase] = []
        self._elapsed: list[int] = []
        self._keyframes: list[World] = [initial.model_copy(deep=True) if initial else World()]
        self._head = self._keyframes[0].model_copy(deep=True)
        self._by_kind: dict[str, list[int]] = defaultdict(list)
        self._by_territory: dict[str, list[int]] = defaultdict(list)
        self._by_agent: dict[str, list[int]] = defaultdict(list)
        for event in events:
            self.append(event)

    def __len__(self) -> int:
        return len(self.events)

    @property
    def head(self) -> World:
        """The world after the last event (do not mutate)."""
        return self._head

    @property
    def duration_ms(self) -> int:
        return self._elapsed[-1] if self._elapsed else 0

    def append(self, event: EventBase) -> None:
        position = len(self.events)
        self.events.append(event)
        self._elapsed.append(event.elapsed_ms)
        apply_event(self._head, event)
        self._by_kind[event.kind].append(position)
        if event.territory_id:
            self._by_territory[event.territory_id].append(position)
        if event.agent_id:
            self._by_agent[event.agent_id].append(position)
        if (position + 1) % self.keyframe_every == 0:
            self._keyframes.append(self._head.model_copy(deep=True))

    def state_at(self, position: int) -> World:
        """World after the event at `position` (-1: before any event)."""
        if position >= len(self.events) - 1:
            return self._head.model_copy(deep=True)
        applied = position + 1
        keyframe = min(applied // self.keyframe_every, len(self._keyframes) - 1)
        start = keyframe * self.keyframe_every
        return reduce(self.events[start:applied], start=self._keyframes[keyframe])

    def position_at_time(self, elapsed_ms: int) -> int:
        """Last event at or before `elapsed_ms` (-1 if none)."""
        return bisect.bisect_right(self._elapsed, elapsed_ms) - 1

    def state_at_time(self, elapsed_ms: int) -> World:
        return self.state_at(self.position_at_time(elapsed_ms))

    def query(self, kinds: Iterable[str] | None = None, territory: str | None = None, agent: str | None = None,
              start_ms: int | None = None, end_ms: int | None = None) -> list[EventBase]:
        candidates: set[int] | None = None
        for selected in (
            sorted({p for k in kinds for p in self._by_kind.get(k, [])}) if kinds is not None else None,
            self._by_territory.get(territory, []) if territory is not None else None,
            self._by_agent.get(agent, []) if agent is not None else None,
        ):
            if selected is not None:
                candidates = set(selected) if candidates is None else candidates & set(selected)
        low = bisect.bisect_left(self._elapsed, start_ms) if start_ms is not None else 0
        high = bisect.bisect_right(self._elapsed, end_ms) if end_ms is not None else len(self.events)
        positions = range(low, high) if candidates is None else sorted(p for p in candidates if low <= p < high)
        return [self.events[p] for p in positions]
