"""The match report: how they fought, the agents, the standings and the provenance.

These are the "after the match" views of the replay page; they read the
world at the head of the timeline (the final state of a saved match).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from aoe_tui.analysis.tampering import tampering_summary
from aoe_tui.domain.clock import format_clock
from aoe_tui.app.view import presentation as show
from aoe_tui.app.widgets.literal import LiteralTable, literal
from aoe_tui.app.view.session import MatchSession

TABS = {"fought": "How they fought", "agents": "Agents", "standings": "Standings", "provenance": "Provenance"}
NO_PROVENANCE = "Exact provenance is unavailable for this historical match."


def _table(columns: tuple[str, ...], rows: list[tuple], **kwargs) -> DataTable:
    table = LiteralTable(cursor_type="row", zebra_stripes=True, **kwargs)
    table.add_columns(*columns)
    table.add_rows(rows)
    return table


class ReportScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("f", "tab('fought')", "How they fought"),
        Binding("g", "tab('agents')", "Agents"),
        Binding("w", "tab('standings')", "Standings"),
        Binding("v", "tab('provenance')", "Provenance"),
    ]

    def __init__(self, session: MatchSession, tab: str = "fought") -> None:
        super().__init__()
        self.session = session
        self.initial_tab = tab

    def compose(self) -> ComposeResult:
        yield Static(
            Content.assemble(
                (" REPORT ", "reverse bold $accent"),
                " ",
                (self.session.match.arena_name, "bold"),
                " · ",
                self.session.match.name,
            ),
            classes="report-title",
        )
        skipped = self.session.match.skipped_files()
        if skipped:
            yield Static(
                literal("skipped (damaged): " + " · ".join(f"{name} ({reason})" for name, reason in skipped)),
                classes="report-note report-skipped",
            )
        with TabbedContent(initial=self.initial_tab):
            with TabPane(TABS["fought"], id="fought"):
                yield Static(
                    "Deterministic analysis of observable tool calls. Private model reasoning is never parsed.",
                    classes="report-note",
                )
                yield self._fought_table()
                yield Static(literal(self._call_counts()), classes="report-note")
            with TabPane(TABS["agents"], id="agents"):
                yield self._agents_table()
                if notes := self._usage_notes():
                    yield Static(literal("\n".join(notes)), classes="report-note", id="usage-notes")
            with TabPane(TABS["standings"], id="standings"):
                yield self._standings_table()
            with TabPane(TABS["provenance"], id="provenance"):
                yield from self._provenance()
        yield Footer()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    def _fought_table(self) -> DataTable:
        rows = []
        for agent_id, analysis in self.session.analyses.items():
            metrics, info = analysis.metrics, self.session.match.agents.get(agent_id)
            first_change = (
                format_clock(self.session.start_ms.get(agent_id, 0) + metrics.first_mutation_after_ms)
                if metrics.first_mutation_after_ms is not None
                else "—"
            )
            architecture = ", ".join(analysis.architecture.technologies + analysis.architecture.service_units)
            if tampering := tampering_summary(analysis):
                architecture = f"{architecture or '—'} · tampering: {tampering}"
            rows.append(
                (
                    agent_id,
                    show.or_unavailable(info.model if info else analysis.model),
                    first_change,
                    metrics.discoveries,
                    metrics.mutations,
                    metrics.lifecycle_actions,
                    metrics.validations,
                    metrics.tool_errors,
                    architecture or "—",
                )
            )
        columns = (
            "agent",
            "model",
            "first change",
            "discovery",
            "changes",
            "lifecycle",
            "checks",
            "errors",
            "architecture seen",
        )
        return _table(columns, rows, id="fought-table")

    def _call_counts(self) -> str:
        counts = [
            f"{agent}: {len(calls.calls)} observed tool calls" for agent, calls in self.session.tool_calls.items()
        ]
        without = [a for a in self.session.match.agents if a not in self.session.analyses]
        note = f"  ·  no transcript or analysis for {', '.join(without)}" if without else ""
        return "  ·  ".join(counts) + note

    def _agents_table(self) -> DataTable:
        world, match = self.session.timeline.head, self.session.match
        rows = []
        for agent_id, info in match.agents.items():
            state = world.agents.get(agent_id)
            artifacts = (
                " · ".join(
                    name
                    for name, present in (
                        ("transcript", agent_id in match.transcripts),
                        ("analysis", agent_id in self.session.analyses),
                    )
                    if present
                )
                or "—"
            )
            rows.append(
                (
                    agent_id,
                    info.territory or "—",
                    show.or_unavailable(info.model),
                    show.or_unavailable(info.adapter),
                    show.or_unavailable(info.reasoning_effort),
                    show.agent_status(state),
                    show.token_count(state, "input_tokens"),
                    show.token_count(state, "output_tokens"),
                    show.cost(state),
                    artifacts,
                )
            )
        columns = (
            "agent",
            "territory",
            "model",
            "harness",
            "reasoning",
            "outcome",
            "input",
            "output",
            "cost",
            "artifacts",
        )
        return _table(columns, rows, id="agents-table")

    def _usage_notes(self) -> list[str]:
        """Whose usage figures the agents table shows: the referee's measure (the adapter's report beside
        when it differs); nothing for an agent whose figures are its adapter's own (every earlier match)."""
        world = self.session.timeline.head
        return [
            f"{agent_id}: usage {note}"
            for agent_id in self.session.match.agents
            if (note := show.usage_note(world.agents.get(agent_id)))
        ]

    def _standings_table(self) -> DataTable:
        world = self.session.timeline.head
        total = len(self.session.milestone_ids())
        rows = []
        for rank, territory_id in enumerate(world.standings(), 1):
            territory = world.territories[territory_id]
            passed = sum(m.passed for m in territory.milestones.values())
            rows.append(
                (
                    rank,
                    territory_id,
                    territory.agent or "—",
                    territory.competitor_state,
                    f"{passed}/{total}",
                    territory.milestone_points,
                    format_clock(territory.durable_at_ms),
                )
            )
        columns = ("rank", "territory", "agent", "state", "milestones", "points", "durable at")
        return _table(columns, rows, id="standings-table")

    def _provenance(self) -> ComposeResult:
        provenance = self.session.match.provenance
        if not provenance:
            yield Static(NO_PROVENANCE, classes="report-note")
            return
        rows = []
        for key, value in provenance.items():
            if isinstance(value, dict):
                rows += [(f"{key}.{inner}", str(v)) for inner, v in value.items()] or [(key, "—")]
            else:
                rows.append((key, "unavailable" if value is None else str(value)))
        yield _table(("field", "value"), rows, id="provenance-table")
