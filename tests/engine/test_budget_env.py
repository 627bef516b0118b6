"""Adapters that enforce their own budget get it from the controller's environment."""

from aoe_tui.domain.manifest import AgentSpec, Budget
from aoe_tui.engine.provider import budget_env


def test_set_limits_are_passed_and_unset_ones_left_out():
    agent = AgentSpec(
        id="a", territory="t", adapter="openai", model="m", budget=Budget(resource_units=120, max_cost_microusd=None)
    )
    assert budget_env(agent) == {"AOE_BUDGET_RESOURCE_UNITS": "120"}
    agent.budget = Budget(resource_units=None, max_cost_microusd=2_000_000)
    assert budget_env(agent) == {"AOE_BUDGET_MAX_COST_MICROUSD": "2000000"}
