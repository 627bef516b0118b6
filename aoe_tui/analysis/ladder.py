"""The ladder: everyone ever raced, rated with its uncertainty and traced to the matches behind it.

Every decided match found under the paths (single matches, series, benchmarks, cups) is read again (never a
stored rating) and is one ranking of its seats: durable first by time, then points, then time to points,
equal seats tied (`domain.cup_rules.heat_order`). A seat unavailable through no fault of its own (a
forfeit) is left out of its match; a match not finished, or left with fewer than two seats, is left out;
so are attempts set aside to be played again (a series' `round-NNN.<why>-N`, a cup's attempts that
`cup.json` does not say decided its heat).

The ratings are openskill's Plackett-Luce model (defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300), the
matches in start order (the UTC stamp in a match's name or path, then the path in natural order), so the
same matches always give the same ladder. Per entry: mu, sigma, the conservative rating mu - 3 sigma,
matches, wins, durable deployments with the durable rate's 95% Wilson interval, the matches behind it, and
for the top entries the model's probability that each beats each other.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openskill.models import PlackettLuce

from aoe_tui.domain.cup_rules import heat_order, seat_results
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.world import World
from aoe_tui.store.cup_files import CUP_FILE, read_cup_checkpoint
from aoe_tui.store.match_layout import EVENTS, WORLD
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.series_source import SeriesSource, bundle_kind, open_collection

By = Literal["entrant", "config"]
TOP_PAIRS = 5  # the top entries whose pairwise win probabilities are given
Z95 = 1.959963984540054
SET_ASIDE = re.compile(r"\.(interrupted|unavailable|failed|host-lost|previous)-\d+$")
STAMP = re.compile(r"(\d{8}-\d{6})")
MATCH_FILES = (".match.json", ".series.json", ".benchmark.json")  # a match, or an exported series or benchmark


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a rate (None when there were no trials)."""
    if trials == 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def distinguishable(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two 95% intervals do not overlap (None: nothing to tell apart)."""
    if a is None or b is None:
        return False
    return a[0] > b[1] or b[0] > a[1]


@dataclass(frozen=True)
class RatedSeat:
    entrant: str
    config: tuple[str | None, str | None, str | None]  # (adapter, model, reasoning_effort)
    place: int
    won: bool
    durable: bool


@dataclass(frozen=True)
class RatedMatch:
    """One decided match as the ladder reads it: its seats in their places."""

    source: str
    start: tuple
    seats: tuple[RatedSeat, ...]


@dataclass
class Entry:
    entrant: str
    config: dict[str, str | None]
    rating: Any
    matches: int = 0
    wins: int = 0
    durable: int = 0
    sources: list[str] = field(default_factory=list)
    history: list[tuple[int, float, float]] = field(default_factory=list)  # (match index, mu, sigma)


def _natural(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def start_key(source: str, name: str) -> tuple:
    stamp = STAMP.search(name) or STAMP.search(source)
    return (stamp.group(1) if stamp else "", _natural(source))


def rated_match(source: str, name: str, world: World, agents: dict[str, Any]) -> RatedMatch | None:
    """The match's ranking of its counted seats, or None when it is left out."""
    if world.match_state != "finished":
        return None
    seats = [s for s in seat_results(world) if not s.unavailable]
    if len(seats) < 2:
        return None
    winner = world.territories[world.winner].agent if world.winner in world.territories else None
    rated = []
    for row in heat_order(seats):
        info = agents.get(row["entrant"])
        config = (
            getattr(info, "adapter", None),
            getattr(info, "model", None)
            or (world.agents[row["entrant"]].model if row["entrant"] in world.agents else None),
            getattr(info, "reasoning_effort", None),
        )
        rated.append(
            RatedSeat(row["entrant"], config, row["place"], row["entrant"] == winner, row["durable_at_ms"] is not None)
        )
    return RatedMatch(source, start_key(source, name), tuple(rated))


def _decided_cup_attempts(cup_dir: Path) -> set[Path]:
    try:
        checkpoint = read_cup_checkpoint(cup_dir / CUP_FILE)
    except AoeError:
        return set()
    return {
        (cup_dir / a["output"]).resolve()
        for r in checkpoint.get("rounds", [])
        for h in r.get("heats", [])
        for a in h.get("attempts", [])
        if a.get("outcome") == "decided"
    }


def match_paths(paths: Iterable[Path]) -> Iterator[Path]:
    """Every match folder and `*.match.json` under the paths, once, set-aside attempts left out."""
    seen: set[Path] = set()
    for root in paths:
        root = Path(root)
        if not root.exists():
            raise AoeError(f"{root}: no such file or directory")
        candidates: list[Path] = []
        if root.is_file() or root.name == EVENTS:
            candidates = [root]
        else:
            for path in sorted(root.rglob("*")):
                if path.is_file() and path.name.endswith(MATCH_FILES):
                    candidates.append(path)
                elif path.is_dir() and ((path / EVENTS).is_file() or (path / WORLD).is_file()):
                    candidates.append(path)
            if (root / EVENTS).is_file() or (root / WORLD).is_file():
                candidates.append(root)
        cups = {
            p.parent for p in ([root] if root.is_dir() else []) + list(root.rglob(CUP_FILE) if root.is_dir() else [])
        }
        decided: dict[Path, set[Path]] = {}
        for cup in cups:
            if (cup / CUP_FILE).is_file():
                decided[cup.resolve()] = _decided_cup_attempts(cup)
        for path in candidates:
            resolved = path.resolve()
            if resolved in seen or any(SET_ASIDE.search(part) for part in path.parts):
                continue
            owner = next((c for c in decided if resolved.is_relative_to(c)), None)
            if owner is not None and resolved not in decided[owner]:
                continue
            seen.add(resolved)
            yield path


def read_matches(paths: Iterable[Path]) -> list[RatedMatch]:
    """The decided matches under the paths, in start order."""
    found = []
    for path in match_paths(paths):
        try:
            if path.is_file() and bundle_kind(path) is not None:  # an exported series or benchmark: its rounds
                found += _bundle_matches(path)
                continue
            match = load_match(path)
        except AoeError:
            continue
        rated = rated_match(str(path), match.name, match.world, match.agents)
        if rated is not None:
            found.append(rated)
    found.sort(key=lambda m: m.start)
    return found


def _bundle_matches(path: Path) -> list[RatedMatch]:
    source = open_collection(path)
    series = [source] if isinstance(source, SeriesSource) else [s for _, s in source.arenas]
    found = []
    for one in series:
        for number, match in one.decided_rounds():
            rated = rated_match(f"{one.location}/round-{number:03d}", match.name, match.world, match.agents)
            if rated is not None:
                found.append(rated)
    return found


def _config_json(config: tuple[str | None, str | None, str | None]) -> dict[str, str | None]:
    return {"adapter": config[0], "model": config[1], "reasoning_effort": config[2]}


def rate(matches: list[RatedMatch], by: By = "entrant", model: PlackettLuce | None = None) -> list[Entry]:
    """Every entry rated over the matches, in the order given; best first (rating, mu, then name)."""
    model = model or PlackettLuce()
    entries: dict[tuple, Entry] = {}
    for index, match in enumerate(matches):
        keys = []
        for seat in match.seats:
            key: tuple = (seat.entrant, seat.config) if by == "entrant" else seat.config
            if key not in entries:
                entries[key] = Entry(seat.entrant, _config_json(seat.config), model.rating(name=str(key)))
            elif by == "config" and seat.entrant not in entries[key].entrant.split(", "):
                entries[key].entrant = ", ".join(sorted([*entries[key].entrant.split(", "), seat.entrant]))
            keys.append(key)
        if len(set(keys)) < len(keys):  # one entry twice in a match (merged configs): rated once, its best place
            firsts: dict[tuple, RatedSeat] = {}
            for key, seat in zip(keys, match.seats, strict=True):
                firsts.setdefault(key, seat)
            pairs = list(firsts.items())
        else:
            pairs = list(zip(keys, match.seats, strict=True))
        if len(pairs) < 2:
            continue
        teams = [[entries[key].rating] for key, _ in pairs]
        rated = model.rate(teams, ranks=[float(seat.place) for _, seat in pairs])
        for (key, seat), team in zip(pairs, rated, strict=True):
            entry = entries[key]
            entry.rating = team[0]
            entry.matches += 1
            entry.wins += seat.won
            entry.durable += seat.durable
            entry.sources.append(match.source)
            entry.history.append((index, team[0].mu, team[0].sigma))
    ordered = list(entries.values())
    ordered.sort(key=lambda e: (-(e.rating.mu - 3 * e.rating.sigma), -e.rating.mu, e.entrant, str(e.config)))
    return ordered


def entry_row(entry: Entry) -> dict[str, Any]:
    mu, sigma = entry.rating.mu, entry.rating.sigma
    interval = wilson(entry.durable, entry.matches)
    return {
        "entrant": entry.entrant,
        "config": entry.config,
        "mu": round(mu, 6),
        "sigma": round(sigma, 6),
        "rating": round(mu - 3 * sigma, 6),
        "matches": entry.matches,
        "wins": entry.wins,
        "durable": entry.durable,
        "durable_rate": round(entry.durable / entry.matches, 6) if entry.matches else None,
        "durable_rate_95": [round(interval[0], 6), round(interval[1], 6)] if interval else None,
        "win_rate_95": [round(v, 6) for v in wilson(entry.wins, entry.matches) or ()] or None,
        "replays": entry.sources,
    }


def ladder_rows(entries: list[Entry], model: PlackettLuce | None = None) -> list[dict[str, Any]]:
    model = model or PlackettLuce()
    rows = [entry_row(e) for e in entries]
    top = entries[:TOP_PAIRS]
    for i, entry in enumerate(top):
        rows[i]["beats"] = {
            other.entrant if other.entrant != entry.entrant else f"{other.entrant} ({other.config['model']})": round(
                model.predict_win([[entry.rating], [other.rating]])[0], 6
            )
            for j, other in enumerate(top)
            if j != i
        }
    return rows


def ladder_report(paths: Iterable[Path], by: By = "entrant", history: bool = False) -> dict[str, Any]:
    """`aoe ladder --json`: `{"ladder": [...], "matches": N, "by"}` (with `history`: per ladder row, its
    (match index, mu, sigma) after each match it played)."""
    matches = read_matches(paths)
    entries = rate(matches, by)
    report: dict[str, Any] = {"ladder": ladder_rows(entries), "matches": len(matches), "by": by}
    if history:
        report["history"] = [e.history for e in entries]  # aligned with "ladder" (an id may come with two configs)
    return report


def ladder_table(report: dict[str, Any]) -> list[str]:
    lines = [
        f"{'#':>3} {'entrant':<22} {'model':<28} {'rating':>7} {'mu':>7} {'sigma':>6} {'matches':>7} {'wins':>5} "
        "durable (95%)"
    ]
    for place, row in enumerate(report["ladder"], 1):
        interval = row["durable_rate_95"]
        durable = (
            f"{row['durable']}/{row['matches']} ({interval[0]:.0%}-{interval[1]:.0%})"
            if interval is not None
            else "n/a"
        )
        lines.append(
            f"{place:>3} {row['entrant'][:22]:<22} {str(row['config']['model'])[:28]:<28} {row['rating']:>7.2f} "
            f"{row['mu']:>7.2f} {row['sigma']:>6.2f} {row['matches']:>7} {row['wins']:>5} {durable}"
        )
    lines.append(f"{report['matches']} decided matches, rated in start order (openskill Plackett-Luce)")
    top = report["ladder"][:2]
    if len(top) == 2 and "beats" in top[0]:
        p = next(iter(top[0]["beats"].values()))
        lines.append(f"P({top[0]['entrant']} beats {top[1]['entrant']}) = {p:.2f}")
    return lines
