"""An adapter the referee stopped at the end of the match, killed before it wrote its result, is the
controller's interruption, not a crash of the harness; one that died on its own without a result still is."""

from __future__ import annotations

from types import SimpleNamespace

from aoe_tui.domain import events as ev
from aoe_tui.engine.outcomes import classify_exit


def handle(exit_code: int) -> SimpleNamespace:
    return SimpleNamespace(agent_id="opencode", territory_id="builder-one", exit_code=exit_code, result=lambda: None)


def test_stopped_by_the_referee_without_a_result_is_the_controllers_interruption() -> None:
    outcome = classify_exit(handle(-15), rebooted=True, stop_requested=True)  # type: ignore[arg-type]
    assert isinstance(outcome, ev.AgentInterrupted) and outcome.source == "controller"
    assert "exit -15" in outcome.detail


def test_dead_on_its_own_without_a_result_is_the_harness_fault() -> None:
    outcome = classify_exit(handle(1), rebooted=False, stop_requested=False)  # type: ignore[arg-type]
    assert isinstance(outcome, ev.AgentFinished) and outcome.source == "harness" and not outcome.success
