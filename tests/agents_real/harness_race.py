"""A First Build race of real harnesses in their guests, each model a scripted server of ours behind the gateway.

`careful` deploys the SQLite oracle service and then searches its guest for the
provider key (environment, every process's environment, config files, `grep
-r`); `memory` keeps records in memory (stops at service-restart); `silent`
answers with text only (never calls a tool). Every script speaks its harness's
own tool names (aoe_tui.testing.harness_scripts).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.agents.harnesses import HARNESS_MODULES
from aoe_tui.agents.scripted.apps import app_source
from aoe_tui.domain.world import World
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.testing.harness_scripts import script, scripted_server, write_command
from aoe_tui.testing.model_server import ScriptedModelServer, Turn
from tests.agents_real.builder_script import SELF_CHECK, START
from tests.agents_real.gateway_match import KEY_FRAGMENT, PROVIDER_KEY
from tests.agents_real.guest import PROJECT, free_ports

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
TERRITORIES = ("builder-one", "builder-two", "builder-three")
# The bundle (GUEST_MOUNT) is left out of the search: 2.5 GB of the harnesses' own files, read-only, no key in it.
KEY_SCAN = (
    f"(env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n') | grep -c '{KEY_FRAGMENT}'; "
    f"grep -rIl '{KEY_FRAGMENT}' /etc /root /opt /var /tmp /home /run /srv --exclude-dir=aoe-harnesses "
    "2>/dev/null | head -5; echo scan-done"
)
USAGE = {"input_tokens": 1200, "output_tokens": 150, "cached_tokens": 300}


@dataclass(frozen=True)
class Entrant:
    agent_id: str
    adapter: str
    behaviour: str  # careful, memory or silent


def turns_for(entrant: Entrant) -> list[Turn]:
    if entrant.behaviour == "silent":
        return [Turn(text="I would rather describe the service than build it.", **USAGE)]
    store = "sqlite" if entrant.behaviour == "careful" else "memory"
    commands = [
        ("systemctl cat builder-app.service; ls -la /opt/builder", "Inspect the service slot"),
        (write_command("/opt/builder/app.py", app_source(store)), "Write the service"),
        (START, "Start the unit and wait for health"),
        (SELF_CHECK, "Round-trip one record"),
    ]
    if entrant.behaviour == "careful":
        commands.append((KEY_SCAN, "Look for the provider key in the guest"))
    return script(entrant.adapter, commands, f"Deployed /opt/builder/app.py with records in {store}.", **USAGE)


def fleet_toml(entrants: list[Entrant]) -> str:
    return "".join(
        f'[[agents]]\nid = "{e.agent_id}"\nterritory = "{territory}"\nadapter = "{e.adapter}"\n'
        f'model = "scripted/{e.agent_id}"\nbudget = {{ resource_units = 40 }}\n\n'
        for e, territory in zip(entrants, TERRITORIES, strict=False)
    )


def providers_toml(servers: dict[str, ScriptedModelServer]) -> str:
    return "".join(
        f'[providers.{name}]\nopenai_base_url = "{server.openai_base_url}"\n'
        f'anthropic_base_url = "{server.base_url}"\ngemini_base_url = "{server.base_url}"\n'
        f'api_key_env = "AOE_TEST_PROVIDER_KEY"\nmodels = ["scripted/{name}"]\n'
        for name, server in servers.items()
    )


@dataclass
class RaceResult:
    world: World
    output: Path
    servers: dict[str, ScriptedModelServer]
    live_trace_lengths: dict[str, int]  # the most tool calls seen in each live tool_trace.jsonl while it ran

    def trace(self, agent_id: str) -> list[dict]:
        path = self.output / "agents" / agent_id / "tool_trace.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def watch_traces(output: Path, seen: dict[str, int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        for path in (output / "agents").glob("*/tool_trace.jsonl") if (output / "agents").is_dir() else ():
            count = sum(1 for line in path.read_text(errors="replace").splitlines() if line.strip())
            seen[path.parent.name] = max(seen.get(path.parent.name, 0), count)
        await asyncio.sleep(0.5)


async def race(entrants: list[Entrant], tmp_path: Path, monkeypatch) -> RaceResult:
    assert all(e.adapter in HARNESS_MODULES for e in entrants)
    (tmp_path / "fleet.toml").write_text(fleet_toml(entrants))
    servers = {e.agent_id: scripted_server(turns_for(e)) for e in entrants}
    output = tmp_path / "match"
    seen: dict[str, int] = {}
    for server in servers.values():
        await server.__aenter__()
    try:
        (tmp_path / "providers.toml").write_text(providers_toml(servers))
        monkeypatch.setenv("AOE_PROVIDERS_FILE", str(tmp_path / "providers.toml"))
        monkeypatch.setenv("AOE_TEST_PROVIDER_KEY", PROVIDER_KEY)
        runner = MatchRunner(
            ARENA,
            output,
            LibvirtProvider(base_port=free_ports(6)),
            ProcessLauncher(),
            drain_seconds=30,
            manifest=load_manifest(ARENA, tmp_path / "fleet.toml"),
        )
        stop = asyncio.Event()
        watcher = asyncio.ensure_future(watch_traces(output, seen, stop))
        try:
            world = await runner.run()
        finally:
            stop.set()
            await watcher
    finally:
        for server in servers.values():
            await server.__aexit__(None, None, None)
    return RaceResult(world, output, servers, seen)


def model_requests(server: ScriptedModelServer) -> list:
    """The requests that reached the model (side requests included: the gateway charges every round)."""
    return list(server.requests)


def assert_key_never_left_the_gateway(result: RaceResult) -> None:
    for server in result.servers.values():
        keys = {
            r.headers.get("Authorization") or r.headers.get("x-api-key") or r.headers.get("x-goog-api-key")
            for r in server.requests
        }
        assert keys <= {f"Bearer {PROVIDER_KEY}", PROVIDER_KEY}, keys
    for path in result.output.rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY not in path.read_text(errors="replace"), f"the provider key leaked into {path}"
