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
import time
from dataclasses import dataclass
from typing import Any
from pathlib import Path
from urllib.parse import urlsplit

from aoe_tui.agents.harnesses import HARNESS_MODULES
from aoe_tui.agents.openai_harness.main import KeyFiles
from aoe_tui.agents.scripted.apps import app_source
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.world import World
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.ssh import GuestSSH
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.testing.harness_scripts import ToolTurns, script, scripted_server, write_command
from aoe_tui.testing.model_server import ScriptedModelServer, Turn
from tests.agents_real.builder_script import SELF_CHECK
from tests.agents_real.gateway_match import KEY_FRAGMENT, PROVIDER_KEY
from tests.agents_real.guest import PROJECT, free_ports

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
TERRITORIES = ("builder-one", "builder-two", "builder-three")
# The bundle (GUEST_MOUNT) is left out of the search: 2.5 GB of the harnesses' own files, read-only, no key in it.
# The fragment is put together by the shell: a harness keeps its session's record in the guest (Claude Code's
# projects/*.jsonl), and a command holding the fragment itself would be found there. No command substitution
# in any scripted command: Gemini CLI refuses to run one.
_HALF = len(KEY_FRAGMENT) // 2
KEY_SCAN = (
    f"k='{KEY_FRAGMENT[:_HALF]}'; k=\"$k\"'{KEY_FRAGMENT[_HALF:]}'; "
    "(env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n') | grep -c \"$k\"; "
    'grep -rIl "$k" /etc /root /opt /var /tmp /home /run /srv --exclude-dir=aoe-harnesses '
    "2>/dev/null | head -5; echo scan-done"
)
START = (
    "systemctl enable builder-app.service && systemctl restart builder-app.service && "
    f"for i in {' '.join(str(n) for n in range(60))}; do curl -fsS http://127.0.0.1:8080/health && exit 0; "
    "sleep 0.5; done; exit 1"
)
RIVALS_WAIT_S = 480.0  # under Claude Code's and the gateway's 600 s wait for a first byte
USAGE: dict[str, Any] = {"input_tokens": 1200, "output_tokens": 150, "cached_tokens": 300}


@dataclass(frozen=True)
class Entrant:
    agent_id: str
    adapter: str
    behaviour: str  # careful, memory or silent; "seat": a built-in scripted builder filling a third territory


def turns_for(entrant: Entrant) -> list[Turn]:
    if entrant.behaviour == "silent":
        return [Turn(text="I would rather describe the service than build it.", **USAGE)]
    store = "sqlite" if entrant.behaviour == "careful" else "memory"
    commands = [("systemctl cat builder-app.service; ls -la /opt/builder", "Inspect the service slot")]
    if entrant.behaviour == "careful":
        # Before the deployment: once the service answers, the referee's checks (its host reboot cuts the harness)
        # and a durable win (it stops the harness) may come before a slow harness's next round.
        commands.append((KEY_SCAN, "Look for the provider key in the guest"))
    commands += [
        (write_command("/opt/builder/app.py", app_source(store)), "Write the service"),
        (START, "Start the unit and wait for health"),
        (SELF_CHECK, "Round-trip one record"),
    ]
    return script(entrant.adapter, commands, f"Deployed /opt/builder/app.py with records in {store}.", **USAGE)


def fleet_toml(entrants: list[Entrant]) -> str:
    return "".join(
        f'[[agents]]\nid = "{e.agent_id}"\nterritory = "{territory}"\nadapter = "{e.adapter}"\n'
        f'model = "scripted-{e.agent_id}"\nbudget = {{ resource_units = 40 }}\n\n'
        for e, territory in zip(entrants, TERRITORIES, strict=False)
    )


def providers_toml(servers: dict[str, ScriptedModelServer]) -> str:
    return "".join(
        f'[providers.{name}]\nopenai_base_url = "{server.openai_base_url}"\n'
        f'anthropic_base_url = "{server.base_url}"\ngemini_base_url = "{server.base_url}"\n'
        f'api_key_env = "AOE_TEST_PROVIDER_KEY"\nmodels = ["scripted-{name}"]\n'
        for name, server in servers.items()
    )


