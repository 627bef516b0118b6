"""The rules of a cup, pure: the file, the draw, a heat's outcome, who goes on, the names of its matches.

A cup races a field of entrants larger than an arena's seats. The rules (docs/cups.md says the same):

- **Heats.** A round of n entrants is split into `ceil(n / heat_size)` heats as even as possible (the first
  heats take the one extra entrant); no heat has fewer entrants than the arena's `minimum_territories`, and
  a field that cannot be split so (fewer entrants than that minimum, say) is refused in one line.
- **The draw.** Each round's entrants are shuffled by `random.Random("<seed>/round-<R>")` (the seed is the
  cup's, or one derived from the cup id and the season) and dealt into heats in order; within a heat the
  n-th drawn takes the arena's n-th territory.
- **A heat's order.** Durable deployments first, earliest first; then the highest points; then the earliest
  time to those points; still equal is a tie, broken only for the heat's winner and for advancing, by the
  draw (the earlier seat).
- **Void, forfeit.** A seat unavailable through no fault of its own (its provider, its harness, the
  infrastructure or the arena failed it, or its territory was unavailable; a seat that scored any points,
  became durable or won raced) voids the heat: it is played
  again as the next attempt. After `attempts` void plays, those seats forfeit (a forfeit is never a loss:
  it is left out of the heat's order) and the heat stands on the others. An attempt interrupted (the
  process killed, the match not finished) is played again too, and does not count against `attempts`.
- **Going on.** The next round takes every heat winner, then the best runners-up (in the same order across
  the round's heats: durable first by time, points, time to points, then heat and seat) until the field
  fills whole heats: `ceil(winners / heat_size)` of them. A round of one heat is the final; its winner wins
  the cup.

Every decision is written down with its reason (the engine keeps them in `cup.json`).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aoe_tui.domain.errors import AoeError

NO_FAULT_SOURCES = frozenset({"provider", "harness", "infrastructure", "arena"})
"""Failure sources that void a heat for a seat that did not race: nobody's play."""

CUP_SCHEMA = 1
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


class CupModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CupInfo(CupModel):
    id: str = Field(min_length=1, pattern=ID_PATTERN)
    display_name: str | None = None
    arena: str = Field(min_length=1)
    heat_size: int | None = Field(default=None, ge=1)
    attempts: int = Field(default=2, ge=1)
    seed: int | None = None


class Entrant(CupModel):
    """An `[[agents]]` table without its territory (the draw seats it)."""

    id: str = Field(min_length=1, pattern=ID_PATTERN)
    adapter: str
    model: str
    reasoning_effort: str | None = None
    budget: dict[str, Any] | None = None
    env: list[str] | None = None

    def agent_table(self, territory: str) -> dict[str, Any]:
        """The manifest's `[[agents]]` table of this entrant in `territory`."""
        return {"territory": territory, **self.model_dump(exclude_none=True)}

    @property
    def config(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "model": self.model, "reasoning_effort": self.reasoning_effort}


class CupSpec(CupModel):
    cup: CupInfo
    entrants: list[Entrant] = Field(min_length=1)

    def entrant(self, entrant_id: str) -> Entrant:
        return next(e for e in self.entrants if e.id == entrant_id)

    def check(self, where: str) -> None:
        seen: set[str] = set()
        for index, entrant in enumerate(self.entrants):
            if entrant.id in seen:
                raise AoeError(f"{where}: field entrants[{index}].id: {entrant.id!r} is entered twice")
            seen.add(entrant.id)


# -- season, seed, names ----------------------------------------------------------------------------------


def season_label(when: datetime) -> str:
    """The ISO week of `when`: `2026-W49`."""
    year, week, _ = when.isocalendar()
    return f"{year}-W{week:02d}"


def utc_stamp(when: datetime) -> str:
    return when.strftime("%Y%m%d-%H%M%S")


def default_seed(cup_id: str, season: str) -> int:
    """The seed of a cup without one: from its id and season, so a season's draw is the same on every machine."""
    return int(hashlib.sha256(f"{cup_id}/{season}".encode()).hexdigest()[:12], 16)


def heat_name(cup_id: str, run: str, round_number: int, heat: int, attempt: int) -> str:
    """`opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1` (run: `<season>-<UTC stamp>`)."""
    return f"{cup_id} · {run} · round {round_number} heat {heat} · attempt {attempt}"


def heat_slug(cup_id: str, run: str, round_number: int, heat: int, attempt: int) -> str:
    """`season-opencode-cup-2026-W37-20260913-021918-r1-h2-a1`."""
    return f"season-{cup_id}-{run}-r{round_number}-h{heat}-a{attempt}"


