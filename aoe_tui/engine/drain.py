"""The post-match drain: a bounded wait for unfinished agents to hand in their work.

The match clock is frozen by now, so every drain event carries the finish
time; the wait itself is measured on the injected monotonic source. An agent
still building when another territory won is `agent_outraced` (it lost the
race, even if it hands in a transcript); one that ignores the stop request
past the deadline is killed and `agent_terminated`.
"""

from __future__ import annotations

from aoe_tui.domain import events as ev
from aoe_tui.engine.outcomes import classify_exit
from aoe_tui.engine.referee import Referee

DEADLINE_REASON = "post-match drain deadline expired"
POLL_SECONDS = 0.1


async def drain_agents(referee: Referee, timeout_seconds: float) -> tuple[int, int]:
    """Stop, wait for, and classify every agent without a terminal event; returns (captured, terminated)."""
    pending = referee.unrecorded_agents()
    referee.recorder.emit(ev.PostMatchDrainStarted(pending_agents=len(pending), timeout_ms=int(timeout_seconds * 1000)))
    building = [h for h in pending if not h.exited]
    for handle in building:
        await handle.request_stop()
    source = referee.clock.source
    deadline = source.now() + timeout_seconds
    while any(not h.exited for h in building) and source.now() < deadline:
        await source.sleep(POLL_SECONDS)
    referee.charge_usage()
    winner = referee.world.winner
    captured = terminated = 0
    for handle in pending:
        if not handle.exited:
            await handle.kill()
            referee.record_agent_outcome(handle, ev.AgentTerminated(agent=handle.agent_id, reason=DEADLINE_REASON))
            terminated += 1
            continue
        captured += 1
        if handle in building and winner is not None and handle.territory_id != winner:
            referee.record_agent_outcome(
                handle, ev.AgentOutraced(agent=handle.agent_id, reason=referee.outraced_reason(winner))
            )
        else:
            outcome = classify_exit(
                handle, rebooted=bool(referee.reboots.get(handle.territory_id)), stop_requested=handle in building
            )
            referee.record_agent_outcome(handle, outcome)
    referee.recorder.emit(ev.PostMatchDrainFinished(captured_agents=captured, terminated_agents=terminated))
    return captured, terminated
