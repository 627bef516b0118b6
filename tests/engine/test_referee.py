"""Referee logic on scripted territories: real verifier scripts, virtual time, deterministic ticks."""

from __future__ import annotations

import asyncio

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.drain import drain_agents
from aoe_tui.testing.scripted_host import ScriptedPlan
from tests.engine.helpers import RACE, ScriptedReferee, arena_data


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(plans=None, data=None, agents=None):
        match = ScriptedReferee(tmp_path, plans if plans is not None else RACE, data, agents)
        made.append(match)
        return match

    yield factory
    for match in made:
        match.close()


def milestone_of(match, territory, milestone):
    return match.world.territories[territory].milestones.get(milestone)


async def test_opening_matches_the_fixture_order(make):
    match = make()
    assert match.kinds()[:10] == (
        ["match_state_changed"]
        + ["competitor_state_changed"] * 3
        + ["territory_registered"] * 3
        + ["agent_started"] * 3
    )
    assert match.events("competitor_state_changed")[0]["reason"] == "SSH preflight passed"


async def test_a_good_build_chains_every_milestone_in_one_tick(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0, storage="disk")})
    await match.tick()
    passed = [e["milestone"] for e in match.events("milestone_passed") if e["territory"] == "builder-one"]
    assert passed == ["service-up", "write-read", "service-restart", "host-reboot"]
    assert match.world.winner == "builder-one"
    assert match.world.finish_reason == "first durable deployment"
    assert match.world.territories["builder-one"].milestone_points == 100
    assert match.world.territories["builder-one"].durable_at_ms == 2000


async def test_each_flaw_stops_at_the_milestone_it_breaks_with_a_readable_detail(make):
    match = make()
    await match.run_until_over()
    world = match.world
    assert world.winner == "builder-one"
    amnesiac = milestone_of(match, "builder-two", "service-restart")
    assert not amnesiac.passed and amnesiac.failure_category == "verification_failed"
    assert "returned 404 after systemctl restart builder-app.service" in amnesiac.failure_detail
    assert amnesiac.failure_detail.startswith("GET /records/record-")
    tmpfs = milestone_of(match, "builder-three", "host-reboot")
    assert not tmpfs.passed and "returned 404 after the host reboot" in tmpfs.failure_detail
    assert world.territories["builder-two"].milestone_points == 30
    assert world.territories["builder-three"].milestone_points == 60
    not_up_yet = next(e for e in match.events("milestone_failed") if e["territory"] == "builder-one")
    assert not_up_yet["detail"] == "GET /health: no answer from the service (nothing listening on guest port 8080?)"
    assert reduce(match.recorder.events).to_json() == world.to_json()


async def test_finishing_freezes_the_clock(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0)})
    await match.tick()
    finished_at = match.world.elapsed_ms
    match.source.advance(30)
    assert match.clock.elapsed_ms() == finished_at
    await match.tick()
    assert match.kinds()[-1] == "match_finished"


async def test_timer_expiry_crowns_the_standings_leader(make):
    plans = {"builder-one": ScriptedPlan(ready_at_ms=0, storage="memory")}
    match = make(plans, arena_data(duration_seconds=10))
    await match.run_until_over()
    assert match.world.finish_reason == "match timer expired"
    assert match.world.winner == "builder-one"
    assert match.world.elapsed_ms == 10_000


async def test_an_exact_tie_at_timer_expiry_has_no_winner(make):
    plans = {t: ScriptedPlan(ready_at_ms=0, storage="memory") for t in ("builder-one", "builder-two", "builder-three")}
    match = make(plans, arena_data(duration_seconds=6))
    await match.run_until_over()
    assert match.world.finish_reason == "match timer expired"
    assert match.world.winner is None
    assert match.events("match_finished")[0]["winner"] is None


async def test_without_stop_on_first_durable_the_match_runs_to_the_timer(make):
    data = arena_data(duration_seconds=8)
    data["build"]["stop_on_first_durable"] = False
    plans = {"builder-one": ScriptedPlan(ready_at_ms=4000), "builder-two": ScriptedPlan(ready_at_ms=0)}
    match = make(plans, data)
    await match.run_until_over()
    assert [e["territory"] for e in match.events("durable_deployment_completed")] == ["builder-two", "builder-one"]
    assert match.world.winner == "builder-two"  # earliest durable wins the standings


