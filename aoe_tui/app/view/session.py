"""Everything the screens derive from one match, computed once and grown by live events.

The match screen, the report screen and the command palette all need the
timeline, the markers, the milestone order, the points race and each agent's tool calls;
keeping them here means they agree and nothing is recomputed per widget.
"""

from __future__ import annotations

from aoe_tui.analysis.match_analyses import match_analyses
from aoe_tui.domain.analysis import Analysis
from aoe_tui.domain.events import EventBase
from aoe_tui.store.markers import Marker
from aoe_tui.store.saved_match import SavedMatch
from aoe_tui.store.timeline import TimelineIndex
from aoe_tui.app.view.event_rows import EventFilter, EventRows
from aoe_tui.app.view.health_history import HealthHistory
from aoe_tui.app.view.points_race import PointsRace
from aoe_tui.app.view.tool_calls import ToolCallIndex, agent_tool_calls


class MatchSession:
    def __init__(self, match: SavedMatch) -> None:
        self.match = match
        # A world-only match has no events: its final state is the timeline's starting point.
        self.timeline = match.timeline or TimelineIndex(
            match.events, initial=None if match.has_timeline else match.world
        )
        self.markers: list[Marker] = self.timeline.markers.markers()
        self.race = PointsRace.of(self.timeline, self.markers)
        self.health = HealthHistory.of(self.timeline)  # a conquest's health over time (empty in a build race)
        self.rows = EventRows(self.timeline, EventFilter())  # the event list's first rows, built with the rest
        found = match_analyses(match)
        self.analyses: dict[str, Analysis] = {agent: analysis for agent, (analysis, _) in found.items()}
        self.start_ms = {agent: self._start_ms(agent) for agent in match.agents}
        self.tool_calls = {
            agent: ToolCallIndex(
                agent_tool_calls(match, agent, self.analyses[agent], self.start_ms[agent])
                if agent in self.analyses
                else []
            )
            for agent in match.agents
        }

    def _start_ms(self, agent_id: str) -> int:
        """When the agent started on the match clock (0 when no event says)."""
        started = self.timeline.columns.first("agent_started", agent_id)
        return self.timeline.elapsed_at(started) if started is not None else 0

    @property
    def has_timeline(self) -> bool:
        return len(self.timeline) > 0

    @property
    def is_conquest(self) -> bool:
        manifest = self.match.manifest
        return (manifest is not None and manifest.arena.mode == "conquest") or self.health.is_conquest

    def conquest_duration_ms(self) -> int:
        """The match's length for the health strips: the manifest's clock, else the log's."""
        manifest = self.match.manifest
        return manifest.rules.duration_seconds * 1000 if manifest is not None else self.timeline.duration_ms

    def territory_ids(self) -> list[str]:
        """Manifest order when there is one, else registration order: panes never jump around."""
        ids = [t.id for t in self.match.manifest.territories] if self.match.manifest else []
        return ids + [t for t in self.timeline.head.territories if t not in ids]

    def milestone_ids(self) -> list[str]:
        manifest = self.match.manifest
        ids = [m.id for m in manifest.build.milestones] if manifest and manifest.build else []
        for territory in self.timeline.head.territories.values():
            ids += [m for m in territory.milestones if m not in ids]
        return ids

    def agent_for(self, territory_id: str) -> str | None:
        territory = self.timeline.head.territories.get(territory_id)
        if territory is not None and territory.agent:
            return territory.agent
        return next((a.agent_id for a in self.match.agents.values() if a.territory == territory_id), None)

    def extend(self, events: list[EventBase]) -> None:
        """Live events; markers are found once per batch, not once per event."""
        for event in events:
            self.timeline.append(event)
            self.race.add(event, event.elapsed_ms)
            self.health.add(event, event.elapsed_ms)
            if event.kind == "agent_started" and event.agent_id:
                self.start_ms[event.agent_id] = event.elapsed_ms
        self.markers = self.timeline.markers.markers()
