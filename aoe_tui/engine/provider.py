"""How a match gets its territories and starts its agents — the runner's two seams.

A `TerritoryProvider` boots every territory and tears them all down; an
`AgentLauncher` starts one agent against its territory. The real pair is
libvirt VMs + adapter processes; the scripted pair lives in-process, so the
same runner produces a complete match directory in a test in about a second.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol, runtime_checkable
from collections.abc import Callable, Iterable

from aoe_tui.agents import protocol as p
from aoe_tui.agents.environment import basic_env, listed_env
from aoe_tui.agents.process import AgentProcess
from aoe_tui.agents.registry import HARNESSES, Adapter, resolve_adapter
from aoe_tui.agents.sandbox import SANDBOX_FILES_DIR, SANDBOX_HOME, Sandbox, next_adapter_uid, python_install
from aoe_tui.domain.manifest import AgentSpec, Manifest
from aoe_tui.domain.secret_patterns import MIN_SECRET_LENGTH
from aoe_tui.engine.agent_handle import AgentHandle
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.model_gateway import GatewayAccess
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.territory import TerritoryHost
from aoe_tui.store.match_layout import MatchLayout


class TerritoryProvider(Protocol):
    async def boot(
        self, manifest: Manifest, match_dir: MatchDirectory, recorder: MatchRecorder, clock: MatchClock
    ) -> tuple[dict[str, TerritoryHost], list[str]]:
        """Boot every territory and pass SSH preflight; returns hosts and the order they became ready."""

    async def teardown(self) -> None:
        """Destroy everything booted; must be safe after a partial boot and when called twice."""


@runtime_checkable
class WatchedInfrastructure(Protocol):
    """A provider whose infrastructure can fail under a running match (libvirtd gone for good): it calls
    `on_infrastructure_lost(component, detail)`, which the runner sets to stop the match as the arena's failure."""

    on_infrastructure_lost: Callable[[str, str], object] | None


class AgentLauncher(Protocol):
    async def start(
        self,
        agent: AgentSpec,
        files: p.AgentFiles,
        host: TerritoryHost,
        clock: MatchClock,
        arena_dir: Path,
        gateway: GatewayAccess | None = None,
    ) -> AgentHandle:
        """Start the agent; `arena_dir` (the manifest's folder) holds the arena's own adapters, if any; `gateway`
        is how it reaches its model (the match's gateway and its own token)."""


def budget_env(agent: AgentSpec) -> dict[str, str]:
    """The agent's budget, for harnesses that enforce it themselves (unset limits are left out)."""
    limits = {
        p.ENV_BUDGET_RESOURCE_UNITS: agent.budget.resource_units,
        p.ENV_BUDGET_MAX_COST_MICROUSD: agent.budget.max_cost_microusd,
    }
    return {name: str(value) for name, value in limits.items() if value is not None}


# Files an adapter is handed by path: copied read-only into its sandbox under SANDBOX_FILES_DIR.
_HANDED_FILES = (p.ENV_SSH_KEY, p.ENV_KNOWN_HOSTS)
# The built-in model harness's own documented settings, taken from the operator's environment; the endpoint and
# its key are the gateway's alone (the harness gets the gateway's URL and its token instead).
_HARNESS_SETTINGS_PREFIX = "AOE_OPENAI_"
_HARNESS_SETTINGS = ("AOE_SSH_RECONNECT_SECONDS",)
_GATEWAY_ONLY = ("AOE_OPENAI_BASE_URL", "AOE_OPENAI_API_KEY")


class ProcessLauncher:
    """Starts each agent's adapter as its own confined process group (environment: docs/adapters.md).

    The adapter's environment is an allow-list (`adapter_env`) plus `AOE_GATEWAY_URL` and its own
    `AOE_GATEWAY_TOKEN`, never a provider key; the process runs in a `Sandbox` as its own uid, reaching
    on loopback only its guest's two forwarded ports, the match's gateway and the `loopback_ports`
    given here (an operator's own service; a local model server is the gateway's to dial, not the adapter's).
    """

    def __init__(self, loopback_ports: Iterable[int] = ()) -> None:
        self.loopback_ports = tuple(loopback_ports)

    async def start(
        self,
        agent: AgentSpec,
        files: p.AgentFiles,
        host: TerritoryHost,
        clock: MatchClock,
        arena_dir: Path,
        gateway: GatewayAccess | None = None,
    ) -> AgentHandle:
        adapter = resolve_adapter(agent.adapter, arena_dir)
        env = adapter_env(
            agent,
            adapter,
            {
                p.ENV_AGENT_ID: agent.id,
                p.ENV_TERRITORY_ID: agent.territory,
                p.ENV_TERRITORY_HOST: host.host,
                p.ENV_SSH_PORT: str(host.ssh_port),
                p.ENV_MODEL: agent.model,
                p.ENV_REASONING_EFFORT: agent.reasoning_effort or "",
                **budget_env(agent),
                **files.env(),
                **({p.ENV_GATEWAY_URL: gateway.url, p.ENV_GATEWAY_TOKEN: gateway.token} if gateway else {}),
            },
        )
        if gateway is not None and gateway.provider_key and len(gateway.provider_key) >= MIN_SECRET_LENGTH:
            env = {name: value for name, value in env.items() if gateway.provider_key not in value}
        handed: dict[str, bytes] = {}
        for name, value in host.access_env().items():
            if name in _HANDED_FILES:
                inside = f"{SANDBOX_FILES_DIR}/{Path(value).name}"
                handed[inside], value = Path(value).read_bytes(), inside
            env[name] = value
        executable = Path(adapter.command[0])
        match_root = MatchLayout.of_agent_directory(files.directory.resolve()).root
        sandbox = Sandbox(
            next_adapter_uid(),
            files.directory.resolve(),
            hidden=(Path.home(), match_root),
            # What runs: the interpreter or program, and the adapter's own files (an arena's plan file).
            readable=(
                *python_install(),
                executable.parent,
                executable.resolve().parent,
                *(source.parent for source in adapter.sources),
            ),
            files=handed,
            loopback_ports=(
                host.ssh_port,
                host.service_port,
                *((gateway.port,) if gateway else ()),
                *self.loopback_ports,
            ),
        )
        process = AgentProcess(agent.id, agent.territory, files)
        await process.start(list(adapter.command), env, sandbox)
        return process


def adapter_env(agent: AgentSpec, adapter: Adapter, protocol: dict[str, str]) -> dict[str, str]:
    """Basics (PATH, locale), the manifest's `env` names, the harness's own settings, the protocol; nothing else."""
    host = os.environ
    settings = {
        name: value
        for name, value in host.items()
        if adapter.name in HARNESSES
        and (name.startswith(_HARNESS_SETTINGS_PREFIX) or name in _HARNESS_SETTINGS)
        and name not in _GATEWAY_ONLY
    }
    return {**basic_env(host), **listed_env(agent.env, host), **settings, "HOME": SANDBOX_HOME, **protocol}
