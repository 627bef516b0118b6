"""Cumulative usage and the agent's budget.

One resource unit is one model round (one chat-completions request that got
an answer): the cost the harness controls directly, and a measure that means
the same thing on a free local model and a paid router. Cost is counted only
when the endpoint reports it (`usage.cost`, as routers do); `cost_complete`
says whether every round did.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aoe_tui.agents.wire.usage import TokenUsage


@dataclass(frozen=True)
class Budget:
    resource_units: int | None = None
    max_cost_microusd: int | None = None

    def refusal_before_round(self, totals: UsageTotals) -> str | None:
        """Why another round may not start, or None."""
        if self.resource_units is not None and totals.rounds >= self.resource_units:
            return f"budget exhausted: {totals.rounds} of {self.resource_units} model rounds used"
        return self.cost_refusal(totals)

    def cost_refusal(self, totals: UsageTotals) -> str | None:
        cost = totals.cost_microusd
        if self.max_cost_microusd is not None and cost is not None and cost >= self.max_cost_microusd:
            return f"budget exhausted: cost {cost} µUSD reached the limit of {self.max_cost_microusd} µUSD"
        return None


@dataclass
class UsageTotals:
    rounds: int = 0
    tool_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cost_usd: float | None = None
    cost_complete: bool = True

    def add_round(self, usage: TokenUsage) -> None:
        self.rounds += 1
        self.input_tokens = _plus(self.input_tokens, usage.input_tokens)
        self.output_tokens = _plus(self.output_tokens, usage.output_tokens)
        self.cache_read_tokens = _plus(self.cache_read_tokens, usage.cached_tokens)
        if usage.cost_usd is None:
            self.cost_complete = False
        else:
            self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd

    @property
    def cost_microusd(self) -> int | None:
        return None if self.cost_usd is None else round(self.cost_usd * 1_000_000)

    def result_usage(self) -> dict[str, Any]:
        """The `usage` object of result.json (docs/adapters.md)."""
        return {
            "resource_units": self.rounds,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_microusd": self.cost_microusd,
            "rounds": self.rounds,
            "tool_calls": self.tool_calls,
        }

    def checkpoint(self, agent: str) -> dict[str, Any]:
        """usage.json: cumulative, so a reader that misses a checkpoint loses nothing."""
        return {
            "schema_version": 1,
            "agent": agent,
            **self.result_usage(),
            "cache_read_tokens": self.cache_read_tokens,
            "cost_complete": self.cost_complete and self.rounds > 0,
        }

    def transcript_usage(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens or 0,
            "output_tokens": self.output_tokens or 0,
            "cache_read_tokens": self.cache_read_tokens or 0,
            "cache_creation_tokens": 0,
            "cost_usd": self.cost_usd or 0,
        }


def _plus(total: int | None, delta: int | None) -> int | None:
    if delta is None:
        return total
    return (total or 0) + delta
