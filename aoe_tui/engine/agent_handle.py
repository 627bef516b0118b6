"""What the referee needs from a running agent, whatever runs it.

`aoe_tui.agents.process.AgentProcess` is the real one (an adapter process);
the test double is `aoe_tui.testing.scripted_agent.ScriptedAgent`.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from aoe_tui.agents.protocol import AgentResult, Usage


class AgentHandle(Protocol):
    agent_id: str
    territory_id: str
    reaper: asyncio.Future | None
    """What waits on the agent and tidies up after it (an adapter's logs and confinement), None when nothing
    does: the referee records its failure, with the territory (engine.task_failures)."""

    @property
    def exited(self) -> bool: ...

    @property
    def exit_code(self) -> int | None: ...

    def usage(self) -> Usage | None: ...

    def result(self) -> AgentResult | None: ...

    async def suspend(self) -> None: ...

    async def resume(self) -> None: ...

    async def request_stop(self) -> None:
        """Ask the agent to hand in its result and exit (SIGTERM for a process)."""

    async def wait(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the agent to exit; True when it did."""

    async def kill(self) -> None: ...