@dataclass
class RaceResult:
    world: World
    output: Path
    servers: dict[str, ScriptedModelServer]
    live_trace_lengths: dict[str, int]  # the most tool calls in each live tool_trace.jsonl while its adapter ran
    foreign_token_probes: list[tuple[str, str]]  # (what was tried from a guest, the HTTP status it got)

    def trace(self, agent_id: str) -> list[dict]:
        path = self.output / "agents" / agent_id / "tool_trace.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def process_environments(marker: bytes) -> list[dict[str, str]]:
    """The environment of every running process whose command line holds `marker` (the host's /proc, as root)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if marker not in (entry / "cmdline").read_bytes():
                continue
            raw = (entry / "environ").read_bytes()
        except OSError:
            continue
        found.append(dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item))
    return found


def runner_environments() -> dict[str, dict[str, str]]:
    """Each running harness adapter's environment by agent id."""
    return {
        env["AOE_AGENT_ID"]: env for env in process_environments(b"aoe_tui.agents.harnesses") if "AOE_AGENT_ID" in env
    }


async def probe_foreign_token(output: Path, probes: list[tuple[str, str]], stop: asyncio.Event) -> None:
    """From one agent's guest, with another agent's gateway token (taken from that adapter's environment): at
    this guest's own gateway port the token is refused; the other agent's port does not answer here at all."""
    while not stop.is_set() and not probes:
        envs = runner_environments()
        if len(envs) >= 2:
            (owner, theirs), (_, mine) = sorted(envs.items())[:2]
            keys = output / "ssh" / mine["AOE_TERRITORY_ID"]  # the adapter's own paths are inside its sandbox
            ssh = GuestSSH(
                mine["AOE_TERRITORY_ID"], "127.0.0.1", int(mine["AOE_SSH_PORT"]),
                KeyFiles(keys / "id_ed25519", keys / "known_hosts"),
            )  # fmt: skip
            here, there = urlsplit(mine["AOE_GATEWAY_URL"]).port, urlsplit(theirs["AOE_GATEWAY_URL"]).port
            token = theirs["AOE_GATEWAY_TOKEN"]
            ask = (
                "curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' "
                f"-H 'Authorization: Bearer {token}' -H 'x-api-key: {token}' -H 'x-goog-api-key: {token}' "
                "--data '{}' http://127.0.0.1:{port}/v1/chat/completions"
            )
            try:
                own = (await ssh.run(ask.replace("{port}", str(here)), 30)).stdout.strip()
                if own != "000":  # the forward is open: the foreign token was judged at this guest's own port
                    foreign = (await ssh.run(ask.replace("{port}", str(there)), 30)).stdout.strip()
                    probes.extend(
                        [(f"{owner}'s token at {mine['AOE_AGENT_ID']}'s port", own), (f"{owner}'s port", foreign)]
                    )
            except AoeError:
                pass
            finally:
                await ssh.close()
        await asyncio.sleep(2)


async def watch_traces(output: Path, seen: dict[str, int], stop: asyncio.Event) -> None:
    """The most tool calls in each agent's live trace while its adapter still ran (live, not read at the end)."""
    while not stop.is_set():
        running = runner_environments()
        for agent_id in running:
            path = output / "agents" / agent_id / "tool_trace.jsonl"
            lines = path.read_text(errors="replace").splitlines() if path.exists() else []
            seen[agent_id] = max(seen.get(agent_id, 0), sum(1 for line in lines if line.strip()))
        await asyncio.sleep(0.5)


def passed(output: Path, territories: set[str], milestone: str) -> bool:
    events = output / "events.jsonl"
    lines = events.read_text(errors="replace").splitlines() if events.exists() else []
    done = {
        event.get("territory")
        for event in map(json.loads, (line for line in lines if '"milestone_passed"' in line))
        if event.get("milestone") == milestone
    }
    return territories <= done


def wait_for_rivals(output: Path, rivals: set[str], timeout_s: float = RIVALS_WAIT_S):
    """The careful model's first answer waits until every in-memory rival passed write-read (so that each is
    seen to stop at service-restart before the careful one's durable deployment ends the race), at most
    `timeout_s`: the slow harnesses take minutes to start under TCG with three guests on two cores."""
    first_asked: list[float] = []  # the clock starts at the careful harness's first request, not at the boot

    async def hold() -> None:
        first_asked[:] = first_asked or [time.monotonic()]
        while time.monotonic() - first_asked[0] < timeout_s and not passed(output, rivals, "write-read"):
            await asyncio.sleep(1)

    return hold


