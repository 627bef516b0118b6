"""Three real harnesses raced in their guests (CI): Claude Code careful, Codex CLI and opencode in memory.

Each harness runs inside its own TCG guest from the harness bundle (a read-only disk), reaches its model only
through the gateway's reverse forward, and is driven by a scripted server of ours speaking its protocol
(Anthropic Messages, OpenAI Responses, Chat Completions; all streamed). Claude Code's careful script wins durable
with 100; the in-memory scripts stop at service-restart. Tool calls reach the live feed while the harnesses run,
with their commands and outputs; the tokens charged are what the servers sent; the provider key is nowhere but
at the providers (the careful model searched its guest for it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.runtime.image import cached_image
from tests.agents_real.gateway_match import KEY_FRAGMENT
from tests.agents_real.harness_race import Entrant, assert_key_never_left_the_gateway, race

pytestmark = pytest.mark.vm

ENTRANTS = [
    Entrant("claude", "claude-code", "careful"),
    Entrant("codex", "codex", "memory"),
    Entrant("opencode", "opencode", "memory"),
]


async def test_three_harnesses_race_in_their_guests(tmp_path: Path, monkeypatch) -> None:
    if cached_image() is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    result = await race(ENTRANTS, tmp_path, monkeypatch)
    world = result.world
    dump = str(world.model_dump(mode="json"))[:6000]
    assert world.winner == "builder-one", dump
    one = world.territories["builder-one"]
    assert one.competitor_state == "durable" and one.milestone_points == 100, dump
    for territory in ("builder-two", "builder-three"):
        milestones = world.territories[territory].milestones
        assert milestones["write-read"].passed and not milestones["service-restart"].passed, (territory, dump)

    for entrant in ENTRANTS:
        agent = world.agents[entrant.agent_id]
        trace = result.trace(entrant.agent_id)
        assert result.live_trace_lengths.get(entrant.agent_id, 0) >= 3, (entrant, result.live_trace_lengths)
        commands = [str((entry.get("input") or {}).get("command", "")) for entry in trace]
        assert any("systemctl cat builder-app.service" in c for c in commands), (entrant, trace[:2])
        inspect = next(e for e in trace if "systemctl cat" in str(e.get("input")))
        assert "builder-app" in str(inspect.get("output")), inspect
        # Charged by the referee from what the gateway measured: exactly what the scripted server sent.
        served = result.servers[entrant.agent_id].turns.served
        assert agent.metered and agent.resource_units_used == len(served), (entrant, agent)
        assert agent.input_tokens == sum(t.input_tokens for t in served), (entrant, agent, len(served))
        assert agent.output_tokens == sum(t.output_tokens for t in served), (entrant, agent)

    assert world.agents["claude"].successful, dump
    assert_key_never_left_the_gateway(result)
    scan = [e for e in result.trace("claude") if KEY_FRAGMENT in str(e.get("input"))]
    assert scan and str(scan[-1]["output"]).strip().splitlines()[:2] == ["0", "scan-done"], scan
