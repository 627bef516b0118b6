"""What the app shows for a series or benchmark folder, read from the folder's own files.

Standings come from `standings` (recomputed from the round matches); the
rounds list and the rotation grid come from every `round-NNN/` folder,
decided or not, so a running or interrupted series is still inspectable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aoe_tui.analysis.standings import benchmark_standings, seats_of, series_standings
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.series_files import (
    BENCHMARK_FILE,
    BENCHMARK_SCHEMA,
    SERIES_FILE,
    SERIES_SCHEMA,
    benchmark_arena_dirs,
    folder_kind,
    read_checkpoint,
    round_dirs,
)

Outcome = Literal["won", "durable", "lost", "forfeit", "undecided"]


@dataclass
class RoundRow:
    number: int
    path: Path
    state: str  # finished, aborted, unfinished, unreadable
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


def _round_row(number: int, path: Path) -> tuple[RoundRow, list]:
    try:
        match = load_match(path)
    except AoeError as error:
        return RoundRow(number, path, "unreadable", {}, {}, None, 0, error=str(error)), []
    world = match.world
    state = world.match_state if world.match_state in ("finished", "aborted") else "unfinished"
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
    order = (
        [t.id for t in match.manifest.territories]
        if match.manifest is not None
        else [e.territory for e in match.events if e.kind == "territory_registered"]
    )  # type: ignore[attr-defined]
    return RoundRow(number, path, state, seats, outcomes, winner, world.elapsed_ms, territory_order=order), decided


def series_overview(path: Path) -> SeriesOverview:
    return _series(Path(path))[0]


def _series(path: Path) -> tuple[SeriesOverview, list]:
    checkpoint = read_checkpoint(path / SERIES_FILE, SERIES_SCHEMA) if (path / SERIES_FILE).exists() else {}
    rows, seats = [], []
    for number, folder in round_dirs(path):
        row, decided = _round_row(number, folder)
        rows.append(row)
        seats += decided
    territories = list(
        dict.fromkeys(
            [t for row in rows for t in row.territory_order] + sorted({t for row in rows for t in row.seats.values()})
        )
    )
    return SeriesOverview(
        path,
        checkpoint.get("arena_id") or path.name,
        checkpoint.get("rounds_requested"),
        rows,
        series_standings(seats),
        territories,
    ), seats


def benchmark_overview(path: Path) -> BenchmarkOverview:
    path = Path(path)
    arenas, seats = [], []
    for _, folder in benchmark_arena_dirs(path):
        arena, arena_seats = _series(folder)
        arenas.append(arena)
        seats += arena_seats
    file = path / BENCHMARK_FILE
    checkpoint = read_checkpoint(file, BENCHMARK_SCHEMA) if file.exists() else {}
    return BenchmarkOverview(path, checkpoint.get("suite_id") or path.name, arenas, benchmark_standings(seats))


def overview(path: Path) -> SeriesOverview | BenchmarkOverview:
    kind = folder_kind(path)
    if kind == "series":
        return series_overview(path)
    if kind == "benchmark":
        return benchmark_overview(path)
    raise AoeError(f"{path}: not a series or benchmark folder (no series.json, benchmark.json or round-NNN/)")
