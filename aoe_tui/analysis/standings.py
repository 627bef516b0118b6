"""Who is best over many rounds: series and benchmark standings, computed from the round matches.

Standings are never copied from a stored `series.json`: each decided round's
match is read again and reduced to one `Seat` per agent, and the rows are
folded from those seats. The rules reproduce the earlier implementation's
published numbers exactly (the fixture series is the proof), with one
addition of ours: a seat whose agent was unavailable for reasons not its own
(provider down, harness crash, its VM gone) is a *forfeit* — it is left out
of that agent's appearances and totals, so it never counts as a loss, and
the rows carry a `forfeits` count whenever any round had one.

Unknown is `None` ("n/a"), never 0: token and cost totals are only summed
when every counted round recorded them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.domain.world import World
from aoe_tui.store.saved_match import SavedMatch
from aoe_tui.store.series_source import BenchmarkSource, SeriesSource, open_collection

NO_FAULT_SOURCES = frozenset({"provider", "harness"})
"""Failure sources that are not the player's doing: the model provider or the agent harness failed it."""

SERIES_FIELDS = (
    "agent",
    "model",
    "appearances",
    "wins",
    "durable_deployments",
    "median_durable_ms",
    "usage_recorded",
    "input_tokens",
    "output_tokens",
    "cost_microusd",
    "cost_per_durable_microusd",
)


@dataclass(frozen=True)
class Seat:
    """One agent in one decided round: everything the standings need from that round's match."""

    round: int
    agent: str
    model: str | None
    adapter: str | None
    reasoning_effort: str | None
    territory: str | None
    won: bool
    durable_at_ms: int | None
    tokens_known: bool
    cost_known: bool
    input_tokens: int
    output_tokens: int
    cost_microusd: int
    milestone_passes: int
    milestones_available: int | None
    failure_source: str | None
    forfeit: bool

    @property
    def usage_recorded(self) -> bool:
        return self.tokens_known or self.cost_known

    @property
    def config(self) -> tuple[str | None, str | None, str | None]:
        """The model configuration a benchmark ranks: (model, adapter, reasoning_effort)."""
        return (self.model, self.adapter, self.reasoning_effort)


def unavailable_agents(world: World) -> list[str]:
    """Agents that could not really race this round for reasons not their own (and so did not win).

    Their provider or harness failed them, or their territory went `unavailable` (an infrastructure
    fault). A durable or winning agent raced, whatever happened to it afterwards.
    """
    winner = world.territories[world.winner].agent if world.winner in world.territories else None
    out = []
    for agent_id, agent in sorted(world.agents.items()):
        territory = world.territories.get(agent.territory or "")
        if agent_id == winner or (territory is not None and territory.durable_at_ms is not None):
            continue
        if agent.failure_source in NO_FAULT_SOURCES or (
            territory is not None and territory.competitor_state == "unavailable"
        ):
            out.append(agent_id)
    return out


def seats_of(round_number: int, match: SavedMatch) -> list[Seat]:
    """The seats of one decided round, in agent order."""
    world = match.world
    winner = world.territories[world.winner].agent if world.winner in world.territories else None
    forfeits = set(unavailable_agents(world))
    available = len(match.manifest.build.milestones) if match.manifest and match.manifest.build else None
    seats = []
    for agent_id, agent in sorted(world.agents.items()):
        info = match.agents.get(agent_id)
        territory = world.territories.get(agent.territory or "")
        seats.append(
            Seat(
                round=round_number,
                agent=agent_id,
                model=(info.model if info else None) or agent.model,
                adapter=info.adapter if info else None,
                reasoning_effort=info.reasoning_effort if info else None,
                territory=agent.territory,
                won=agent_id == winner,
                durable_at_ms=territory.durable_at_ms if territory is not None else None,
                tokens_known=agent.tokens_known,
                cost_known=agent.cost_known,
                input_tokens=agent.input_tokens,
                output_tokens=agent.output_tokens,
                cost_microusd=agent.cost_microusd,
                milestone_passes=sum(m.passed for m in territory.milestones.values()) if territory is not None else 0,
                milestones_available=available,
                failure_source=agent.failure_source,
                forfeit=agent_id in forfeits,
            )
        )
    return seats


