"""Reducer rules, one event story at a time."""

import json

from aoe_tui.domain.events import make_event
from aoe_tui.domain.reducer import reduce
from aoe_tui.domain.world import MilestonePause, World


class Story:
    def __init__(self):
        self.events = []

    def add(self, kind, elapsed_ms=0, **fields):
        self.events.append(make_event(kind, len(self.events), elapsed_ms, **fields))
        return self

    def world(self):
        return reduce(self.events)


def started():
    return (
        Story()
        .add("match_state_changed", **{"from": "preparing", "to": "running"})
        .add("territory_registered", territory="t1", agent="a1", **{"class": "builder"})
        .add("agent_started", agent="a1", territory="t1", model="m")
    )


def test_pass_adds_points_only_once_and_clears_failure():
    world = (
        started()
        .add("milestone_evaluation_started", 100, territory="t1", milestone="up")
        .add(
            "milestone_failed",
            200,
            territory="t1",
            milestone="up",
            category="verification_failed",
            detail="refused",
            retryable=True,
        )
        .add("milestone_passed", 300, territory="t1", milestone="up", points=10, evidence={"ok": 1})
        .add("milestone_passed", 400, territory="t1", milestone="up", points=10, evidence={"ok": 2})
        .world()
    )
    territory = world.territories["t1"]
    milestone = territory.milestones["up"]
    assert territory.milestone_points == 10
    assert milestone.passed and not milestone.evaluating
    assert milestone.failure_category is None and milestone.failure_detail is None
    assert milestone.evidence == {"ok": 2}
    assert milestone.attempts == 1 and milestone.failures == 1 and milestone.passed_at_ms == 300


def test_revoke_subtracts_points():
    world = (
        started()
        .add("milestone_passed", 10, territory="t1", milestone="up", points=10, evidence=None)
        .add("milestone_revoked", 20, territory="t1", milestone="up", reason="re-verification failed")
        .world()
    )
    assert world.territories["t1"].milestone_points == 0
    assert not world.territories["t1"].milestones["up"].passed


def test_durable_sets_state_and_time():
    world = started().add("durable_deployment_completed", 4242, territory="t1").world()
    assert world.territories["t1"].competitor_state == "durable"
    assert world.territories["t1"].durable_at_ms == 4242


def test_agent_terminal_states():
    story = started()
    for agent in ("b", "c", "d", "e"):
        story.add("agent_started", agent=agent, territory="t1", model="m")
    world = (
        story.add("agent_finished", agent="a1", source="player", success=True, detail="done")
        .add("agent_interrupted", agent="b", source="arena", detail="reboot")
        .add("agent_outraced", agent="c", reason="t1 won")
        .add("agent_terminated", agent="d", reason="deadline")
        .add("agent_finished", agent="e", source="harness", success=False, detail="crash")
        .world()
    )
    states = {a: (s.terminal_state, s.successful, s.failure_source) for a, s in world.agents.items()}
    assert states == {
        "a1": ("completed", True, "player"),
        "b": ("interrupted", None, "arena"),
        "c": ("incomplete", False, "player"),
        "d": ("terminated", None, "controller"),
        "e": ("failed", False, "harness"),
    }
    assert not any(s.running for s in world.agents.values())


def test_usage_null_counts_as_zero_and_known_flags():
    world = (
        started()
        .add("usage_charged", agent="a1", resource_units=1, input_tokens=None, output_tokens=None, cost_microusd=None)
        .world()
    )
    agent = world.agents["a1"]
    assert (agent.input_tokens, agent.cost_microusd, agent.tokens_known, agent.cost_known) == (0, 0, False, False)
    world = (
        started()
        .add("usage_charged", agent="a1", resource_units=2, input_tokens=5, output_tokens=7, cost_microusd=9)
        .add("usage_charged", agent="a1", resource_units=1, input_tokens=1, output_tokens=1, cost_microusd=1)
        .world()
    )
    agent = world.agents["a1"]
    assert (agent.resource_units_used, agent.input_tokens, agent.output_tokens, agent.cost_microusd) == (3, 6, 8, 10)
    assert agent.tokens_known and agent.cost_known


