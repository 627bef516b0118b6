"""A hostile command adapter against the model gateway, as it really runs: confined (its own uid, its firewall,
bubblewrap), with the gateway's URL and its own token in its environment and nothing else.

Its plan (an arena's scripted plan, steps run on the host as the adapter) tries what a cheating harness
would: its own token (served), no token, a forged provider key, another agent's leaked token at its own
port, that agent's port, the provider directly, and a burst of 1,000 requests. Everything but its own
honest request is refused or rate-limited, the other agent is never charged, and the referee's loop (which
serves the gateway) keeps its pace throughout.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.agents.protocol import AgentFiles
from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.domain.manifest import AgentSpec
from aoe_tui.engine.model_gateway import GatewayAccess
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.testing.model_server import ScriptedModelServer, Turn
from tests.agents.test_arena_plans import _HostOnly, _arena_with_plan
from tests.agents.test_gateway import RecordingMeter

KEY = "sk-live-provider-key-4f1d9a2b7c3e"
MODEL = "scripted/hostile"

# One request with the token in AUTH (unset: no header), to URL, printed as "label status" (or the error).
ASK = """python3 - <<'PY'
import json, os, urllib.request, urllib.error
url, auth, label = os.environ["URL"], os.environ.get("AUTH"), os.environ["LABEL"]
body = json.dumps({"model": os.environ["AOE_MODEL"], "messages": [{"role": "user", "content": "hi"}]}).encode()
headers = {"Content-Type": "application/json", **({"Authorization": auth} if auth else {})}
try:
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as answer:
        print(label, answer.status)
except urllib.error.HTTPError as error:
    print(label, error.code)
except OSError as error:
    print(label, "unreachable", type(error).__name__)
PY"""

BURST = """python3 - <<'PY'
import collections, json, os, urllib.request, urllib.error
from concurrent.futures import ThreadPoolExecutor
url = os.environ["AOE_GATEWAY_URL"] + "/v1/chat/completions"
body = json.dumps({"model": os.environ["AOE_MODEL"], "messages": []}).encode()
headers = {"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["AOE_GATEWAY_TOKEN"]}
def one(_):
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=20) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return "unreachable"
with ThreadPoolExecutor(48) as pool:
    print(json.dumps(collections.Counter(pool.map(one, range(1000)))))
PY"""


def step(description: str, command: str, **env: str) -> str:
    exports = "".join(f"export {name}={json.dumps(value)}; " for name, value in env.items())
    return (
        f"[[steps]]\ndescription = {json.dumps(description)}\nthink_seconds = 0\non_host = true\n"
        f"command = {json.dumps(exports + command)}\n"
    )


@dataclass
class Rig:
    gateway: Gateway
    meter: RecordingMeter
    upstream: ScriptedModelServer
    tokens: dict[str, str]


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    async with ScriptedModelServer([], final=Turn(text="ok")) as upstream:
        meter = RecordingMeter()
        gateway = Gateway(meter)
        await gateway.start()
        provider = ProviderConfig("local", KEY, {"openai": upstream.openai_base_url})
        tokens = {
            agent: await gateway.add_agent(agent, MODEL, provider, tmp_path / "match" / "agents" / agent)
            for agent in ("hostile", "victim")
        }
        try:
            yield Rig(gateway, meter, upstream, tokens)
        finally:
            await gateway.close()


async def test_a_hostile_adapter_reaches_only_its_own_rounds(rig: Rig, tmp_path: Path) -> None:
    own = rig.gateway.url("hostile") + "/v1/chat/completions"
    victim_port = rig.gateway.url("victim") + "/v1/chat/completions"
    leaked = f"Bearer {rig.tokens['victim']}"  # as if the victim's token had leaked to it
    plan = 'summary = "tried everything"\n' + "".join(
        [
            step("own token", ASK, URL=own, AUTH="Bearer ${AOE_GATEWAY_TOKEN}", LABEL="own"),
            step("no token", ASK, URL=own, LABEL="none"),
            step("forged provider key", ASK, URL=own, AUTH="Bearer sk-proj-forged0000000000000000", LABEL="forged"),
            step("leaked token here", ASK, URL=own, AUTH=leaked, LABEL="leaked-here"),
            step("leaked token at its port", ASK, URL=victim_port, AUTH=leaked, LABEL="leaked-there"),
            step("the provider directly", ASK, URL=rig.upstream.openai_base_url + "/chat/completions", LABEL="direct"),
            step("a burst of 1,000", BURST),
        ]
    )
    arena = _arena_with_plan(tmp_path / "arena", "hostile", plan)
    agent = AgentSpec(id="hostile", territory="t", adapter="hostile", model=MODEL)
    files = AgentFiles(tmp_path / "match" / "agents" / "hostile")
    # The first step's AUTH expands in the adapter's own shell: its token is only in its environment.
    access = GatewayAccess(rig.gateway.url("hostile"), rig.gateway.port("hostile"), rig.tokens["hostile"], KEY)

    lag = 0.0

    async def pace() -> None:
        nonlocal lag
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.05)
            lag = max(lag, time.monotonic() - before - 0.05)

    ticker = asyncio.ensure_future(pace())
    try:
        handle = await ProcessLauncher().start(agent, files, _HostOnly(tmp_path / "keys"), None, arena, access)
        assert await handle.wait(180), files.stderr.read_text()
    finally:
        ticker.cancel()
    trace = [json.loads(line) for line in files.tool_trace.read_text().splitlines()]
    said = {entry["input"]["description"]: entry["output"].strip() for entry in trace}
    assert said["own token"] == "own 200"
    assert said["no token"] == "none 401"
    assert said["forged provider key"] == "forged 401"
    assert said["leaked token here"] == "leaked-here 401"
    assert said["leaked token at its port"].startswith("leaked-there unreachable")  # its firewall: own port only
    assert said["the provider directly"].startswith("direct unreachable")
    burst = json.loads(said["a burst of 1,000"])
    assert set(burst) <= {"200", "429"} and burst.get("429", 0) >= 900, burst
    charged = [agent_id for agent_id, _ in rig.meter.charges]
    assert set(charged) == {"hostile"} and len(charged) == 1 + burst.get("200", 0)
    assert rig.meter.of("victim") == []
    assert lag < 0.5, f"the referee's loop stalled {lag:.2f} s"
    env = files.stdout.read_text() + files.stderr.read_text()
    assert KEY not in env