def attempt_path(round_number: int, heat: int, attempt: int) -> str:
    """The attempt's match folder inside the cup folder: `round-R/heat-H/attempt-A`."""
    return f"round-{round_number}/heat-{heat}/attempt-{attempt}"


_NAME = re.compile(
    r"^(?P<cup>[A-Za-z0-9][A-Za-z0-9._-]*) · (?P<run>(?P<season>\S+?)(?:-(?P<stamp>\d{8}-\d{6}))?) · "
    r"round (?P<round>\d+) heat (?P<heat>\d+) · attempt (?P<attempt>\d+)$"
)


@dataclass(frozen=True)
class CupContext:
    """Where a match stands in a cup, read from its name."""

    cup: str
    season: str
    run: str
    stamp: str | None
    round: int
    heat: int
    attempt: int

    def line(self) -> str:
        return f"{self.cup} · season {self.season} · round {self.round} heat {self.heat} · attempt {self.attempt}"

    def to_json(self) -> dict[str, Any]:
        return {
            "cup": self.cup,
            "season": self.season,
            "run": self.run,
            "round": self.round,
            "heat": self.heat,
            "attempt": self.attempt,
        }


def cup_context(name: str) -> CupContext | None:
    """The cup context of a match named in the published format, else None."""
    found = _NAME.match(name or "")
    if found is None:
        return None
    return CupContext(
        cup=found["cup"],
        season=found["season"],
        run=found["run"],
        stamp=found["stamp"],
        round=int(found["round"]),
        heat=int(found["heat"]),
        attempt=int(found["attempt"]),
    )


# -- heats and the draw ---------------------------------------------------------------------------------


def heat_sizes(field: int, heat_size: int, minimum: int) -> list[int]:
    """The heats of a round of `field` entrants: as even as possible, none below `minimum`; else one line."""
    if field < minimum:
        raise AoeError(
            f"a field of {field} entrant{'s' if field != 1 else ''} is too small: the arena needs at least "
            f"{minimum} in a heat"
        )
    count = math.ceil(field / heat_size)
    base, extra = divmod(field, count)
    if base < minimum:
        raise AoeError(
            f"{field} entrants cannot be split into heats of {minimum} to {heat_size}: change heat_size or the field"
        )
    return [base + 1] * extra + [base] * (count - extra)


def round_seed(seed: int, round_number: int) -> str:
    return f"{seed}/round-{round_number}"


def draw(field: list[str], round_number: int, seed: int, heat_size: int, minimum: int) -> list[list[str]]:
    """The heats of a round, each its entrants in seat order (the n-th takes the n-th territory)."""
    sizes = heat_sizes(len(field), heat_size, minimum)
    order = sorted(field)
    random.Random(round_seed(seed, round_number)).shuffle(order)
    heats, at = [], 0
    for size in sizes:
        heats.append(order[at : at + size])
        at += size
    return heats


# -- a heat's outcome -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeatResult:
    """One seat of a finished attempt, as the rules need it."""

    entrant: str
    territory: str
    durable_at_ms: int | None
    points: int
    points_at_ms: int | None  # when the seat reached its points (None: no points)
    unavailable: bool = False  # through no fault of its own (it did not race)
    source: str | None = None  # the failure source, when there is one


def order_key(seat: SeatResult) -> tuple:
    """Durable first by time, then points (more first), then time to them (earlier first)."""
    durable = seat.durable_at_ms
    reached = seat.points_at_ms if seat.points_at_ms is not None else math.inf
    return (durable is None, durable if durable is not None else 0, -seat.points, reached if seat.points else 0)


def heat_order(seats: list[SeatResult]) -> list[dict[str, Any]]:
    """The counted seats best first with their place (equal seats share a place), seat order among equals."""
    ranked = sorted(seats, key=order_key)  # stable: seat order breaks ties
    rows: list[dict[str, Any]] = []
    for index, seat in enumerate(ranked):
        tied = index > 0 and order_key(ranked[index - 1]) == order_key(seat)
        place = rows[-1]["place"] if tied else index + 1
        rows.append(
            {
                "entrant": seat.entrant,
                "territory": seat.territory,
                "place": place,
                "durable_at_ms": seat.durable_at_ms,
                "points": seat.points,
                "points_at_ms": seat.points_at_ms,
            }
        )
    return rows


@dataclass(frozen=True)
class HeatDecision:
    """`stands`: the heat is decided (winner, forfeits, order, reason); else it is played again (reason)."""

    stands: bool
    reason: str
    winner: str | None = None
    forfeits: tuple[str, ...] = ()
    order: tuple[dict[str, Any], ...] = ()
    unavailable: tuple[str, ...] = ()


