"""The match's model gateway: each agent's provider resolved before any guest boots, one gateway per match.

The runner starts it first (a provider missing for a harness's protocol
refuses the match in one line before anything boots), registers every agent
(a token each), hands the launcher each agent's access, and closes it with the
match. It runs in the referee's own process and loop, so it cannot outlive
the match; its charges and budget questions go to the referee through
`RefereeMeter`, which answers only once the referee exists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Mapping

from aoe_tui.agents.gateway.metering import Charge
from aoe_tui.agents.gateway.server import Gateway
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.model_providers import agent_provider

if TYPE_CHECKING:
    from aoe_tui.engine.referee import Referee


@dataclass(frozen=True)
class GatewayAccess:
    """What one agent is given to reach its model: its own port of the gateway and its own token; never a key."""

    url: str
    port: int
    token: str
    provider_key: str | None  # kept out of the adapter's environment by the launcher, never handed over


class RefereeMeter:
    """The gateway's `Meter`: the referee charges and owns the budget rule; nothing runs before it exists."""

    def __init__(self) -> None:
        self.referee: Referee | None = None

    def refusal(self, agent_id: str, rounds_in_flight: int) -> str | None:
        if self.referee is None:
            return "the match has not started"
        return self.referee.budget_refusal(agent_id, rounds_in_flight)

    def charge(self, agent_id: str, charge: Charge) -> None:
        if self.referee is not None:
            self.referee.charge_measured(agent_id, charge)

    def refused_over_budget(self, agent_id: str, reason: str) -> None:
        if self.referee is not None:
            self.referee.budget_spent(agent_id, reason)

    def gateway_failed(self, agent_id: str, detail: str) -> None:
        """Recorded as the arena's infrastructure failure, naming the agent's territory."""
        if self.referee is not None:
            self.referee.gateway_failed(agent_id, detail)


class MatchGateway:
    def __init__(self, manifest: Manifest, match_dir: MatchDirectory, clock: MatchClock) -> None:
        self.manifest = manifest
        self.match_dir = match_dir
        self.meter = RefereeMeter()
        self.gateway = Gateway(self.meter, elapsed_ms=clock.elapsed_ms)
        self._access: dict[str, GatewayAccess] = {}

    async def start(self, env: Mapping[str, str] = os.environ) -> None:
        """Resolve every agent's provider (AoeError on the first that cannot be), then serve on loopback."""
        providers = {agent.id: agent_provider(agent, env) for agent in self.manifest.agents}
        await self.gateway.start()
        for agent in self.manifest.agents:
            provider = providers[agent.id]
            directory = self.match_dir.agent_files(agent.id).directory
            token = await self.gateway.add_agent(agent.id, agent.model, provider, directory)
            self._access[agent.id] = GatewayAccess(
                self.gateway.url(agent.id), self.gateway.port(agent.id), token, provider.api_key if provider else None
            )

    def attach(self, referee: Referee) -> None:
        self.meter.referee = referee

    def access(self, agent_id: str) -> GatewayAccess:
        return self._access[agent_id]

    async def close(self) -> None:
        await self.gateway.close()
