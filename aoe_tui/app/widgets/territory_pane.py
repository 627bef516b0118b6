"""One territory at the cursor: who plays it, how far it got, why it is stuck, what its agent does.

In a conquest (a `HealthHistory` is given) the milestone part shows the territory's health instead: its
state, the last probe (status, latency and the body, literal), its resources, its state over the match
clock up to the cursor, and when and why it was eliminated."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.manifest import Visualization
from aoe_tui.domain.world import World
from aoe_tui.domain.untrusted import clean_text, first_line
from aoe_tui.store.saved_match import AgentInfo
from aoe_tui.app.view import presentation as show
from aoe_tui.app.view.health_history import HealthHistory
from aoe_tui.app.view.hidden_topology import observed_milestones
from aoe_tui.app.widgets.line_static import LineStatic
from aoe_tui.app.widgets.service_map_view import ServiceMap
from aoe_tui.app.view.tool_calls import ToolCallIndex
from aoe_tui.app.widgets.framed import Framed

LATEST_CALLS = 3
QUIET_AFTER_MS = 15_000
KIND_STYLES = {"discovery": "$text-muted", "validation": "$primary", "lifecycle": "$warning", "mutation": "$accent"}


def success_mark(success: bool | None) -> Content:
    if success is None:
        return Content("?")
    return Content.styled("✓", "$success") if success else Content.styled("✗", "$error")


class TerritoryPane(Framed):
    """The parts (identity, milestones, agent status, activity) are the lines of one `LineStatic`, which
    repaints only the lines a cursor move changed; a blank line goes before the milestones and before the
    activity (the height of the component class `territory-pane--gap`: the .tcss drops it when narrow). A
    service map, when the arena draws one, splits the lines in two around it. One widget for the parts, not
    one per part: every widget costs each frame its share of Textual's messages and compositing, and four
    per pane were a fifth of an End or Home frame.

    The frame's look is the component class `territory-pane--frame`, then the territory's state's
    (`territory-pane--durable`, ...), then `territory-pane--selected` on the live screen's selected pane:
    the .tcss says which of them change it. Its titles say who leads and the points or resources."""

    COMPONENT_CLASSES = {
        "territory-pane--frame",
        "territory-pane--selected",
        "territory-pane--gap",
        *(f"territory-pane--{state}" for state in (*show.COMPETITOR_STYLES, *show.HEALTH_STYLES)),
    }

    def __init__(
        self,
        territory_id: str,
        agent: AgentInfo | None,
        milestones: list[str],
        visualization: Visualization | None,
        calls: ToolCallIndex,
        agent_start_ms: int,
        hides_topology: bool = False,
        history: HealthHistory | None = None,
        duration_ms: int = 0,
    ) -> None:
        super().__init__(id=f"pane-{territory_id}", classes="territory-pane")
        self.territory_id = territory_id
        self.agent = agent
        self.milestones = milestones
        self.visualization = visualization
        self.hides_topology = hides_topology  # a fog arena: the map shows what this territory has observed
        self.calls = calls
        self.agent_start_ms = agent_start_ms
        self.history = history  # a conquest's health over time (None in a build race)
        self.duration_ms = duration_ms
        self._state = ""  # the territory's state at the cursor: its frame's look
        self._parts: dict[str, list[Content]] = {}  # each part's lines at the cursor
        self._gap: int | None = None  # the blank lines between parts: read at the first show and on a resize
        self._service_map = (
            ServiceMap(visualization, hides_topology, classes="service-map")
            if visualization is not None and visualization.nodes
            else None
        )
        # Kept, not queried: a cursor move tells each of a dozen panes, and a query per frame added up.
        self._lines = LineStatic(classes="lines")  # all the parts, or those above the map
        self._below_map = LineStatic(classes="lines") if self._service_map is not None else None

    def compose(self) -> ComposeResult:
        yield self._lines
        if self._service_map is not None and self._below_map is not None:
            yield self._service_map
            yield self._below_map

    def _set(self, part: str, lines: list[Content]) -> None:
        self._parts[part] = lines

    def on_resize(self) -> None:
        """A new size may come with a new breakpoint (`-narrow`) and so a new gap: the parts shown again."""
        if self._parts and self._gap_height() != self._gap:
            self._gap = None
            self._show_parts()

    def _gap_height(self) -> int:
        height = self.get_component_styles("territory-pane--gap").height
        return int(height.value) if height is not None else 0

    def _show_parts(self) -> None:
        """The parts' lines, gaps between, shown; only the lines that changed repaint. Lines, not one joined
        text: joining a dozen panes' parts only for them to be split into lines again was a tenth of a frame."""
        if self._gap is None:
            self._gap = self._gap_height()
        gap = [Content("")] * self._gap
        parts = self._parts
        above = [*parts["identity"], *gap, *parts["milestones"]]
        below = [*parts["agent-status"], *gap, *parts["activity"]]
        if self._below_map is None:
            self._lines.show(above + below)
        else:
            self._lines.show(above)
            self._below_map.show(below)

    def show(self, world: World, elapsed_ms: int, activity_horizon_ms: int, rank: int) -> None:
        if self.history is not None:
            self._show_conquest(world, elapsed_ms)
        else:
            self._show_race(world, rank)
        agent_state = world.agents.get(self.agent.agent_id) if self.agent else None
        status = [
            Content.assemble("agent ", show.styled_agent_status(agent_state)),
            Content(
                f"tokens {show.token_count(agent_state, 'input_tokens')} in / "
                f"{show.token_count(agent_state, 'output_tokens')} out · cost {show.cost(agent_state)}"
            ),
        ]
        if (measured := show.usage_measured_by(agent_state)) is not None and agent_state is not None:
            status.append(Content.styled(f"  {measured}", "$text-muted"))
            if show.reported_usage_differs(agent_state):
                status.append(Content.styled(f"  {show.reported_usage(agent_state)}", "$warning"))
        self._set("agent-status", status)
        self._set(
            "activity", self._activity(elapsed_ms, activity_horizon_ms, agent_state is not None and agent_state.running)
        )
        self._show_parts()

    def _show_conquest(self, world: World, elapsed_ms: int) -> None:
        assert self.history is not None
        territory = world.territories.get(self.territory_id)
        state = territory.state if territory else "provisioning"
        resources = territory.resources if territory else 0
        self._set_frame(state, self.territory_id, f"{resources} res · {state}")
        self._set("identity", self._identity(state, show.health_state(state)))
        health = territory.last_health if territory else None
        probe = (
            Content.assemble(
                (str(health.status) if health.status is not None else "no answer", "bold"),
                f" · {health.latency_ms if health.latency_ms is not None else '?'} ms · ",
                (first_line(health.detail or "", 60), "$success" if health.healthy else "$error"),
            )
            if health is not None
            else Content.styled("not probed yet", "$text-muted")
        )
        lines = [
            Content.assemble("health ", show.health_state(state), " · resources ", (str(resources), "bold")),
            Content.assemble("probe ", probe),
            Content.styled(
                self.history.strip(self.territory_id, elapsed_ms, max(self.duration_ms, elapsed_ms, 1), 48) or "·",
                show.HEALTH_STYLES.get(state, ""),
            ),
        ]
        if territory is not None and territory.state == "eliminated":
            at = self.history.eliminated_at.get(self.territory_id)
            lines.append(
                Content.assemble(
                    ("eliminated", "$error bold"),
                    f" at {format_clock(at)}" if at is not None else "",
                    " · ",
                    first_line(territory.elimination_detail or "", 80),
                )
            )
        self._set("milestones", lines)

    def _show_race(self, world: World, rank: int) -> None:
        territory = world.territories.get(self.territory_id)
        state = territory.competitor_state if territory else "preparing"
        # A rank means something only once a territory has scored; before that all are equal.
        scored = territory is not None and territory.milestone_points > 0
        self._set_frame(
            state,
            f"#{rank} {self.territory_id}" if scored else self.territory_id,
            f"{territory.milestone_points if territory else 0} pts · {state}",
        )
        self._set("identity", self._identity(state, show.competitor_state(state)))
        statuses = show.milestone_statuses(world, self.territory_id, self.milestones)
        self._set("milestones", self._milestone_matrix(world, statuses))
        if self._service_map is not None:
            self._service_map.show(statuses, observed_milestones(world, self.territory_id))

    def select(self, selected: bool) -> None:
        """The live screen's selected territory (the target of its actions): marked `-selected`, framed so."""
        self.set_class(selected, "-selected")
        self._set_frame(self._state, self.frame_title, self.frame_subtitle)

    def _set_frame(self, state: str, title: str, subtitle: str) -> None:
        self._state = state
        looks = ["territory-pane--frame"]
        if f"territory-pane--{state}" in self.COMPONENT_CLASSES:
            looks.append(f"territory-pane--{state}")
        if self.has_class("-selected"):
            looks.append("territory-pane--selected")
        self.frame(tuple(looks), clean_text(title), clean_text(subtitle))

    def _identity(self, state: str, styled_state: Content) -> list[Content]:
        agent = self.agent
        return [
            Content.assemble((agent.agent_id if agent else "no agent", "bold"), "  ", styled_state),
            Content.assemble("model ", show.or_unavailable(agent.model if agent else None)),
            Content.assemble(
                "harness ",
                show.or_unavailable(agent.adapter if agent else None),
                f" ({agent.adapter_version})" if agent and agent.adapter_version else "",
                " · reasoning ",
                show.or_unavailable(agent.reasoning_effort if agent else None),
            ),
        ]

    def _milestone_matrix(self, world: World, statuses: dict[str, str]) -> list[Content]:
        territory = world.territories.get(self.territory_id)
        width = max((len(m) for m in self.milestones), default=0)
        lines = []
        for milestone_id in self.milestones:
            status = statuses[milestone_id]
            milestone = territory.milestones.get(milestone_id) if territory else None
            lines.append(
                Content.assemble(
                    show.milestone_glyph(status),
                    " ",
                    milestone_id.ljust(width),
                    "  ",
                    (show.milestone_note(milestone, status), show.MILESTONE_STYLES[status]),
                )
            )
        durable = format_clock(territory.durable_at_ms) if territory and territory.durable_at_ms is not None else "—"
        lines.append(
            Content.assemble(
                "points ",
                (str(territory.milestone_points if territory else 0), "bold"),
                " · durable ",
                (durable, "$success bold" if durable != "—" else ""),
            )
        )
        return lines

    def _activity(self, elapsed_ms: int, horizon_ms: int, running: bool) -> list[Content]:
        lines = [
            Content.assemble(
                (format_clock(call.at_ms), "$text-muted"),
                " ",
                (call.kind.ljust(11), KIND_STYLES.get(call.kind, "")),
                success_mark(call.success),
                " ",
                first_line(call.description or call.command, 120),
            )
            for call in self.calls.latest(horizon_ms, LATEST_CALLS)
        ]
        quiet = self.calls.quiet_ms(elapsed_ms, self.agent_start_ms)
        if running and quiet >= QUIET_AFTER_MS:
            lines.append(Content.styled(f"no observable tool activity for {format_clock(quiet)}", "$warning"))
        if not lines:
            lines.append(Content.styled("no observable tool calls yet", "$text-muted"))
        return lines
