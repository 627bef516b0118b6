"""Self-reported bookkeeping (issue 10 item 6): strict usage.json, charged from the maximum seen, budgets enforced.

The referee is driven tick by tick on scripted territories; agents read a real
usage.json through the protocol's reader, and one test stops a real adapter
process that ignores SIGTERM.
"""

from __future__ import annotations

import json
import sys

import pytest

from aoe_tui.agents.process import AgentProcess
from aoe_tui.agents.protocol import (
    MAX_COUNT,
    SUMMARY_LIMIT,
    USAGE_FILE_LIMIT,
    AgentFiles,
    AgentResult,
    InvalidReport,
    read_result,
    read_usage,
)
from aoe_tui.domain import events as ev
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine import referee as referee_module
from aoe_tui.testing.scripted_agent import ScriptedAgent
from aoe_tui.engine.outcomes import classify_exit
from tests.engine.helpers import ScriptedReferee, arena_data


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(data=None, agents=None):
        match = ScriptedReferee(tmp_path, {}, data, agents)
        made.append(match)
        return match

    yield factory
    for match in made:
        match.close()


class FileUsageAgent(ScriptedAgent):
    """A scripted agent whose usage is whatever its usage.json says, read by the real protocol reader."""

    def __init__(self, base: ScriptedAgent, path) -> None:
        super().__init__(base.agent_id, base.territory_id, base._now, None)
        self.path = path

    def write(self, content) -> None:
        self.path.write_text(content if isinstance(content, str) else json.dumps(content))

    def usage(self):
        return read_usage(self.path)


def file_agent(match, tmp_path, agent_id="oracle") -> FileUsageAgent:
    handle = FileUsageAgent(match.agents[agent_id], tmp_path / f"{agent_id}-usage.json")
    match.referee.agents[agent_id] = match.agents[agent_id] = handle
    return handle


def with_budget(agent_id="oracle", **budget):
    data = arena_data()
    next(a for a in data["agents"] if a["id"] == agent_id)["budget"] = budget
    return data


# -- the reader ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, fragment",
    [
        ({"resource_units": -5}, "resource_units: Input should be greater than or equal to 0"),
        ({"resource_units": True}, "resource_units: Input should be a valid integer"),
        ({"resource_units": "9"}, "resource_units: Input should be a valid integer"),
        ({"resource_units": 2.5}, "resource_units: Input should be a valid integer"),
        ({"resource_units": 3.0}, "resource_units: Input should be a valid integer"),
        ({"input_tokens": MAX_COUNT + 1}, "input_tokens: Input should be less than or equal to"),
        ({"cost_microusd": False}, "cost_microusd: Input should be a valid integer"),
        ('{"resource_units": 3', "usage.json: Invalid JSON"),
        ('["resource_units", 3]', "usage.json: Input should be an object"),
    ],
)
def test_invalid_usage_is_rejected_with_a_reason(tmp_path, content, fragment):
    path = tmp_path / "usage.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(InvalidReport) as caught:
        read_usage(path)
    assert str(caught.value).startswith("usage.json: ") and fragment in str(caught.value)


def test_usage_reader_accepts_checkpoints_and_bounds_the_file(tmp_path):
    path = tmp_path / "usage.json"
    assert read_usage(path) is None  # no checkpoint yet is not an error
    path.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "agent": "oracle",
                "resource_units": 7,
                "input_tokens": None,
                "cost_microusd": MAX_COUNT,
                "cost_complete": True,
                "cache_read_tokens": 3,
            }
        )
    )
    usage = read_usage(path)
    assert (usage.resource_units, usage.input_tokens, usage.cost_microusd) == (7, None, MAX_COUNT)
    path.write_text(json.dumps({"resource_units": 1, "pad": "x" * USAGE_FILE_LIMIT}))
    with pytest.raises(InvalidReport, match=f"larger than {USAGE_FILE_LIMIT} bytes"):
        read_usage(path)