async def race(entrants: list[Entrant], tmp_path: Path, monkeypatch) -> RaceResult:
    assert all(e.adapter in HARNESS_MODULES or e.behaviour == "seat" for e in entrants)
    (tmp_path / "fleet.toml").write_text(fleet_toml(entrants))
    servers = {e.agent_id: scripted_server(turns_for(e)) for e in entrants if e.behaviour != "seat"}
    output = tmp_path / "match"
    territory = {e.agent_id: t for e, t in zip(entrants, TERRITORIES, strict=False)}
    rivals = {territory[e.agent_id] for e in entrants if e.behaviour == "memory"}
    for entrant in entrants:
        if entrant.behaviour == "careful" and rivals:
            servers[entrant.agent_id].hold = wait_for_rivals(output, rivals)
    seen: dict[str, int] = {}
    probes: list[tuple[str, str]] = []
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
        watchers = [
            asyncio.ensure_future(watch_traces(output, seen, stop)),
            asyncio.ensure_future(probe_foreign_token(output, probes, stop)),
        ]
        try:
            world = await runner.run()
        finally:
            stop.set()
            await asyncio.gather(*watchers)
    finally:
        for server in servers.values():
            await server.__aexit__(None, None, None)
    return RaceResult(world, output, servers, seen, probes)


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


def assert_race_verdict(result: RaceResult, entrants: list[Entrant]) -> None:
    """The careful harness wins durable with 100; in-memory ones stop at service-restart; a silent one (no tool
    call) is the player's failure in its harness's words while the match goes on; tool calls reach the live feed
    with their commands and outputs; every token charged is one the scripted server sent; the careful model's
    search of its guest finds no provider key; the key is at the providers and nowhere else."""
    world = result.world
    dump = str(world.model_dump(mode="json"))[:6000]
    territory = {e.agent_id: t for e, t in zip(entrants, TERRITORIES, strict=False)}
    careful = next(e for e in entrants if e.behaviour == "careful")
    assert world.winner == territory[careful.agent_id], dump
    won = world.territories[territory[careful.agent_id]]
    assert won.competitor_state == "durable" and won.milestone_points == 100, dump
    # It finished, or the referee's reboot cut it and the race ended before its resumed session did: never a
    # failure of its own.
    careful_state = world.agents[careful.agent_id]
    assert careful_state.successful or careful_state.failure_source in ("arena", "controller"), careful_state
    for entrant in (e for e in entrants if e.behaviour != "seat"):
        agent = world.agents[entrant.agent_id]
        turns = result.servers[entrant.agent_id].turns
        assert isinstance(turns, ToolTurns)
        served = turns.served
        assert agent.metered and agent.resource_units_used == len(served), (entrant, agent)
        assert agent.input_tokens == sum(t.input_tokens for t in served), (entrant, agent, len(served))
        assert agent.output_tokens == sum(t.output_tokens for t in served), (entrant, agent)
        if entrant.behaviour == "silent":
            assert agent.failure_source == "player" and "never called a tool" in (agent.terminal_detail or ""), agent
            assert "I would rather describe" in (agent.terminal_detail or ""), agent
            continue
        if entrant.behaviour == "memory":
            milestones = world.territories[territory[entrant.agent_id]].milestones
            assert milestones["write-read"].passed and not milestones["service-restart"].passed, (entrant, dump)
        trace = result.trace(entrant.agent_id)
        assert result.live_trace_lengths.get(entrant.agent_id, 0) >= 3, (entrant, result.live_trace_lengths)
        inspect = next((e for e in trace if "systemctl cat builder-app.service" in str(e.get("input"))), None)
        assert inspect is not None and "builder-app" in str(inspect.get("output")), (entrant, trace[:2])
    assert_key_never_left_the_gateway(result)
    # Another agent's token, used from this agent's guest: refused at this guest's own port (401), and the other
    # agent's port is not reachable from here at all (no answer: 000).
    assert [status for _, status in result.foreign_token_probes] == ["401", "000"], result.foreign_token_probes
    scan = [e for e in result.trace(careful.agent_id) if "scan-done" in str(e.get("input"))]
    assert scan and str(scan[-1]["output"]).strip().splitlines()[:2] == ["0", "scan-done"], scan
