"""The registry of the built-in scripted builders: every plan by its adapter name.

Each plan module builds its plans on the small base (`base`: `Step`, `Plan`, the shared commands) and
knows nothing of the others or of this registry, so the registry imports them and nothing imports it
back (before, the plan modules imported their base from here while this module imported them at its
end: a circle of nine files). The order is the one `aoe` lists adapters in.
"""

from __future__ import annotations

from aoe_tui.agents.scripted.base import Plan
from aoe_tui.agents.scripted.cheat_durability import CHEATS  # adversarial builders (issue 10)
from aoe_tui.agents.scripted.cheat_flood import FLOOD_CHEATS  # bounded, inert input (issue 10)
from aoe_tui.agents.scripted.cheat_reach import REACH_CHEATS  # adapter confinement (issue 10)
from aoe_tui.agents.scripted.conquest_plans import CONQUEST_PLANS  # First Contact players (issue 18)
from aoe_tui.agents.scripted.durability_plans import DURABILITY_PLANS  # Reliable Key-Value Store builders
from aoe_tui.agents.scripted.failover_plans import FAILOVER_PLANS  # Primary Failover builders (issue 12)
from aoe_tui.agents.scripted.queue_plans import QUEUE_PLANS  # Durable Job Queue builders (issue 12)
from aoe_tui.agents.scripted.rollout_plans import ROLLOUT_PLANS  # Zero-Downtime Rollout builders (issue 18)
from aoe_tui.agents.scripted.surge_plans import SURGE_PLANS  # Traffic Surge builders (issue 18)

PLANS: dict[str, Plan] = {
    **DURABILITY_PLANS,
    **CHEATS,
    **REACH_CHEATS,
    **FLOOD_CHEATS,
    **QUEUE_PLANS,
    **FAILOVER_PLANS,
    **SURGE_PLANS,
    **ROLLOUT_PLANS,
    **CONQUEST_PLANS,
}