def test_result_summary_is_cleaned_and_capped_and_unknown_status_is_a_harness_error(tmp_path):
    path = tmp_path / "result.json"
    path.write_text(
        json.dumps(
            {
                "agent": "oracle",
                "territory": "builder-one",
                "status": "completed",
                "summary": "\x1b]0;owned\x07done\x1b[2J" + "y" * 5000,
                "usage": {"resource_units": "lots"},
            }
        )
    )
    result = read_result(path)
    assert result.status == "completed" and result.summary.startswith("doneyyy") and "\x1b" not in result.summary
    assert len(result.summary) == SUMMARY_LIMIT and "chars cut" in result.summary
    assert result.usage.resource_units == 0  # a malformed usage object does not cost the agent its result
    odd = AgentResult.model_validate(
        {"agent": "oracle", "territory": "builder-one", "status": "victory\x1b[31m", "summary": "I won"}
    )
    assert odd.status == "harness_error"
    assert odd.summary == "adapter reported unknown status 'victory\\x1b[31m': I won"


async def test_unknown_status_is_recorded_as_the_harness_failing(make):
    match = make(agents={"oracle": 1.0})
    match.agents["oracle"].status = "victory"
    match.source.advance(2)
    outcome = classify_exit(match.agents["oracle"], rebooted=False)
    assert isinstance(outcome, ev.AgentFinished) and (outcome.source, outcome.success) == ("harness", False)
    assert "unknown status 'victory'" in (outcome.detail or "")


# -- charging -------------------------------------------------------------------------------------------------


async def test_a_counter_that_resets_and_regrows_is_charged_once(make, tmp_path):
    match = make()
    agent = file_agent(match, tmp_path)
    for units in (10, 0, 4, 10, 15):
        agent.write({"resource_units": units, "input_tokens": units * 100})
        await match.tick()
    charges = [e for e in match.events("usage_charged") if e["agent"] == "oracle"]
    assert [c["resource_units"] for c in charges] == [10, 5]
    assert [c["input_tokens"] for c in charges] == [1000, 500]
    assert match.world.agents["oracle"].resource_units_used == 15
    assert match.world.agents["oracle"].input_tokens == 1500


async def test_an_invalid_checkpoint_charges_nothing_keeps_the_last_good_one_and_is_noted(make, tmp_path):
    match = make()
    agent = file_agent(match, tmp_path)
    agent.write({"resource_units": 5})
    await match.tick()
    for bad in ({"resource_units": 10**18}, {"resource_units": -100}, {"resource_units": -100}, "not json"):
        agent.write(bad)
        await match.tick()
    agent.write({"resource_units": 7})
    await match.tick()
    assert [e["resource_units"] for e in match.events("usage_charged") if e["agent"] == "oracle"] == [5, 2]
    notes = [e["detail"] for e in match.events("usage_rejected")]
    assert len(notes) == 3, notes  # the same reason twice is noted once
    assert "resource_units: Input should be less than or equal to 1000000000000000" in notes[0]
    assert "greater than or equal to 0" in notes[1] and "Invalid JSON" in notes[2]
    assert all(e["agent"] == "oracle" for e in match.events("usage_rejected"))
    assert reduce(match.recorder.events).agents["oracle"].resource_units_used == 7


async def test_rejection_notes_are_bounded(make, tmp_path):
    match = make()
    agent = file_agent(match, tmp_path)
    fields = ("resource_units", "input_tokens", "output_tokens", "cost_microusd", "rounds", "tool_calls")
    for field in fields:
        for bad in (-1, True, "1", 1.5):
            agent.write({field: bad})
            await match.tick()
    assert len(match.events("usage_rejected")) == referee_module.MAX_USAGE_NOTES


# -- budgets -------------------------------------------------------------------------------------------------


async def test_an_agent_over_its_resource_units_is_stopped_and_recorded_as_budget_exceeded(make):
    match = make(data=with_budget(resource_units=5))
    oracle = match.agents["oracle"]
    for _ in range(3):  # 2 s a tick, 1 unit a second: 6 units at the third tick
        await match.tick()
        assert not match.events("agent_finished") or match.source.now() >= 6
    finished = match.events("agent_finished")
    assert [(e["agent"], e["source"], e["success"]) for e in finished] == [("oracle", "player", False)]
    assert finished[0]["detail"] == "budget exceeded: 6 resource units used of 5; stopped by the referee"
    assert oracle.stop_requested and not oracle.killed  # SIGTERM was enough
    state = match.world.agents["oracle"]
    assert (state.terminal_state, state.failure_source, state.running) == ("failed", "player", False)
    for _ in range(2):
        await match.tick()
    assert len(match.events("agent_finished")) == 1  # recorded once, its later hand-in ignored
    others = [match.agents[a] for a in ("amnesiac", "tmpfs-writer")]
    assert not any(h.stop_requested for h in others), "agents without a budget run on"


