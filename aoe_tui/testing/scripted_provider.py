"""The in-process provider/launcher pair: scripted territories and scripted agents.

Used by the fast engine tests, the referee benchmark and the app's snapshot
tests: a whole match (real verifier scripts against real loopback HTTP) with
no VM, on an injected clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from aoe_tui.agents.protocol import AgentFiles
from aoe_tui.domain.manifest import AgentSpec, Manifest
from aoe_tui.engine.agent_handle import AgentHandle
from aoe_tui.testing.scripted_agent import ScriptedAgent
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.model_gateway import GatewayAccess
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.testing.scripted_host import ScriptedPlan, ScriptedTerritory, close_territories
from aoe_tui.engine.territory import TerritoryHost


class ScriptedProvider:
    def __init__(self, plans: dict[str, ScriptedPlan] | None = None) -> None:
        self.plans = plans or {}
        self.hosts: dict[str, ScriptedTerritory] = {}

    async def boot(
        self, manifest: Manifest, match_dir: MatchDirectory, recorder: MatchRecorder, clock: MatchClock
    ) -> tuple[dict[str, TerritoryHost], list[str]]:
        for territory in manifest.territories:
            recorder.progress("boot", "starting scripted territory", territory.id)
            self.hosts[territory.id] = ScriptedTerritory(
                territory.id,
                self.plans.get(territory.id, ScriptedPlan()),
                clock.elapsed_ms,
                match_dir.territory_directory(territory.id),
            )
            recorder.progress("ssh", "preflight passed (scripted)", territory.id)
        return dict(self.hosts), sorted(self.hosts)

    async def teardown(self) -> None:
        close_territories(list(self.hosts.values()))
        self.hosts.clear()


@dataclass
class AgentScript:
    """When (seconds on the clock's source after start) a scripted agent hands in, and with what."""

    finishes_after: float | None = None
    status: str = "completed"
    summary: str = "done"
    obeys_stop: bool = True


@dataclass
class ScriptedLauncher:
    scripts: dict[str, AgentScript] = field(default_factory=dict)
    started: dict[str, ScriptedAgent] = field(default_factory=dict)

    async def start(
        self,
        agent: AgentSpec,
        files: AgentFiles,
        host: TerritoryHost,
        clock: MatchClock,
        arena_dir: Path,
        gateway: GatewayAccess | None = None,
    ) -> AgentHandle:
        script = self.scripts.get(agent.id, AgentScript())
        now = clock.source.now
        finishes_at = None if script.finishes_after is None else now() + script.finishes_after
        handle = ScriptedAgent(
            agent.id, agent.territory, now, finishes_at, script.status, script.summary, obeys_stop=script.obeys_stop
        )
        self.started[agent.id] = handle
        return handle