def decide_heat(seats: list[SeatResult], void_plays: int, attempts: int) -> HeatDecision:
    """A finished attempt's verdict. `void_plays`: earlier attempts of this heat voided by an unavailable seat."""
    missing = tuple(s.entrant for s in seats if s.unavailable)
    if missing and void_plays + 1 < attempts:
        return HeatDecision(
            stands=False,
            reason="void: unavailable through no fault of their own: "
            + ", ".join(f"{s.entrant} ({s.source or 'territory unavailable'})" for s in seats if s.unavailable)
            + f"; played again (attempt {void_plays + 1} of {attempts})",
            unavailable=missing,
        )
    counted = [s for s in seats if not s.unavailable]
    order = heat_order(counted)
    forfeit_text = (
        f"; {', '.join(missing)} forfeit{'s' if len(missing) == 1 else ''} after {attempts} void "
        f"play{'s' if attempts != 1 else ''} (never a loss)"
        if missing
        else ""
    )
    if not order:
        return HeatDecision(True, "no seat raced" + forfeit_text, None, missing, (), missing)
    first = order[0]
    tied = [row["entrant"] for row in order if row["place"] == 1]
    if first["durable_at_ms"] is not None:
        why = f"first durable deployment at {first['durable_at_ms']} ms"
    elif first["points"]:
        why = f"no durable deployment; highest points ({first['points']}), reached at {first['points_at_ms']} ms"
    else:
        why = "no durable deployment and no points"
    if len(tied) > 1:
        why += f"; tied with {', '.join(tied[1:])}, broken by the draw (earlier seat)"
    return HeatDecision(
        True, f"{first['entrant']} wins: {why}{forfeit_text}", first["entrant"], missing, tuple(order), missing
    )


# -- going on -------------------------------------------------------------------------------------------


def advance(heats: list[dict[str, Any]], heat_size: int) -> list[dict[str, str]]:
    """Who goes on from a decided round: `[{entrant, why}]`, heat winners first, then the best runners-up.

    `heats`: each `{"heat", "winner", "order"}` as decided (order rows as `heat_order` gives them)."""
    winners = [(h["heat"], h["winner"]) for h in heats if h.get("winner")]
    size = math.ceil(len(winners) / heat_size) * heat_size
    going = [{"entrant": w, "why": f"won heat {heat}"} for heat, w in winners]
    runners = []
    for h in heats:
        for seat, row in enumerate(h.get("order") or []):
            if row["entrant"] != h.get("winner"):
                key = order_key(
                    SeatResult(
                        row["entrant"], row["territory"], row["durable_at_ms"], row["points"], row["points_at_ms"]
                    )
                )
                runners.append((key, h["heat"], seat, row))
    runners.sort(key=lambda item: item[:3])
    for rank, (_, heat, _, row) in enumerate(runners[: max(0, size - len(going))], 1):
        going.append(
            {
                "entrant": row["entrant"],
                "why": f"best runner-up #{rank} (heat {heat}, place {row['place']}: "
                + (
                    f"durable at {row['durable_at_ms']} ms"
                    if row["durable_at_ms"] is not None
                    else f"{row['points']} points"
                )
                + f") to fill {size // heat_size} whole heat{'s' if size > heat_size else ''}",
            }
        )
    return going


def seat_results(world: Any) -> list[SeatResult]:
    """The seats of a finished match (a `World`), in territory order, as the rules read them."""
    winner = world.territories[world.winner].agent if world.winner in world.territories else None
    seats = []
    for territory_id, territory in world.territories.items():
        agent_id = territory.agent
        if agent_id is None:
            continue
        agent = world.agents.get(agent_id)
        source = agent.failure_source if agent is not None else None
        # A seat that scored, became durable or won raced, whatever failed it afterwards (an agent's session cut
        # by the referee's reboot is the arena's doing, and the adapter stopped at the end the harness's).
        raced = agent_id == winner or territory.durable_at_ms is not None or territory.milestone_points > 0
        unavailable = not raced and (source in NO_FAULT_SOURCES or territory.competitor_state == "unavailable")
        passed = [m.passed_at_ms for m in territory.milestones.values() if m.passed and m.passed_at_ms is not None]
        seats.append(
            SeatResult(
                entrant=agent_id,
                territory=territory_id,
                durable_at_ms=territory.durable_at_ms,
                points=territory.milestone_points,
                points_at_ms=max(passed) if passed and territory.milestone_points else None,
                unavailable=unavailable,
                source=source,
            )
        )
    return seats
