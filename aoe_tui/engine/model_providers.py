"""Which provider serves each agent's model, checked before anything boots (the runner and `aoe validate`).

Its own module, apart from the gateway's server: `aoe validate` and the command line's start-up must not pay
for importing an HTTP server to answer it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from aoe_tui.agents.providers import ProviderConfig, resolve_provider
from aoe_tui.agents.registry import HARNESS_PROTOCOLS, resolve_adapter
from aoe_tui.agents.wire.protocols import PROTOCOLS
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import AgentSpec, Manifest


def agent_provider(agent: AgentSpec, env: Mapping[str, str]) -> ProviderConfig | None:
    """The provider of `agent`'s model; AoeError (one line: agent, model, provider, protocol) when its harness
    needs a protocol the provider has no URL for. Agents without a known need get None when nothing matches."""
    needed = HARNESS_PROTOCOLS.get(agent.adapter, ())
    try:
        provider = resolve_provider(agent.model, env)
    except AoeError as error:
        if not needed:
            return None
        raise AoeError(f"agent {agent.id}: model {agent.model}: {error}") from None
    for name in needed:
        family = PROTOCOLS[name].family
        if family not in provider.base_urls:
            raise AoeError(
                f"agent {agent.id}: model {agent.model}: provider {provider.name} has no {family}_base_url "
                f"for protocol {name} (adapter {agent.adapter})"
            )
    return provider


def provider_problems(
    manifest: Manifest, env: Mapping[str, str] = os.environ, arena_dir: Path | None = None
) -> list[str]:
    """Every agent whose adapter is unknown (when the arena's folder is given: its own plans count) or cannot
    reach its model (what `aoe validate` and the runner refuse)."""
    problems = []
    for agent in manifest.agents:
        try:
            if arena_dir is not None:
                resolve_adapter(agent.adapter, arena_dir)
            agent_provider(agent, env)
        except AoeError as error:
            problems.append(str(error))
    return problems
