"""How world values read on screen: one place for labels, theme styles and "n/a".

Every widget shows the same facts (an agent's outcome, a cost, a milestone's
state), so the words and colours for them live here instead of in each pane.
Styles are theme variables, so the app follows whatever theme is active.
"""

from __future__ import annotations

from textual.content import Content

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.untrusted import first_line
from aoe_tui.domain.world import AgentState, MilestoneState, World

UNAVAILABLE = "unavailable"
NOT_AVAILABLE = "n/a"

COMPETITOR_STYLES = {
    "durable": "$success bold",
    "verifying": "$warning",
    "building": "$primary",
    "incomplete": "$error",
    "unavailable": "$error",
    "preparing": "$text-muted",
}

HEALTH_STYLES = {  # a conquest territory's state (ARENAS §5)
    "healthy": "$success bold",
    "recovering": "$warning",
    "degraded": "$error",
    "eliminated": "$error bold",
    "provisioning": "$text-muted",
}

AGENT_STATUS_STYLES = {
    "running": "$primary",
    "completed": "$success",
    "failed": "$error",
    "interrupted": "$warning",
    "outraced/incomplete": "$warning",
    "terminated": "$error",
    "not started": "$text-muted",
}

MILESTONE_STYLES = {
    "passed": "$success",
    "evaluating": "$warning",
    "failed": "$error",
    "paused": "$accent",
    "pending": "$text-muted",
}
MILESTONE_GLYPHS = {"passed": "✓", "evaluating": "⋯", "failed": "✗", "paused": "‖", "pending": "·"}


def or_unavailable(value: str | None) -> str:
    return value if value else UNAVAILABLE


def competitor_state(state: str) -> Content:
    return Content.styled(state, COMPETITOR_STYLES.get(state, ""))


def health_state(state: str) -> Content:
    return Content.styled(state, HEALTH_STYLES.get(state, ""))


def agent_status(agent: AgentState | None) -> str:
    """The agent's situation in the words the brief uses (outraced agents are "incomplete")."""
    if agent is None:
        return "not started"
    if agent.running:
        return "running"
    if agent.terminal_state == "incomplete":
        return "outraced/incomplete"
    return agent.terminal_state or "not started"


def styled_agent_status(agent: AgentState | None) -> Content:
    status = agent_status(agent)
    return Content.styled(status, AGENT_STATUS_STYLES.get(status, ""))


def tokens_known(agent: AgentState) -> bool:
    """Recorded worlds predate the `tokens_known` flag; a non-zero count is known by definition."""
    return agent.tokens_known or bool(agent.input_tokens or agent.output_tokens)


def cost_known(agent: AgentState) -> bool:
    return agent.cost_known or bool(agent.cost_microusd)


def token_count(agent: AgentState | None, field: str) -> str:
    if agent is None or not tokens_known(agent):
        return NOT_AVAILABLE
    return f"{getattr(agent, field):,}"


def cost(agent: AgentState | None) -> str:
    if agent is None or not cost_known(agent):
        return NOT_AVAILABLE
    return f"${agent.cost_microusd / 1_000_000:.4f}"


MEASURED_BY_REFEREE = "measured by the referee"


def usage_measured_by(agent: AgentState | None) -> str | None:
    """Who measured the agent's usage figures when it was the referee (its model gateway), else None:
    the figures are then the adapter's own report."""
    return MEASURED_BY_REFEREE if agent is not None and agent.metered else None


def reported_usage_differs(agent: AgentState | None) -> bool:
    """Whether a metered agent's adapter reported figures the referee's measure does not match (a figure the
    adapter gave that differs, or that the referee could not measure)."""
    if agent is None or not agent.metered:
        return False
    pairs = [
        (agent.reported_input_tokens, agent.input_tokens if tokens_known(agent) else None),
        (agent.reported_output_tokens, agent.output_tokens if tokens_known(agent) else None),
        (agent.reported_cost_microusd, agent.cost_microusd if cost_known(agent) else None),
    ]
    return any(reported is not None and reported != measured for reported, measured in pairs)


def reported_usage(agent: AgentState) -> str:
    """The adapter's own report, for beside the measured figures: `adapter says 9,000 in / 800 out · $0.0100`."""

    def count(value: int | None) -> str:
        return NOT_AVAILABLE if value is None else f"{value:,}"

    said = f"adapter says {count(agent.reported_input_tokens)} in / {count(agent.reported_output_tokens)} out"
    if agent.reported_cost_microusd is not None:
        said += f" · ${agent.reported_cost_microusd / 1_000_000:.4f}"
    return said


def usage_note(agent: AgentState | None) -> str:
    """What to say after an agent's usage figures: who measured them, and the adapter's differing report."""
    measured = usage_measured_by(agent)
    if measured is None or agent is None:
        return ""
    return f"{measured}; {reported_usage(agent)}" if reported_usage_differs(agent) else measured


def milestone_status(milestone: MilestoneState | None, paused: bool) -> str:
    if milestone is not None and milestone.passed:
        return "passed"
    if paused:
        return "paused"
    if milestone is None:
        return "pending"
    if milestone.evaluating:
        return "evaluating"
    if milestone.failure_category or milestone.failure_detail:
        return "failed"
    return "pending"


def milestone_statuses(world: World, territory_id: str, milestone_ids: list[str]) -> dict[str, str]:
    territory = world.territories.get(territory_id)
    return {
        m: milestone_status(
            territory.milestones.get(m) if territory else None, world.is_milestone_paused(territory_id, m)
        )
        for m in milestone_ids
    }


def milestone_glyph(status: str) -> Content:
    return Content.styled(MILESTONE_GLYPHS[status], MILESTONE_STYLES[status])


def milestone_note(milestone: MilestoneState | None, status: str) -> str:
    """The short "why" next to a milestone: when it passed, or how often and why it failed."""
    if milestone is None:
        return status
    if status == "passed":
        return format_clock(milestone.passed_at_ms)
    detail = first_line(milestone.failure_detail or milestone.failure_category)
    tries = f"{milestone.attempts} attempt{'s' if milestone.attempts != 1 else ''}"
    if status == "failed":
        return f"{tries} · {detail}"
    if status == "evaluating":
        return f"evaluating, {tries}" + (f" · last: {detail}" if detail else "")
    return status
