"""What the app shows for a series or benchmark, read from its folder's own files or from its exported bundle.

Standings come from `standings` (recomputed from the round matches); the
rounds list and the rotation grid come from every round (`round-NNN/`),
decided or not, so a running or interrupted series is still inspectable.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal
from collections.abc import Callable

from aoe_tui.analysis.standings import Seat, benchmark_standings, seats_of, series_standings
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import FINAL_MATCH_STATES, TerritoryRegistered
from aoe_tui.runtime.paths import cache_root
from aoe_tui.store.saved_match import SavedMatch
from aoe_tui.store.series_source import BenchmarkSource, RoundSource, SeriesSource, open_collection
from aoe_tui.store.summary_cache import SummaryCache

Outcome = Literal["won", "durable", "lost", "forfeit", "undecided"]


@dataclass
class RoundRow:
    number: int
    path: Path  # the round's folder, or `<bundle>/round-NNN` (shown; `load` opens it)
    load: Callable[[], SavedMatch]
    state: str  # finished, aborted, void, unfinished, unreadable
    seats: dict[str, str]  # agent -> territory
    outcomes: dict[str, Outcome]  # agent -> outcome
    winner: str | None
    duration_ms: int
    error: str | None = None
    territory_order: list[str] = field(default_factory=list)  # as the arena lists them (the rotation's order)


@dataclass
class SeriesOverview:
    path: Path
    arena_id: str
    rounds_requested: int | None
    rounds: list[RoundRow]
    standings: list[dict[str, Any]]
    territories: list[str] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return sum(r.state == "finished" for r in self.rounds)

    def grid(self) -> dict[str, dict[str, list[tuple[int, Outcome]]]]:
        """agent -> territory -> [(round, outcome)]: who raced from which seat and how it went."""
        grid: dict[str, dict[str, list[tuple[int, Outcome]]]] = {}
        for row in self.rounds:
            for agent, territory in row.seats.items():
                grid.setdefault(agent, {}).setdefault(territory, []).append((row.number, row.outcomes[agent]))
        return dict(sorted(grid.items()))


@dataclass
class BenchmarkOverview:
    path: Path
    suite_id: str
    arenas: list[SeriesOverview]
    standings: list[dict[str, Any]]


def round_summaries() -> SummaryCache:
    """Each round's row and seats, kept in the cache folder so a series opens without reading its logs again."""
    return SummaryCache(cache_root() / "round-summaries.json")


_CACHED_ROW_FIELDS = [f.name for f in fields(RoundRow) if f.name not in ("number", "path", "load", "error")]


def _round_row(round_: RoundSource, cache: SummaryCache | None) -> tuple[RoundRow, list[Seat]]:
    cached = cache.get(round_.location) if cache is not None else None
    if cached is not None:
        row = RoundRow(round_.number, round_.location, round_.load, **cached["row"])
        return row, [Seat(**seat) for seat in cached["seats"]]
    row, decided = _read_round(round_)
    if cache is not None and row.error is None:
        summary = {name: value for name, value in asdict(row).items() if name in _CACHED_ROW_FIELDS}
        cache.put(round_.location, {"row": summary, "seats": [asdict(seat) for seat in decided]})
    return row, decided


def _read_round(round_: RoundSource) -> tuple[RoundRow, list[Seat]]:
    number, path = round_.number, round_.location
    try:
        match = round_.load()
    except AoeError as error:
        return RoundRow(number, path, round_.load, "unreadable", {}, {}, None, 0, error=str(error)), []
    world = match.world
    state = world.match_state if world.match_state in FINAL_MATCH_STATES else "unfinished"
    seats = {agent: s.territory for agent, s in sorted(world.agents.items()) if s.territory}
    if not seats and match.manifest is not None:
        seats = {a.id: a.territory for a in sorted(match.manifest.agents, key=lambda a: a.id)}
    decided = seats_of(number, match) if state == "finished" else []
    outcomes: dict[str, Outcome] = {agent: "undecided" for agent in seats}
    for seat in decided:
        outcomes[seat.agent] = (
            "forfeit"
            if seat.forfeit
            else "won"
            if seat.won
            else "durable"
            if seat.durable_at_ms is not None
            else "lost"
        )
    winner = world.territories[world.winner].agent if world.winner in world.territories else None
    order = [t.id for t in match.manifest.territories] if match.manifest is not None else _registered(match)
    row = RoundRow(number, path, round_.load, state, seats, outcomes, winner, world.elapsed_ms, territory_order=order)
    return row, decided


def _registered(match: SavedMatch) -> list[str]:
    """Territories in the order they registered. A match registers them at its opening, so the events are
    decoded one by one only until every territory of the world has registered (a log's opening, not all of
    it: its event columns would decode every event, as long as reading the round again)."""
    order: list[str] = []
    unregistered = set(match.world.territories)
    for event in match.events:
        if not unregistered:
            break
        if isinstance(event, TerritoryRegistered):
            order.append(event.territory)
            unregistered.discard(event.territory)
    return order


def _series(source: SeriesSource, cache: SummaryCache | None) -> tuple[SeriesOverview, list]:
    rows, seats = [], []
    for round_ in source.rounds:
        row, decided = _round_row(round_, cache)
        rows.append(row)
        seats += decided
    territories = list(
        dict.fromkeys(
            [t for row in rows for t in row.territory_order] + sorted({t for row in rows for t in row.seats.values()})
        )
    )
    return SeriesOverview(
        source.location,
        source.checkpoint.get("arena_id") or source.name,
        source.checkpoint.get("rounds_requested"),
        rows,
        series_standings(seats),
        territories,
    ), seats


def _benchmark(source: BenchmarkSource, cache: SummaryCache | None) -> BenchmarkOverview:
    arenas, seats = [], []
    for _, series in source.arenas:
        arena, arena_seats = _series(series, cache)
        arenas.append(arena)
        seats += arena_seats
    suite = source.checkpoint.get("suite_id") or source.name
    return BenchmarkOverview(source.location, suite, arenas, benchmark_standings(seats))


def overview(path: Path, cache: SummaryCache | None = None) -> SeriesOverview | BenchmarkOverview:
    """The view of a series or benchmark folder, or of the bundle `aoe export` made of one; with `cache`,
    a round read before is taken from its summary while none of its files changed."""
    source = open_collection(path)
    found = _series(source, cache)[0] if isinstance(source, SeriesSource) else _benchmark(source, cache)
    if cache is not None:
        cache.save()
    return found