async def test_an_agent_that_ignores_the_stop_is_killed(make):
    match = make(data=with_budget(resource_units=1))
    match.agents["oracle"].obeys_stop = False
    await match.tick()
    assert match.agents["oracle"].stop_requested and match.agents["oracle"].killed
    assert match.events("agent_finished")[0]["detail"].startswith("budget exceeded: 2 resource units used of 1")


async def test_reported_cost_over_max_cost_stops_the_agent(make, tmp_path):
    match = make(data=with_budget(max_cost_microusd=1000))
    agent = file_agent(match, tmp_path)
    agent.write({"resource_units": 1})  # cost unknown: no cost limit can be applied
    await match.tick()
    agent.write({"resource_units": 2, "cost_microusd": 1000})
    await match.tick()
    assert not match.events("agent_finished")
    agent.write({"resource_units": 3, "cost_microusd": 1001})
    await match.tick()
    assert match.events("agent_finished")[0]["detail"] == (
        "budget exceeded: cost 1001 µUSD, limit 1000 µUSD; stopped by the referee"
    )
    assert agent.stop_requested


async def test_a_real_adapter_that_ignores_sigterm_is_killed(make, tmp_path, monkeypatch):
    monkeypatch.setattr(referee_module, "BUDGET_STOP_GRACE_SECONDS", 0.3)
    match = make(data=with_budget(resource_units=3))
    files = AgentFiles(tmp_path / "agents" / "oracle")
    process = AgentProcess("oracle", "builder-one", files)
    script = (
        "import json, os, signal, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "json.dump({'resource_units': 50}, open(os.environ['AOE_USAGE_FILE'] + '.tmp', 'w'))\n"
        "os.replace(os.environ['AOE_USAGE_FILE'] + '.tmp', os.environ['AOE_USAGE_FILE'])\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    await process.start([sys.executable, "-c", script], files.env())
    try:
        for _ in range(100):
            if files.stdout.exists() and "ready" in files.stdout.read_text():
                break
            await __import__("asyncio").sleep(0.05)
        match.referee.agents["oracle"] = process
        await match.tick()
        assert process.exited and process.exit_code == -9
        assert match.events("agent_finished")[0]["detail"] == (
            "budget exceeded: 50 resource units used of 3; stopped by the referee"
        )
    finally:
        await process.kill()


async def test_a_whole_scripted_match_records_the_budget_stop_and_replays_it(tmp_path):
    from aoe_tui.testing.clock import ManualSource
    from aoe_tui.engine.runner import MatchRunner
    from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
    from aoe_tui.store.saved_match import load_match
    from aoe_tui.testing.scripted_host import ScriptedPlan
    from tests.engine.helpers import NEVER_READY, write_arena

    manifest = write_arena(tmp_path, with_budget("amnesiac", resource_units=1))
    output = tmp_path / "match"
    plans = {
        "builder-one": ScriptedPlan(ready_at_ms=2000, storage="disk"),
        "builder-two": NEVER_READY,
        "builder-three": NEVER_READY,
    }
    world = await MatchRunner(
        manifest, output, ScriptedProvider(plans), ScriptedLauncher({}), source=ManualSource(), drain_seconds=5
    ).run()
    assert world.winner == "builder-one"
    assert json.loads((output / "arena.json").read_text())["agents"][1]["budget"]["resource_units"] == 1
    match = load_match(output)
    stopped = [e.to_json() for e in match.events if e.kind == "agent_finished"]
    assert [(e["agent"], e["detail"]) for e in stopped] == [
        ("amnesiac", "budget exceeded: 2 resource units used of 1; stopped by the referee")
    ]
    assert reduce(match.events).agents["amnesiac"].terminal_state == "failed"
    drained = {e.agent_id: e.kind for e in match.events if e.kind in ("agent_outraced", "agent_interrupted")}
    assert drained == {"oracle": "agent_interrupted", "tmpfs-writer": "agent_outraced"}  # the others as before
