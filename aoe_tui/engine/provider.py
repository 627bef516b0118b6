"""How a match gets its territories and starts its agents — the runner's two seams.

A `TerritoryProvider` boots every territory and tears them all down; an
`AgentLauncher` starts one agent against its territory. The real pair is
libvirt VMs + adapter processes; the scripted pair lives in-process, so the
same runner produces a complete match directory in a test in about a second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from aoe_tui.agents import protocol as p
from aoe_tui.agents.process import AgentProcess
from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.domain.manifest import AgentSpec, Manifest
from aoe_tui.engine.agent_handle import AgentHandle
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.territory import TerritoryHost


class TerritoryProvider(Protocol):
    async def boot(self, manifest: Manifest, match_dir: MatchDirectory, recorder: MatchRecorder,
                   clock: MatchClock) -> tuple[dict[str, TerritoryHost], list[str]]:
        """Boot every territory and pass SSH preflight; returns hosts and the order they became ready."""

    async def teardown(self) -> None:
        """Destroy everything booted; must be safe after a partial boot and when called twice."""


class AgentLauncher(Protocol):
    async def start(self, agent: AgentSpec, files: p.AgentFiles, host: TerritoryHost,
                    clock: MatchClock) -> AgentHandle: ...


def budget_env(agent: AgentSpec) -> dict[str, str]:
    """The agent's budget, for harnesses that enforce it themselves (unset limits are left out)."""
    limits = {p.ENV_BUDGET_RESOURCE_UNITS: agent.budget.resource_units,
              p.ENV_BUDGET_MAX_COST_MICROUSD: agent.budget.max_cost_microusd}
    return {name: str(value) for name, value in limits.items() if value is not None}


class ProcessLauncher:
    """Starts each agent's adapter as its own process group (SPEC §7 environment)."""

    def __init__(self, cwd: Path | None = None) -> None:
        self.cwd = cwd

    async def start(self, agent: AgentSpec, files: p.AgentFiles, host: TerritoryHost,
                    clock: MatchClock) -> AgentHandle:
        adapter = resolve_adapter(agent.adapter)
        env = {p.ENV_AGENT_ID: agent.id, p.ENV_TERRITORY_ID: agent.territory, p.ENV_TERRITORY_HOST: host.host,
               p.ENV_SSH_PORT: str(host.ssh_port), p.ENV_MODEL: agent.model,
               p.ENV_REASONING_EFFORT: agent.reasoning_effort or "", **budget_env(agent), **files.env(),
               **host.access_env()}
        process = AgentProcess(agent.id, agent.territory, files)
        await process.start(list(adapter.command), env, self.cwd)
        return process
