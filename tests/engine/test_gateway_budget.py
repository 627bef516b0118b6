"""The referee's side of the model gateway: measured charges, budgets held against a harness that ignores them.

A real gateway (aiohttp on loopback) in front of a scripted provider, its meter
answered by a real referee over scripted territories; the test itself plays a
hostile harness that fires more rounds at once than its budget allows.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.agents.protocol import Usage
from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.engine.model_gateway import RefereeMeter
from aoe_tui.testing.model_server import ScriptedModelServer, Turn
from tests.engine.helpers import ScriptedReferee
from tests.engine.test_usage_budget import with_budget

KEY = "sk-local-provider-key-0123456789"


@pytest.fixture
async def gateway_match(tmp_path):
    match = ScriptedReferee(tmp_path, {}, with_budget("oracle", resource_units=2))
    meter = RefereeMeter()
    meter.referee = match.referee
    async with ScriptedModelServer([Turn(text="ok", input_tokens=700, output_tokens=70)] * 20) as upstream:
        gateway = Gateway(meter)
        await gateway.start()
        provider = ProviderConfig("local", KEY, {"openai": upstream.openai_base_url})
        tokens = {
            agent.id: await gateway.add_agent(agent.id, agent.model, provider, tmp_path / "agents" / agent.id)
            for agent in match.manifest.agents
        }
        try:
            yield match, gateway, tokens, upstream
        finally:
            await gateway.close()
            match.close()


async def ask(client: httpx.AsyncClient, gateway: Gateway, token: str, model: str, agent: str = "oracle"):
    return await client.post(
        f"{gateway.url(agent)}/v1/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": "go"}]},
        headers={"Authorization": f"Bearer {token}"},
    )


async def test_rounds_beyond_the_budget_are_refused_even_all_at_once_and_the_player_is_blamed(gateway_match) -> None:
    match, gateway, tokens, upstream = gateway_match
    async with httpx.AsyncClient(timeout=10) as client:
        answers = await asyncio.gather(*(ask(client, gateway, tokens["oracle"], "scripted/oracle") for _ in range(6)))
        later = await ask(client, gateway, tokens["oracle"], "scripted/oracle")
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses == [200, 200, 402, 402, 402, 402]
    assert len(upstream.requests) == 2  # the refused rounds never reached the provider
    refusal = next(answer for answer in answers if answer.status_code == 402).json()
    assert refusal["error"]["type"] == "insufficient_quota" and "budget spent" in refusal["error"]["message"]
    assert later.status_code == 402
    oracle = match.world.agents["oracle"]
    assert (oracle.resource_units_used, oracle.input_tokens, oracle.output_tokens) == (2, 1400, 140)
    assert oracle.metered and oracle.failure_source == "player"
    assert oracle.terminal_detail.startswith("budget exceeded: budget spent: 2 of 2 model rounds")
    assert match.world.agents["amnesiac"].resource_units_used == 0
    charged = match.events("usage_charged")
    assert len(charged) == 2 and all(event["measured_by"] == "referee" for event in charged)


async def test_a_metered_agents_own_report_is_kept_beside_never_charged(gateway_match) -> None:
    match, gateway, tokens, _ = gateway_match
    async with httpx.AsyncClient(timeout=10) as client:
        assert (await ask(client, gateway, tokens["amnesiac"], "scripted/in-memory", "amnesiac")).status_code == 200
    lying = match.agents["amnesiac"]
    lying.usage = lambda: Usage(resource_units=0, input_tokens=1, output_tokens=1, cost_microusd=0)
    match.referee.charge_usage()
    match.referee.charge_usage()  # the same report is recorded once
    amnesiac = match.world.agents["amnesiac"]
    assert (amnesiac.resource_units_used, amnesiac.input_tokens, amnesiac.output_tokens) == (1, 700, 70)
    assert (amnesiac.reported_input_tokens, amnesiac.reported_output_tokens) == (1, 1)
    assert len(match.events("usage_reported")) == 1


async def test_another_model_than_the_agents_is_refused(gateway_match) -> None:
    match, gateway, tokens, upstream = gateway_match
    async with httpx.AsyncClient(timeout=10) as client:
        answer = await ask(client, gateway, tokens["oracle"], "expensive/frontier-model")
    assert answer.status_code == 400 and "is not this agent's model" in json.dumps(answer.json())
    assert not upstream.requests and match.world.agents["oracle"].resource_units_used == 0


async def test_a_failure_of_the_gateway_itself_is_the_arenas_in_the_log(gateway_match, monkeypatch) -> None:
    """A bug of ours answers 500 and is recorded as an infrastructure failure naming the territory, never the
    player's; the round the provider answered (and billed) still counts, its tokens unknown."""
    match, gateway, tokens, _ = gateway_match

    def broken(document):
        raise RuntimeError("a bug in the usage reader")

    monkeypatch.setattr("aoe_tui.agents.wire.openai_chat.body_usage", broken)
    async with httpx.AsyncClient(timeout=10) as client:
        answer = await ask(client, gateway, tokens["oracle"], "scripted/oracle")
    assert answer.status_code == 500 and "the model gateway failed: RuntimeError" in answer.text
    (failure,) = match.events("infrastructure_failure")
    assert (failure["component"], failure["source"], failure["territory"]) == ("gateway", "arena", "builder-one")
    oracle = match.world.agents["oracle"]
    assert (oracle.resource_units_used, oracle.tokens_known, oracle.failure_source) == (1, False, None)


async def test_a_token_budget_refuses_the_round_after_it_is_spent(tmp_path) -> None:
    """`max_tokens` counts input plus output as the gateway measured them: 770 a round, 1,000 allowed."""
    match = ScriptedReferee(tmp_path, {}, with_budget("oracle", max_tokens=1000))
    meter = RefereeMeter()
    meter.referee = match.referee
    async with ScriptedModelServer([Turn(text="ok", input_tokens=700, output_tokens=70)] * 5) as upstream:
        gateway = Gateway(meter)
        await gateway.start()
        provider = ProviderConfig("local", KEY, {"openai": upstream.openai_base_url})
        token = await gateway.add_agent("oracle", "scripted/oracle", provider, tmp_path / "agents" / "oracle")
        try:
            async with httpx.AsyncClient(timeout=10) as client:
                statuses = [(await ask(client, gateway, token, "scripted/oracle")).status_code for _ in range(3)]
        finally:
            await gateway.close()
            match.close()
    assert statuses == [200, 200, 402]  # 770, then 1,540 >= 1,000: the third is refused
    oracle = match.world.agents["oracle"]
    assert oracle.terminal_detail == "budget exceeded: 1540 tokens used of 1000; stopped by the referee"
