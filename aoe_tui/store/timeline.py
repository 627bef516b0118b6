"""The timeline index: fast "world at this moment" for scrubbing.

Scrubbing a long log must not fold from event zero on every key press, so the
index keeps a full world every `keyframe_every` events and folds forward from
the nearest one. It grows with `append`, which is how a live match feeds the
same index a replay uses.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from aoe_tui.domain.events import EventBase
from aoe_tui.domain.reducer import apply_event, reduce
from aoe_tui.domain.world import World

DEFAULT_KEYFRAME_EVERY = 128


class TimelineIndex:
    def __init__(
        self,
        events: Iterable[EventBase] = (),
        keyframe_every: int = DEFAULT_KEYFRAME_EVERY,
        initial: World | None = None,
    ) -> None:
        self.keyframe_every = keyframe_every
        self.events: list[EventBase] = []
        self._elapsed: list[int] = []
        self._keyframes: list[World] = [initial.model_copy(deep=True) if initial else World()]
        self._head = self._keyframes[0].model_copy(deep=True)
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