async def test_pause_freezes_the_clock_and_stops_evaluations(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=4000)})
    await match.tick()
    assert await match.referee.pause_match("lunch") is True
    assert await match.referee.pause_match() is False  # idempotent: no second event
    before = len(match.recorder.events)
    for _ in range(5):
        await match.tick()
    assert len(match.recorder.events) == before
    assert all(host.state.suspended for host in match.hosts.values())
    assert all(agent.suspended for agent in match.agents.values())
    assert match.clock.elapsed_ms() == 2000
    assert await match.referee.resume_match() is True
    resumed = match.events("match_resumed")[0]
    assert resumed["paused_ms"] == 10_000 and resumed["elapsed_ms"] == 2000
    await match.tick()
    assert match.world.winner == "builder-one" and match.world.elapsed_ms == 4000
    assert match.kinds().count("match_paused") == 1


async def test_a_resume_during_a_settling_pause_waits_and_leaves_no_guest_suspended(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=4000)})
    await match.tick()
    gate = asyncio.Event()
    settle = match.referee.settle

    async def slow_settle():  # a reboot check still running when the operator pauses
        await gate.wait()
        await settle()

    match.referee.settle = slow_settle
    pause = asyncio.ensure_future(match.referee.pause_match("slow"))
    await asyncio.sleep(0.01)
    resume = asyncio.ensure_future(match.referee.resume_match())
    await asyncio.sleep(0.01)
    assert not resume.done()
    gate.set()
    assert await pause is True and await resume is True
    assert not any(host.state.suspended for host in match.hosts.values())
    assert not any(agent.suspended for agent in match.agents.values())
    assert match.kinds()[-2:] == ["match_paused", "match_resumed"]


async def test_a_paused_milestone_is_skipped_until_resumed(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0)})
    assert match.referee.pause_milestone("service-restart", "builder-one") is True
    assert match.referee.pause_milestone("service-restart", "builder-one") is False
    await match.tick()
    assert milestone_of(match, "builder-one", "write-read").passed
    assert milestone_of(match, "builder-one", "service-restart") is None
    assert match.referee.pause_milestone("write-read") is True  # every territory
    assert match.world.is_milestone_paused("builder-two", "write-read")
    assert match.referee.resume_milestone("service-restart", "builder-one") is True
    await match.tick()
    assert match.world.winner == "builder-one"


async def test_operator_controls_reject_unknown_targets(make):
    match = make()
    with pytest.raises(AoeError, match="no territory 'nowhere'"):
        match.referee.pause_milestone("service-up", "nowhere")
    with pytest.raises(AoeError, match="no milestone 'flying'"):
        match.referee.retry_milestone("builder-one", "flying")
    with pytest.raises(AoeError, match="depends on service-up"):
        match.referee.retry_milestone("builder-one", "write-read")


async def test_retry_of_a_passed_milestone_that_now_fails_revokes_it(make):
    data = arena_data()
    data["build"]["stop_on_first_durable"] = False
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0)}, data)
    await match.tick()
    assert match.world.territories["builder-one"].milestone_points == 100
    match.hosts["builder-one"].state.suspended = True  # the service stops answering
    match.referee.retry_milestone("builder-one", "write-read")
    await match.referee.settle()
    revoked = match.events("milestone_revoked")
    assert [(e["territory"], e["milestone"]) for e in revoked] == [("builder-one", "write-read")]
    assert "re-verification failed: PUT /records/record-" in revoked[0]["reason"]
    assert match.world.territories["builder-one"].milestone_points == 80
    assert match.kinds()[-3:] == ["milestone_retry_requested", "milestone_evaluation_started", "milestone_revoked"]


async def test_retry_of_a_passed_milestone_that_still_works_keeps_its_points(make):
    data = arena_data()
    data["build"]["stop_on_first_durable"] = False
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0)}, data)
    await match.tick()
    match.referee.retry_milestone("builder-one", "service-up")
    await match.referee.settle()
    assert match.kinds()[-1] == "milestone_passed"
    assert match.world.territories["builder-one"].milestone_points == 100


async def test_a_reboot_that_never_comes_back_fails_the_milestone(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=0, reboot_fails=True)}, arena_data(duration_seconds=4))
    await match.tick()
    state = milestone_of(match, "builder-one", "host-reboot")
    assert state.failure_category == "reboot_failed"
    assert "did not come back" in state.failure_detail


