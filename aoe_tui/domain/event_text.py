"""What an event means, in one line of plain text: who did it and what happened.

The app's event list (its actor and summary columns) and the headless
narration both read an event here, so an event never reads one way live in a
terminal and another way in the app. Matching is on the event's class; any
other event (an unknown kind from a newer log, or one with nothing to
summarise) shows its own fields. Player text is cut to its first line
(`first_line`, which also cleans it).
"""

from __future__ import annotations

from aoe_tui.domain import events as ev
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.untrusted import first_line

_ENVELOPE = {"schema_version", "sequence", "elapsed_ms", "kind", "territory", "agent"}


def actor(event: ev.EventBase) -> str:
    """The operator for operator actions, else the territory or agent concerned, else the referee."""
    if isinstance(event, ev.OPERATOR_EVENTS):
        return "operator"
    return event.territory_id or event.agent_id or "referee"


def summary(event: ev.EventBase) -> str:
    """One line saying what the event means, not its raw fields."""
    match event:
        case ev.MatchStateChanged() | ev.CompetitorStateChanged() | ev.TerritoryStateChanged():
            return f"{event.from_} → {event.to}" + (f" ({event.reason})" if event.reason else "")
        case ev.MilestonePassed():
            return f"{event.milestone} +{event.points} pts"
        case ev.MilestoneFailed():
            return f"{event.milestone}: {event.category or 'failed'} — {first_line(event.detail)}"
        case ev.MilestoneEvaluationStarted():
            return event.milestone
        case ev.MilestoneRetryRequested() | ev.MilestonePaused() | ev.MilestoneResumed():
            return event.milestone + ("" if event.territory else " (all territories)")
        case ev.MilestoneRevoked():
            return f"{event.milestone}: {event.reason or 'revoked'}"
        case ev.UsageCharged():
            return _usage(event) + (" (measured by the referee)" if event.measured_by == "referee" else "")
        case ev.UsageReported():
            return "the adapter reports " + _usage(event).lstrip("+") + " in all (not counted)"
        case ev.PostMatchDrainStarted():
            return (
                f"{event.pending_agents} agents may still hand in results (up to {format_clock(event.timeout_ms or 0)})"
            )
        case ev.PostMatchDrainFinished():
            return f"{event.captured_agents} captured, {event.terminated_agents} terminated"
        case ev.MatchPaused():
            return event.reason or "match paused"
        case ev.MatchResumed():
            return f"resumed after {format_clock(event.paused_ms or 0)} paused (not counted on the match clock)"
        case ev.MatchFinished():
            return f"winner {event.winner or 'none'} ({event.reason or 'no reason given'})"
        case ev.AgentStarted():
            return f"model {event.model or 'unavailable'}"
        case ev.AgentFinished():
            outcome = "succeeded" if event.success else "failed"
            return f"{outcome} ({event.source or 'unknown'}): {first_line(event.detail)}"
        case ev.AgentInterrupted() | ev.TerritoryEliminated():
            return f"{event.source or ''}: {first_line(event.detail)}"
        case ev.InfrastructureFailure():
            return f"{event.source or event.component or ''}: {first_line(event.detail)}"
        case ev.MonitorStarted():
            return f"{event.monitor} monitor started after {event.milestone} (every {event.interval_ms} ms)"
        case ev.MonitorStopped():
            return f"{event.monitor} monitor stopped ({event.reason}): {_monitor(event.summary)}"
        case ev.AgentOutraced() | ev.AgentTerminated():
            return first_line(event.reason)
    return first_line(", ".join(f"{k}={v}" for k, v in event.to_json().items() if k not in _ENVELOPE))


def _usage(event: ev.UsageCharged | ev.UsageReported) -> str:
    tokens = (
        f"{event.input_tokens or 0:,} in / {event.output_tokens or 0:,} out"
        if event.input_tokens is not None or event.output_tokens is not None
        else "tokens n/a"
    )
    cost = f"${event.cost_microusd / 1_000_000:.4f}" if event.cost_microusd is not None else "cost n/a"
    return f"+{event.resource_units or 0} units, {tokens}, {cost}"


def _monitor(summary: object) -> str:
    if not isinstance(summary, dict):
        return "no summary"
    text = f"{summary.get('samples')} samples, {summary.get('failures')} failed checks"
    if summary.get("host_loaded"):
        text += ", host loaded"
    return text
