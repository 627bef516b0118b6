"""Drill-down into one territory: the guest's console, how to get a shell, each milestone's evidence
and last failure, what the agent printed, and its exchanges with its model (the referee's gateway's record).

Everything here is read fresh from the match directory and the live world
every second, so it keeps up with a running match; only the model calls are
kept (a summary of the last ones), their file being read from where the last
refresh stopped.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from aoe_tui.domain.world import World
from aoe_tui.domain.untrusted import first_line
from aoe_tui.app.view import presentation as show
from aoe_tui.app.view.file_tail import tail_lines
from aoe_tui.app.view.model_calls import model_call_lines, model_calls_title
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.model_calls import ModelCallTail

CONSOLE_LINES = 15
AGENT_LINES = 8
EVIDENCE_CHARS = 160
REFRESH_S = 1.0


def _section(title: str, lines: list[Content]) -> Content:
    return Content("\n").join([Content.styled(title, "bold $accent"), *lines])


def _log_lines(path: Path, count: int) -> list[Content]:
    return [Content(line) for line in tail_lines(path, count)] or [Content.styled("(nothing yet)", "$text-muted")]


class TerritoryScreen(Screen[None]):
    BINDINGS = [Binding("escape,q,d", "app.pop_screen", "Back")]

    def __init__(
        self,
        territory_id: str,
        agent_id: str | None,
        milestone_ids: list[str],
        match_dir: Path,
        world: Callable[[], World],
        ssh_command: str,
    ) -> None:
        super().__init__()
        self.territory_id, self.agent_id, self.milestone_ids = territory_id, agent_id, milestone_ids
        self.match_dir, self.world, self.ssh_command = Path(match_dir), world, ssh_command
        # Kept: each refresh reads only the exchanges appended since the last one.
        self.model_calls = ModelCallTail(MatchLayout(self.match_dir).agent(self.agent_id or "").model_calls)

    def compose(self) -> ComposeResult:
        yield Static(id="drill-title")
        with VerticalScroll(id="drill-body"):
            yield Static(id="drill-body-text")
        yield Footer()

    def on_mount(self) -> None:
        self.show()
        self.set_interval(REFRESH_S, self.show)

    def show(self) -> None:
        world = self.world()
        territory = world.territories.get(self.territory_id)
        state = territory.competitor_state if territory else "preparing"
        self.query_one("#drill-title", Static).update(
            Content.assemble(
                (f" {self.territory_id} ", "reverse bold $accent"),
                "  ",
                show.competitor_state(state),
                f"  {territory.milestone_points if territory else 0} pts  agent {self.agent_id or '—'}",
            )
        )
        layout = MatchLayout(self.match_dir)
        agent, console = layout.agent(self.agent_id or ""), layout.territory(self.territory_id).console_log
        sections = [
            _section("Attach by hand", [Content(self.ssh_command)]),
            _section("Milestones", self._milestones(world)),
            _section(
                f"Console (last {CONSOLE_LINES} lines of {console.relative_to(self.match_dir)})",
                _log_lines(console, CONSOLE_LINES),
            ),
            _section(f"Agent stdout (last {AGENT_LINES} lines)", _log_lines(agent.stdout, AGENT_LINES)),
            _section(f"Agent stderr (last {AGENT_LINES} lines)", _log_lines(agent.stderr, AGENT_LINES)),
        ]
        if self.agent_id:
            calls = [Content.assemble(*line) for line in model_call_lines(self.model_calls)]
            sections.append(_section(model_calls_title(self.model_calls), calls))
        self.query_one("#drill-body-text", Static).update(Content("\n\n").join(sections))

    def _milestones(self, world: World) -> list[Content]:
        territory = world.territories.get(self.territory_id)
        statuses = show.milestone_statuses(world, self.territory_id, self.milestone_ids)
        lines = []
        for milestone_id in self.milestone_ids:
            milestone = territory.milestones.get(milestone_id) if territory else None
            lines.append(
                Content.assemble(
                    show.milestone_glyph(statuses[milestone_id]),
                    " ",
                    (milestone_id, "bold"),
                    "  ",
                    (statuses[milestone_id], show.MILESTONE_STYLES[statuses[milestone_id]]),
                )
            )
            if milestone is not None and milestone.evidence is not None:
                evidence = json.dumps(milestone.evidence, ensure_ascii=False)
                lines.append(Content.assemble("    evidence ", (first_line(evidence, EVIDENCE_CHARS), "$text-muted")))
            if milestone is not None and milestone.failure_detail:
                lines.append(
                    Content.assemble(
                        "    last failure ",
                        (f"({milestone.failure_category}) ", "$error"),
                        first_line(milestone.failure_detail, EVIDENCE_CHARS),
                    )
                )
        return lines
