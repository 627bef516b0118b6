"""The match header: which match, its state, the clock at the cursor, and who leads."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from aoe_tui.app.widgets.repaint import repaint

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.cup_rules import cup_context
from aoe_tui.domain.world import World

SEPARATOR = " · "
MATCH_STATE_STYLES = {
    "running": "$primary",
    "finished": "$success",
    "aborted": "$error",
    "void": "$warning",
    "paused": "$accent",
}


class MatchHeader(Static):
    """One line; the badge says REPLAY or LIVE so a viewer never mistakes one for the other.

    The screen decides the badge (a live match scrubbed back says how many
    events arrived since), so the header only draws it. Parts are joined by
    " · ", so no view of the line (a narrow crop, a copied screen) glues a
    clock to the word after it.
    """

    def __init__(self, arena: str, name: str, has_timeline: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.arena, self.match_name, self.has_timeline = arena, name, has_timeline

    def show(self, world: World, elapsed_ms: int, duration_ms: int, badge: tuple[str, str]) -> None:
        standings = world.standings()
        leader = standings[0] if standings and world.territories[standings[0]].milestone_points else None
        state = "paused" if world.paused and world.match_state == "running" else world.match_state
        parts: list[Content | tuple[str, str] | str] = [
            badge,
            " ",
            (self.arena, "bold"),
            SEPARATOR,
            *((("cup ", "bold $accent"),) if cup_context(self.match_name) is not None else ()),  # a cup's heat
            self.match_name,
            SEPARATOR,
            (state, MATCH_STATE_STYLES.get(state, "")),
            SEPARATOR,
            (f"{format_clock(elapsed_ms)} / {format_clock(duration_ms)}", "bold"),
        ]
        if not self.has_timeline:
            parts += [SEPARATOR, ("final state only: no timeline", "$warning")]
        if world.winner:
            parts += [SEPARATOR, "winner ", (world.winner, "bold $success")]
        elif leader:
            parts += [SEPARATOR, "leader ", (leader, "bold"), f" {world.territories[leader].milestone_points} pts"]
        repaint(self, Content.assemble(*parts))
