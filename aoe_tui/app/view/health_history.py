"""A conquest's territories over the match clock: health state and eliminations, for the panes.

Folded once per match load from the conquest's `territory_state_changed` events (a build race has none, so
it costs nothing there; a pane's resources and last probe are the world's at the cursor) and grown by live
events, as the points race is; a frame only reads it. `strip` draws a territory's state over the match as
one glyph per slice of the clock up to the cursor, so a degradation, a recovery and an elimination show
where they happened, in replay and live alike.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from aoe_tui.domain.events import EventBase
from aoe_tui.store.timeline import TimelineIndex

KINDS = ("territory_state_changed",)
GLYPHS = {"healthy": "█", "recovering": "▅", "degraded": "▂", "eliminated": "✗", "provisioning": "·"}


class HealthHistory:
    def __init__(self) -> None:
        self.states: dict[str, list[tuple[int, str]]] = {}
        self.eliminated_at: dict[str, int] = {}

    @classmethod
    def of(cls, timeline: TimelineIndex) -> HealthHistory:
        history = cls()
        positions: Iterable[int] = sorted(p for kind in KINDS for p in timeline.columns.positions(kind))
        for position in positions:
            history.add(timeline.events[position], timeline.elapsed_at(position))
        return history

    @property
    def is_conquest(self) -> bool:
        return bool(self.states)

    def add(self, event: EventBase, elapsed_ms: int) -> None:
        territory = event.territory_id
        if territory is None or event.kind != "territory_state_changed":
            return
        to = str(getattr(event, "to", ""))
        self.states.setdefault(territory, []).append((elapsed_ms, to))
        if to == "eliminated":
            self.eliminated_at.setdefault(territory, elapsed_ms)

    def state_at(self, territory: str, elapsed_ms: int) -> str:
        return _at(self.states.get(territory, []), elapsed_ms, "provisioning")

    def strip(self, territory: str, until_ms: int, duration_ms: int, width: int) -> str:
        """`width` glyphs over [0, duration]: the state at the end of each slice up to `until_ms`, blank after."""
        if width <= 0 or duration_ms <= 0:
            return ""
        glyphs = []
        for index in range(width):
            start, end = index * duration_ms // width, (index + 1) * duration_ms // width
            if index > 0 and start >= until_ms:
                glyphs.append(" ")
                continue
            glyphs.append(GLYPHS.get(self.state_at(territory, min(end, until_ms)), "?"))
        return "".join(glyphs).rstrip()


def _at(steps: list, elapsed_ms: int, default):
    index = bisect.bisect_right(steps, elapsed_ms, key=lambda step: step[0]) - 1
    return steps[index][1] if index >= 0 else default
