"""A short human summary of a saved match (arena, territories, winner, duration, events)."""

from __future__ import annotations

from aoe_tui.domain.clock import format_clock
from aoe_tui.store.saved_match import SavedMatch


def match_summary_lines(match: SavedMatch) -> list[str]:
    world = match.world
    lines = [
        f"match      {match.name}",
        f"arena      {match.arena_name}",
        f"state      {world.match_state}" + (f" ({world.finish_reason})" if world.finish_reason else ""),
        f"winner     {world.winner or 'none'}",
        f"duration   {format_clock(world.elapsed_ms)}",
        f"events     {len(match.events)}" + ("" if match.has_timeline else " (world only: no timeline)"),
        "territories",
    ]
    for territory_id in world.standings():
        territory = world.territories[territory_id]
        passed = sum(m.passed for m in territory.milestones.values())
        durable = f" durable at {format_clock(territory.durable_at_ms)}" if territory.durable_at_ms is not None else ""
        lines.append(
            f"  {territory_id:<16} {territory.agent or '?':<24} {territory.competitor_state:<11} "
            f"{passed} passed {territory.milestone_points:>4} pts{durable}"
        )
    return lines
