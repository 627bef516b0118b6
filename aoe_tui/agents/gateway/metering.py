"""What the gateway tells the referee: a charge per exchange, a refusal when the budget is spent.

The referee implements `Meter` (engine/gateway_meter.py): it turns a charge
into a `usage_charged` event measured by the referee and owns the budget rule,
so the gateway and the referee's own budget check can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from aoe_tui.agents.providers import ProviderConfig
from aoe_tui.agents.wire.usage import TokenUsage


@dataclass(frozen=True)
class Charge:
    """One model round, with its tokens and cost where known (None: "n/a", never 0)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_microusd: int | None = None
    rounds: int = 1


class Meter(Protocol):
    def refusal(self, agent_id: str, rounds_in_flight: int) -> str | None:
        """Why `agent_id` may not start another round now (its budget is spent), or None."""

    def charge(self, agent_id: str, charge: Charge) -> None: ...

    def refused_over_budget(self, agent_id: str, reason: str) -> None:
        """A request was refused because the budget is spent: the referee records `budget_exceeded`."""

    def gateway_failed(self, agent_id: str, detail: str) -> None:
        """The gateway itself failed on a request of `agent_id` (a bug, not the player's or the provider's)."""


def charge_for(usage: TokenUsage | None, provider: ProviderConfig, model: str) -> Charge:
    """The round's charge: the provider's own cost when it reported one, else its price table's."""
    if usage is None:
        return Charge()
    cost = None if usage.cost_usd is None else round(usage.cost_usd * 1_000_000)
    price = provider.price(model)
    if cost is None and price is not None and usage.input_tokens is not None and usage.output_tokens is not None:
        cost = price.cost_microusd(usage.input_tokens, usage.output_tokens, usage.cached_tokens)
    return Charge(usage.input_tokens, usage.output_tokens, cost)
