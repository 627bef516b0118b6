"""The scoreboard: one line per territory, best first.

On a narrow terminal the territory panes stack and only one fits, so "who
is ahead" would need scrolling. The scoreboard answers it in a few lines:
rank, territory, agent, state, a glyph per milestone, points and durable
time, at the cursor's moment.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from aoe_tui.app.widgets.repaint import repaint

from aoe_tui.app.view import presentation as show
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.world import World


class Scoreboard(Static):
    """Drawn only while displayed (the .tcss shows it on a narrow screen alone): a wide screen's every frame
    would otherwise draw a dozen lines no one sees."""

    def __init__(self, territory_ids: list[str], milestone_ids: list[str], **kwargs) -> None:
        super().__init__(**kwargs)
        self.territory_ids = territory_ids
        self.milestone_ids = milestone_ids
        self._world: World | None = None

    def show(self, world: World) -> None:
        self._world = world
        if self.display:
            self._draw(world)

    def on_show(self) -> None:
        if self._world is not None:
            self._draw(self._world)

    def _draw(self, world: World) -> None:
        standings = [t for t in world.standings() if t in self.territory_ids]
        order = standings + [t for t in self.territory_ids if t not in standings]
        name_width = max((len(t) for t in order), default=0)
        agent_width = max((len(world.territories[t].agent or "") for t in order if t in world.territories), default=0)
        lines = []
        for rank, territory_id in enumerate(order, 1):
            territory = world.territories.get(territory_id)
            state = territory.competitor_state if territory else "preparing"
            points = territory.milestone_points if territory else 0
            statuses = show.milestone_statuses(world, territory_id, self.milestone_ids)
            durable = territory.durable_at_ms if territory else None
            lines.append(
                Content.assemble(
                    (f"#{rank} " if points else "   ", "bold"),
                    f"{territory_id:<{name_width}} ",
                    (f"{(territory.agent if territory else '') or '':<{agent_width}} ", "$text-muted"),
                    *[show.milestone_glyph(statuses[m]) for m in self.milestone_ids],
                    f" {points:>3} pts ",
                    show.competitor_state(state),
                    f" at {format_clock(durable)}" if durable is not None else "",
                )
            )
        repaint(self, Content("\n").join(lines))
