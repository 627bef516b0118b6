"""Each territory's points over the match clock: the data of the race chart.

Points change only when a milestone passes or is revoked, so the race is folded from those events alone
(the markers already list where they are) through the reducer itself: the world's own rules (a second pass
of a passed milestone scores nothing, a revoke takes its points back), a few dozen events instead of a
million. It is built once per match load and grown by live events; a frame only reads it.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from aoe_tui.domain.events import EventBase
from aoe_tui.domain.reducer import apply_at
from aoe_tui.domain.world import World
from aoe_tui.store.markers import MARKER_KINDS, Marker
from aoe_tui.store.timeline import TimelineIndex, copy_world

POINT_KINDS = frozenset({"milestone_passed", "milestone_revoked"})
POINT_MARKERS = frozenset(MARKER_KINDS[kind] for kind in POINT_KINDS)


class PointsRace:
    """Per territory, its points as steps: (match time, points from then on), the first at time 0."""

    def __init__(self, start: World) -> None:
        self._world = copy_world(start)  # the fold's own world: only milestone events ever reach it
        self.steps: dict[str, list[tuple[int, int]]] = {
            territory_id: [(0, territory.milestone_points)] for territory_id, territory in start.territories.items()
        }
        self.version = 0  # grows with every step added, so a chart knows when to draw again

    @classmethod
    def of(cls, timeline: TimelineIndex, markers: Iterable[Marker]) -> PointsRace:
        """The race of a whole timeline, from its starting world and its pass and revoke markers."""
        race = cls(timeline.state_at(-1))
        for marker in markers:
            if marker.kind in POINT_MARKERS:
                race.add(timeline.events[marker.position], marker.elapsed_ms)
        return race

    def add(self, event: EventBase, elapsed_ms: int) -> None:
        """One event at `elapsed_ms`; only passes and revokes change the race."""
        if event.kind not in POINT_KINDS:
            return
        apply_at(self._world, event, event.sequence, elapsed_ms)
        territory_id = event.territory_id or ""
        territory = self._world.territories.get(territory_id)
        if territory is None:
            return  # a line of the kind that did not validate as one: the reducer skipped it too
        steps = self.steps.setdefault(territory_id, [(0, 0)])
        if steps[-1][1] != territory.milestone_points:
            steps.append((elapsed_ms, territory.milestone_points))
            self.version += 1

    def points_at(self, territory_id: str, elapsed_ms: int) -> int:
        """The territory's points at `elapsed_ms` (a step counts from its own moment on)."""
        steps = self.steps.get(territory_id, [(0, 0)])
        index = bisect.bisect_right(steps, elapsed_ms, key=lambda step: step[0]) - 1
        return steps[max(index, 0)][1]

    @property
    def top(self) -> int:
        """The most points any territory ever had (a revoke may have taken some back since)."""
        return max((points for steps in self.steps.values() for _, points in steps), default=0)