def test_agent_started_resets_agent():
    world = (
        started()
        .add("agent_finished", agent="a1", source="player", success=False, detail="x")
        .add("agent_started", agent="a1", territory="t1", model="m2")
        .world()
    )
    agent = world.agents["a1"]
    assert agent.running and agent.terminal_state is None and agent.model == "m2"


def test_match_finished_keeps_aborted():
    world = (
        started()
        .add("match_state_changed", **{"from": "running", "to": "aborted"})
        .add("match_finished", winner=None, reason="aborted by operator")
        .world()
    )
    assert world.match_state == "aborted"
    assert started().add("match_finished", winner="t1", reason="durable").world().match_state == "finished"


def test_operator_pauses():
    world = (
        started()
        .add("match_paused", reason="look")
        .add("milestone_paused", territory="t1", milestone="up")
        .add("milestone_paused", territory=None, milestone="down")
        .world()
    )
    assert world.paused
    assert world.is_milestone_paused("t1", "up") and not world.is_milestone_paused("t2", "up")
    assert world.is_milestone_paused("t2", "down")
    world = (
        started()
        .add("milestone_paused", territory="t1", milestone="up")
        .add("milestone_resumed", territory=None, milestone="up")
        .add("match_paused")
        .add("match_resumed", paused_ms=5)
        .world()
    )
    assert not world.is_milestone_paused("t1", "up") and not world.paused


def test_milestone_pauses_are_saved_as_territory_slash_milestone_and_read_back():
    world = (
        started()
        .add("milestone_paused", territory="t1", milestone="up")
        .add("milestone_paused", territory=None, milestone="down")
        .add("milestone_paused", territory="t2", milestone="down")
        .world()
    )
    saved = json.dumps(world.to_json())
    assert world.to_json()["paused_milestones"] == ["t1/up", "*/down", "t2/down"]
    assert json.dumps(World.model_validate_json(saved).to_json()) == saved
    assert World.model_validate_json(saved).paused_milestones == [
        MilestonePause(territory="t1", milestone="up"),
        MilestonePause(territory=None, milestone="down"),
        MilestonePause(territory="t2", milestone="down"),
    ]
    # one territory's resume leaves the arena-wide pause; resuming for all ends every pause of that milestone
    assert [str(p) for p in world.pauses_lifted_by("t2", "down")] == ["t2/down"]
    assert [str(p) for p in world.pauses_lifted_by(None, "down")] == ["*/down", "t2/down"]
    assert world.pauses_lifted_by("t2", "up") == []
    resumed = (
        started()
        .add("milestone_paused", territory="t2", milestone="down")
        .add("milestone_paused", territory=None, milestone="down")
        .add("milestone_resumed", territory="t2", milestone="down")
        .world()
    )
    assert resumed.to_json()["paused_milestones"] == ["*/down"]


def test_infrastructure_failures_are_counted_and_conquest_fields():
    world = (
        started()
        .add("infrastructure_failure", component="libvirt", source="arena", detail="domain crashed")
        .add("health_observed", territory="t1", healthy=True, status=200, latency_ms=3, detail="ok")
        .add("resources_changed", territory="t1", delta=-5, remaining=95, reason="unhealthy tick")
        .add("territory_eliminated", territory="t1", source="player", detail="out of resources")
        .world()
    )
    territory = world.territories["t1"]
    assert world.infrastructure_failures == 1
    assert territory.resources == 95 and territory.last_health.status == 200
    assert (territory.state, territory.elimination_source) == ("eliminated", "player")


def test_standings_order_and_tie():
    world = (
        started()
        .add("territory_registered", territory="t2", agent="a2", **{"class": "builder"})
        .add("territory_registered", territory="t3", agent="a3", **{"class": "builder"})
        .add("milestone_passed", 10, territory="t2", milestone="up", points=10, evidence=None)
        .add("milestone_passed", 20, territory="t3", milestone="up", points=10, evidence=None)
        .add("milestone_passed", 30, territory="t3", milestone="rw", points=20, evidence=None)
        .add("durable_deployment_completed", 40, territory="t1")
        .world()
    )
    assert world.standings() == ["t1", "t3", "t2"]
