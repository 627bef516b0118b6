"""An agent that lives in this process on the match's injected clock, for tests and benchmarks.

Tests decide exactly when it reports usage, hands in its result, or ignores
a stop; the referee sees it through the same `AgentHandle` protocol as an
adapter process.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aoe_tui.agents.protocol import AgentResult, Usage


class ScriptedAgent:
    """An agent that finishes at a given time of an injected clock, with a given result."""

    def __init__(
        self,
        agent_id: str,
        territory_id: str,
        now: Callable[[], float],
        finishes_at: float | None,
        status: str = "completed",
        summary: str = "done",
        units_per_second: float = 1.0,
        obeys_stop: bool = True,
    ) -> None:
        self.agent_id = agent_id
        self.territory_id = territory_id
        self._now = now
        self._started = now()
        self.finishes_at = finishes_at
        self.status = status
        self.summary = summary
        self.units_per_second = units_per_second
        self.obeys_stop = obeys_stop
        self.suspended = False
        self.killed = False
        self.stop_requested = False
        self.reaper: asyncio.Future | None = None  # nothing to tidy up after an agent in this process

    @property
    def exited(self) -> bool:
        return self.killed or (self.finishes_at is not None and self._now() >= self.finishes_at)

    @property
    def exit_code(self) -> int | None:
        if self.killed:
            return -9
        return 0 if self.exited else None

    def usage(self) -> Usage:
        end = self._now() if self.finishes_at is None else min(self._now(), self.finishes_at)
        return Usage(resource_units=int((end - self._started) * self.units_per_second))

    def result(self) -> AgentResult | None:
        if not self.exited or self.killed:
            return None
        return AgentResult(
            agent=self.agent_id,
            territory=self.territory_id,
            status=self.status,
            summary=self.summary,
            usage=self.usage(),
        )

    async def suspend(self) -> None:
        self.suspended = True

    async def resume(self) -> None:
        self.suspended = False

    async def request_stop(self) -> None:
        self.stop_requested = True
        if self.obeys_stop and not self.exited:
            self.finishes_at = self._now()
            self.status = "interrupted"
            self.summary = "stopped by the referee at the end of the match"

    async def wait(self, timeout: float) -> bool:
        return self.exited  # scripted time does not pass while the referee waits

    async def kill(self) -> None:
        if not self.exited:
            self.killed = True
