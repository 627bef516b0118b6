"""How an agent's end becomes its one terminal event.

The adapter's own `result.json` is the agent's word; the referee adds what
only it knows: that it rebooted the guest under the agent (not the player's
fault), or that it asked the agent to stop because the match was over.
"""

from __future__ import annotations

from aoe_tui.domain import events as ev
from aoe_tui.engine.agent_handle import AgentHandle

REBOOT_DETAIL = "agent session was interrupted by the referee's host reboot"
STOPPED_DETAIL = "stopped by the referee at the end of the match"

AgentOutcome = ev.AgentFinished | ev.AgentInterrupted | ev.AgentOutraced | ev.AgentTerminated

_SOURCE_BY_STATUS: dict[str, ev.Source] = {
    "completed": "player",
    "failed": "player",
    "timed_out": "player",
    "budget_exceeded": "player",
    "unavailable": "provider",
    "harness_error": "harness",
}


def classify_exit(
    handle: AgentHandle, rebooted: bool, stop_requested: bool = False
) -> ev.AgentFinished | ev.AgentInterrupted:
    agent = handle.agent_id
    result = handle.result()
    if result is None and stop_requested:  # the referee's stop cut it before it wrote its result: not its fault
        return ev.AgentInterrupted(
            agent=agent, source="controller", detail=f"{STOPPED_DETAIL} (exit {handle.exit_code}, no result.json)"
        )
    if result is None:
        return ev.AgentFinished(
            agent=agent,
            source="harness",
            success=False,
            detail=f"adapter exited with code {handle.exit_code} without writing result.json",
        )
    if result.status == "interrupted":
        if stop_requested:
            return ev.AgentInterrupted(agent=agent, source="controller", detail=result.summary or STOPPED_DETAIL)
        if rebooted:
            return ev.AgentInterrupted(agent=agent, source="arena", detail=REBOOT_DETAIL)
        return ev.AgentInterrupted(agent=agent, source="harness", detail=result.summary)
    return ev.AgentFinished(
        agent=agent,
        source=_SOURCE_BY_STATUS[result.status],
        success=result.status == "completed",
        detail=result.summary,
    )
