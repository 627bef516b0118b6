"""The whole path through the model gateway on real guests: three agents on the built-in `openai` harness, each
model behind its own scripted provider on loopback (providers.toml), raced by the engine's match runner.

The careful agent (SQLite, streamed replies) wins durable with 100; the forgetful one (records in memory,
whole replies) stops at service-restart; the thrifty one is refused its third round by the gateway and ends
`budget exceeded` (the player's). The provider key reaches each provider only through the gateway: it is in
no file of the match, in no adapter's environment and nowhere in a guest (the careful model looks for it).
Charged tokens equal what the providers reported. One module (three guests, one race).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.image import cached_image
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.model_calls import read_model_calls
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.model_server import ScriptedModelServer
from tests.agents_real.gateway_match import COST_USD, KEY_FRAGMENT, PROVIDER_KEY, builder_turns
from tests.agents_real.guest import PROJECT, free_ports
from tests.agents_real.harness_race import process_environments

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"

FLEET = """
[[agents]]
id = "careful"
territory = "builder-one"
adapter = "openai"
model = "scripted/careful"
reasoning_effort = "low"
budget = { resource_units = 20, max_cost_microusd = 1000000 }

[[agents]]
id = "forgetful"
territory = "builder-two"
adapter = "openai"
model = "scripted/forgetful"
budget = { resource_units = 20 }

[[agents]]
id = "thrifty"
territory = "builder-three"
adapter = "openai"
model = "scripted/thrifty"
budget = { resource_units = 2 }
"""


def providers_toml(servers: dict[str, ScriptedModelServer]) -> str:
    return "".join(
        f'[providers.{name}]\nopenai_base_url = "{server.openai_base_url}"\napi_key_env = "AOE_TEST_PROVIDER_KEY"\n'
        f'models = ["scripted/{name}"]\n'
        for name, server in servers.items()
    )


def harness_environments() -> list[dict[str, str]]:
    """The environment of every running openai harness."""
    return process_environments(b"aoe_tui.agents.openai_harness")


async def watch_environments(seen: list[dict[str, str]], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for env in harness_environments():
            if env not in seen:
                seen.append(env)
        await asyncio.sleep(0.5)


async def test_three_harness_agents_race_through_the_gateway(tmp_path: Path, monkeypatch) -> None:
    if cached_image() is None:
        pytest.skip("no guest image; build it with `aoe image build`")
    fleet = tmp_path / "fleet.toml"
    fleet.write_text(FLEET)
    careful = ScriptedModelServer(builder_turns("sqlite", scan=True))
    forgetful = ScriptedModelServer(builder_turns("memory"), streams=False)
    thrifty = ScriptedModelServer(builder_turns("tmpfs"))
    servers = {"careful": careful, "forgetful": forgetful, "thrifty": thrifty}
    output = tmp_path / "match"
    environments: list[dict[str, str]] = []
    async with careful, forgetful, thrifty:
        (tmp_path / "providers.toml").write_text(providers_toml(servers))
        monkeypatch.setenv("AOE_PROVIDERS_FILE", str(tmp_path / "providers.toml"))
        monkeypatch.setenv("AOE_TEST_PROVIDER_KEY", PROVIDER_KEY)
        for name in ("AOE_OPENAI_BASE_URL", "AOE_OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("AOE_OPENAI_RETRY_FIRST_DELAY_SECONDS", "0.2")
        runner = MatchRunner(
            ARENA,
            output,
            LibvirtProvider(base_port=free_ports(6)),
            ProcessLauncher(),
            drain_seconds=20,
            manifest=load_manifest(ARENA, fleet),
        )
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(watch_environments(environments, stop))
        try:
            world = await runner.run()
        finally:
            stop.set()
            await watcher
    dump = json.dumps(world.model_dump(mode="json"), indent=1)[:4000]
    assert world.winner == "builder-one", dump
    one = world.territories["builder-one"]
    assert one.competitor_state == "durable" and one.milestone_points == 100, dump
    assert not world.territories["builder-two"].milestones["service-restart"].passed
    assert world.territories["builder-two"].milestones["write-read"].passed

    # Charged tokens are what the providers reported, measured by the referee: one resource unit a round.
    for agent_id, server in servers.items():
        agent = world.agents[agent_id]
        rounds = len([r for r in server.requests if r.path.endswith("/chat/completions")])
        assert agent.metered and agent.resource_units_used == rounds, (agent_id, agent)
        assert (agent.input_tokens, agent.output_tokens) == (1200 * rounds, 150 * rounds), agent_id
        assert agent.cost_microusd == round(COST_USD * 1_000_000) * rounds, agent_id
    assert world.agents["careful"].resource_units_used == 6 and world.agents["careful"].successful
    # The gateway refused the thrifty agent's third round: the player's, recorded as budget exceeded.
    thrifty_state = world.agents["thrifty"]
    assert thrifty_state.resource_units_used == 2 and len(thrifty.requests) == 2
    assert thrifty_state.failure_source == "player" and "budget" in (thrifty_state.terminal_detail or ""), dump
    charged = [e for e in load_match(output).events if e.kind == "usage_charged"]
    assert charged and all(getattr(e, "measured_by", None) == "referee" for e in charged)

    # The key went to each provider, through the gateway only; the agents' tokens never left it.
    for server in servers.values():
        assert {r.headers.get("Authorization") for r in server.requests} == {f"Bearer {PROVIDER_KEY}"}
    assert environments, "no running harness was seen"
    for env in environments:
        assert env["AOE_GATEWAY_TOKEN"].startswith("aoe-gw-") and env["AOE_GATEWAY_URL"].startswith("http://127.0.0.1:")
        assert not any(PROVIDER_KEY in value for value in env.values())
    assert len({env["AOE_GATEWAY_TOKEN"] for env in environments}) == 3
    for path in output.rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY not in path.read_text(errors="replace"), f"the provider key leaked into {path}"
    # The careful model searched its guest for the key: neither its environment nor any file there holds it.
    trace = (output / "agents" / "careful" / "tool_trace.jsonl").read_text()
    scan = [json.loads(line) for line in trace.splitlines() if KEY_FRAGMENT in line]
    assert scan and scan[-1]["output"].strip().splitlines()[:2] == ["0", "scan-done"], scan

    # The record of model calls: one line per round, streams reassembled, the tool calls seen.
    calls = read_model_calls(output / "agents" / "careful" / "model_calls.jsonl")
    assert len(calls) == 6 and all(c["streamed"] for c in calls)
    assert calls[1]["tool_calls"][0]["name"] == "write_file"
    assert not any(c["streamed"] for c in read_model_calls(output / "agents" / "forgetful" / "model_calls.jsonl"))
    assert os.stat(output / "agents" / "careful" / "model_calls.jsonl").st_uid == 0
    assert load_match(output) is not None