def upper_median(values: list[int]) -> int | None:
    """Element `n // 2` of the sorted values (the earlier implementation's median), None when empty."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def _totals(seats: list[Seat]) -> dict[str, Any]:
    """The series fields after `agent`/`model`, folded from the counted (non-forfeit) seats of one group."""
    counted = [s for s in seats if not s.forfeit]
    durable = [s.durable_at_ms for s in counted if s.durable_at_ms is not None]
    recorded = sum(s.usage_recorded for s in counted)
    every_round = bool(counted) and recorded == len(counted)
    tokens_known = every_round and all(s.tokens_known for s in counted)
    cost_known = every_round and all(s.cost_known for s in counted)
    cost = sum(s.cost_microusd for s in counted) if cost_known else None
    return {
        "appearances": len(counted),
        "wins": sum(s.won for s in counted),
        "durable_deployments": len(durable),
        "median_durable_ms": upper_median(durable),
        "usage_recorded": recorded,
        "input_tokens": sum(s.input_tokens for s in counted) if tokens_known else None,
        "output_tokens": sum(s.output_tokens for s in counted) if tokens_known else None,
        "cost_microusd": cost,
        "cost_per_durable_microusd": cost // len(durable) if cost is not None and durable else None,
    }


def _rank(row: dict[str, Any]) -> tuple:
    median = row["median_durable_ms"]
    return (-row["wins"], -row["durable_deployments"], median is None, median or 0)


def _with_forfeits(rows: list[tuple[dict[str, Any], list[Seat]]]) -> list[dict[str, Any]]:
    any_forfeit = any(s.forfeit for _, seats in rows for s in seats)
    for row, seats in rows:
        if any_forfeit:
            row["forfeits"] = sum(s.forfeit for s in seats)
    return [row for row, _ in rows]


def series_standings(seats: list[Seat]) -> list[dict[str, Any]]:
    """One row per agent id (the series fields), best first: wins, durable deployments, faster median."""
    by_agent: dict[str, list[Seat]] = {}
    for seat in sorted(seats, key=lambda s: s.round):
        by_agent.setdefault(seat.agent, []).append(seat)
    rows = [
        ({"agent": agent, "model": next((s.model for s in group if s.model), None), **_totals(group)}, group)
        for agent, group in by_agent.items()
    ]
    rows.sort(key=lambda item: (_rank(item[0]), item[0]["agent"]))
    return _with_forfeits(rows)


def benchmark_standings(seats: list[Seat]) -> list[dict[str, Any]]:
    """One row per model configuration across every arena, with the benchmark's extra fields."""
    by_config: dict[tuple, list[Seat]] = {}
    for seat in sorted(seats, key=lambda s: s.round):
        by_config.setdefault(seat.config, []).append(seat)
    rows = []
    for (model, adapter, effort), group in by_config.items():
        counted = [s for s in group if not s.forfeit]
        available = [s.milestones_available for s in counted]
        known = [count for count in available if count is not None]
        failures = Counter(s.failure_source for s in group if s.failure_source is not None)
        row = {
            "model": model,
            "adapter": adapter,
            "reasoning_effort": effort,
            "agents": sorted({s.agent for s in group}),
            **_totals(group),
            "durable_times_ms": sorted(s.durable_at_ms for s in counted if s.durable_at_ms is not None),
            "milestone_passes": sum(s.milestone_passes for s in counted),
            "milestones_available": sum(known) if len(known) == len(available) else None,
            "failures": dict(sorted(failures.items())),
        }
        rows.append((row, group))
    rows.sort(key=lambda item: (_rank(item[0]), tuple(str(v) for v in item[0]["agents"])))
    return _with_forfeits(rows)


def series_seats(series: SeriesSource) -> list[Seat]:
    """Every seat of a series' decided rounds, read from the round matches themselves."""
    return [seat for number, match in series.decided_rounds() for seat in seats_of(number, match)]


def standings_report(path: Path) -> dict[str, Any]:
    """`aoe standings --json`: `{"standings", "intervals", "leader"}` for a series (the rows as published; each row's
    95% intervals of win and durable rate; whether the leader is distinguishable from the next); a benchmark adds
    `"arenas": [{arena_id, standings}]`.

    `path` is a series or benchmark folder, or the bundle `aoe export` made of one."""
    source = open_collection(path)
    if isinstance(source, SeriesSource):
        rows = series_standings(series_seats(source))
        return {"standings": rows, **certainty(rows)}
    assert isinstance(source, BenchmarkSource)
    arenas = [(arena_id, series_seats(series)) for arena_id, series in source.arenas]
    rows = benchmark_standings([s for _, seats in arenas for s in seats])
    return {
        "standings": rows,
        **certainty(rows),
        "arenas": [{"arena_id": arena_id, "standings": series_standings(seats)} for arena_id, seats in arenas],
    }


def certainty(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The standings' 95% intervals of win and durable rate, and whether the leader stands apart from the next."""
    from aoe_tui.analysis.intervals import leader_note, standings_intervals

    return {"intervals": standings_intervals(rows), "leader": leader_note(rows)}
