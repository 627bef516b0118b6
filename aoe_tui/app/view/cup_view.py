"""What the cup view shows, computed from `cup.json` without widgets: rounds as columns, heats as boxes.

Each heat box lists its entrants in seat order (territory, and once decided the place, points and durable
time), its outcome (winner and the reason, forfeits) and its attempts (each with its outcome). Entrant ids
are player text: the screen shows them literally.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.domain.clock import format_clock


@dataclass(frozen=True)
class HeatBox:
    round: int
    heat: int
    title: str
    lines: list[str]
    state: str  # "decided", "playing" or "waiting"
    replay: Path | None  # the attempt that decided it, else the latest played


@dataclass(frozen=True)
class RoundColumn:
    round: int
    title: str
    heats: list[HeatBox]
    advanced: list[str]


@dataclass(frozen=True)
class CupView:
    title: str
    summary: str
    columns: list[RoundColumn]
    winner_line: str


def _seat_line(entrant: str, territory: str, row: dict[str, Any] | None, forfeit: bool) -> str:
    if forfeit:
        return f"{entrant} @ {territory} · forfeit"
    if row is None:
        return f"{entrant} @ {territory}"
    durable = f" · durable {format_clock(row['durable_at_ms'])}" if row["durable_at_ms"] is not None else ""
    return f"#{row['place']} {entrant} @ {territory} · {row['points']} pts{durable}"


def heat_box(cup_dir: Path, entry: dict[str, Any], heat: dict[str, Any], playing: bool) -> HeatBox:
    order = {row["entrant"]: row for row in heat.get("order") or []}
    seats = heat["seats"]
    entrants = (
        sorted(heat["entrants"], key=lambda e: order[e]["place"] if e in order else 99) if order else heat["entrants"]
    )
    lines = [_seat_line(e, seats.get(e, "?"), order.get(e), e in heat.get("forfeits", [])) for e in entrants]
    if heat["winner_decided"]:
        lines.append(f"winner {heat['winner'] or 'none'}")
        lines.append(heat["reason"] or "")
        state = "decided"
    else:
        state = "playing" if playing else "waiting"
        lines.append("playing now" if playing else "to play")
    attempts = heat.get("attempts") or []
    if attempts:
        lines.append("attempts: " + " · ".join(f"a{a['attempt']} {a['outcome']}" for a in attempts))
    chosen = next((a for a in attempts if a["attempt"] == heat.get("decided_by")), attempts[-1] if attempts else None)
    replay = cup_dir / chosen["output"] if chosen is not None else None
    return HeatBox(entry["round"], heat["heat"], f"heat {heat['heat']}", lines, state, replay)


def cup_view(cup_dir: Path, checkpoint: dict[str, Any], playing: set[tuple[int, int]] | None = None) -> CupView:
    playing = playing or set()
    columns = []
    for entry in checkpoint.get("rounds", []):
        title = "Final" if entry["final"] else f"Round {entry['round']}"
        columns.append(
            RoundColumn(
                entry["round"],
                f"{title} · {len(entry['field'])} entrants",
                [heat_box(cup_dir, entry, h, (entry["round"], h["heat"]) in playing) for h in entry["heats"]],
                [f"{row['entrant']}: {row['why']}" for row in entry.get("advanced") or []],
            )
        )
    heats = [h for c in columns for h in c.heats]
    decided = sum(h.state == "decided" for h in heats)
    winner = checkpoint.get("winner")
    return CupView(
        title=f"{checkpoint.get('display_name') or checkpoint['cup_id']} · season {checkpoint['season']}",
        summary=f"{len(checkpoint.get('entrants', []))} entrants · {decided}/{len(heats)} heats drawn decided · "
        f"seed {checkpoint['seed']}",
        columns=columns,
        winner_line=(
            f"winner {winner}: {checkpoint.get('winner_reason') or ''}"
            if winner
            else "cup complete, no winner: " + str(checkpoint.get("winner_reason"))
            if checkpoint.get("state") == "complete"
            else "no winner yet"
        ),
    )