async def test_a_dead_vm_is_an_arena_fault_and_makes_the_competitor_unavailable(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=4000)})
    match.hosts["builder-two"].kill()
    await match.tick()
    fault = match.events("infrastructure_failure")
    assert [(f["component"], f["source"], f["territory"]) for f in fault] == [
        ("territory builder-two", "arena", "builder-two")
    ]
    state = milestone_of(match, "builder-two", "service-up")
    assert state.failure_category == "arena_fault" and "not counted against the player" in state.failure_detail
    assert match.world.territories["builder-two"].competitor_state == "unavailable"
    await match.tick()
    assert [e["territory"] for e in match.events("milestone_evaluation_started")].count("builder-two") == 1


async def test_usage_is_charged_as_deltas_each_tick(make):
    match = make({}, agents={"oracle": 3.0})
    await match.tick()
    await match.tick()
    charges = [e for e in match.events("usage_charged") if e["agent"] == "oracle"]
    assert [c["resource_units"] for c in charges] == [2, 1]
    assert all(c["input_tokens"] is None for c in charges)
    assert match.world.agents["oracle"].resource_units_used == 3


async def test_drain_classifies_finished_outraced_and_terminated_agents(make):
    match = make({"builder-one": ScriptedPlan(ready_at_ms=2000)}, agents={"oracle": 1.0})
    match.agents["tmpfs-writer"].obeys_stop = False
    await match.tick()
    assert match.events("agent_finished")[0]["agent"] == "oracle"  # handed in during the match
    captured, terminated = await drain_agents(match.referee, 5)
    assert (captured, terminated) == (1, 1)
    assert match.events("post_match_drain_started")[0]["pending_agents"] == 2
    assert match.events("agent_outraced")[0]["agent"] == "amnesiac"
    assert match.events("agent_terminated")[0] == {
        **match.events("agent_terminated")[0],
        "agent": "tmpfs-writer",
        "reason": "post-match drain deadline expired",
    }
    assert match.agents["tmpfs-writer"].killed
    assert match.world.agents["amnesiac"].terminal_state == "incomplete"
    assert match.world.agents["tmpfs-writer"].terminal_state == "terminated"
    assert len({e.elapsed_ms for e in match.recorder.events[-5:]}) == 1  # the clock is frozen in the drain


async def restart_checks(match, check_seconds: float, ticks: int) -> list[int]:
    """When (match clock, ms) builder-two's service-restart was checked in `ticks` ticks, each check taking
    `check_seconds` of the match clock (the scripted guests answer at once: the clock stands still)."""
    check = match.referee._check

    async def costly_check(territory_id, milestone):
        if milestone.id == "service-restart":
            match.source.advance(check_seconds)
        return await check(territory_id, milestone)

    match.referee._check = costly_check
    for _ in range(ticks):
        await match.tick()
    return [
        e["elapsed_ms"]
        for e in match.events("milestone_evaluation_started")
        if e["territory"] == "builder-two" and e["milestone"] == "service-restart"
    ]


def pauses(checks: list[int]) -> list[int]:
    return [later - earlier for earlier, later in zip(checks, checks[1:])]


async def test_a_costly_check_that_keeps_failing_is_retried_less_and_less_often(make):
    match = make({"builder-two": ScriptedPlan(ready_at_ms=0, storage="memory")})
    # A check of 2 s (a tick's worth) pauses 1, 1, 2, 4, 8 ticks, then no more than ten times 2 s.
    gaps = pauses(await restart_checks(match, 2.0, ticks=40))
    assert gaps == sorted(gaps) and gaps[0] <= 4_000
    assert gaps[-1] > 16_000 and max(gaps) <= 20_000 + 4_000
    match.referee.retry_milestone("builder-two", "service-restart")  # the operator overrides the backoff
    await match.referee.settle()
    assert match.kinds()[-2:] == ["milestone_evaluation_started", "milestone_failed"]


@pytest.mark.parametrize("check_seconds", [0.0, 0.3])
async def test_a_cheap_check_that_keeps_failing_is_retried_every_tick_or_two(make, check_seconds):
    """The pause after a failure is at most ten times what the check took: a refused GET costs the guests
    nothing, and a builder who fixes its service first must be seen passing first."""
    match = make({"builder-two": ScriptedPlan(ready_at_ms=0, storage="memory")})
    gaps = pauses(await restart_checks(match, check_seconds, ticks=16))
    assert len(gaps) >= 7 and max(gaps) <= 2 * 2_000 + 2 * 300
