"""Fog of war on the service map (ARENAS §6): a territory's topology shows only as its checks reveal it.

In an arena with `[fog_of_war] hide_topology_until_observed` (the default of a fog arena), a node
tied to a milestone is drawn as "unmapped" until that territory has had an evaluation of that
milestone (started, passed, failed or revoked) by the scrub time; nodes without a milestone always
show, and a link shows once both of its ends do. It is presentation only: the players never see
the map, so this is about what a viewer can say the player could have known at that moment.

The world at the cursor holds exactly that: the reducer creates a territory's milestone entry at
its first evaluation event, and never otherwise, so the observed milestones are its keys.
"""

from __future__ import annotations

from collections.abc import Collection

from aoe_tui.domain.manifest import Visualization
from aoe_tui.domain.world import World

UNMAPPED = "unmapped"


def observed_milestones(world: World, territory_id: str) -> frozenset[str]:
    """The milestones this territory has had evaluated by the world's moment."""
    territory = world.territories.get(territory_id)
    return frozenset(territory.milestones) if territory is not None else frozenset()


def mapped_nodes(visualization: Visualization, observed: Collection[str]) -> frozenset[str]:
    """The node ids a viewer may see: every node without a milestone, and those whose milestone was observed."""
    return frozenset(node.id for node in visualization.nodes if node.milestone is None or node.milestone in observed)


def as_seen(visualization: Visualization, mapped: Collection[str]) -> Visualization:
    """The map with every node outside `mapped` renamed "unmapped" and only the links between mapped nodes."""
    return Visualization(
        nodes=[
            node if node.id in mapped else node.model_copy(update={"display_name": UNMAPPED})
            for node in visualization.nodes
        ],
        links=[link for link in visualization.links if link.from_ in mapped and link.to in mapped],
    )
