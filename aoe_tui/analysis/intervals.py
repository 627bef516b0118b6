"""How sure standings are: 95% intervals for win and durable rates, and whether the leader stands apart.

A series or benchmark ranks a handful of rounds; the intervals (Wilson score, as the ladder's) say how much
a rate could move, and the leader is called distinguishable from the next only when their win-rate
intervals do not overlap (else: durable-rate intervals); otherwise the standings say so.
"""

from __future__ import annotations

from typing import Any

from aoe_tui.analysis.ladder import distinguishable, wilson
from aoe_tui.analysis.standings_format import row_label


def _interval(successes: int, trials: int) -> list[float] | None:
    found = wilson(successes, trials)
    return [round(found[0], 4), round(found[1], 4)] if found is not None else None


def standings_intervals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per standings row (same order): its label, and the 95% intervals of its win and durable rates."""
    return [
        {
            "label": row_label(row),
            "win_rate_95": _interval(row["wins"], row["appearances"]),
            "durable_rate_95": _interval(row["durable_deployments"], row["appearances"]),
        }
        for row in rows
    ]


def leader_note(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Whether the leader is distinguishable from the next at 95% (None with fewer than two rows)."""
    if len(rows) < 2:
        return None
    first, second = standings_intervals(rows[:2])
    wins = distinguishable(_pair(first["win_rate_95"]), _pair(second["win_rate_95"]))
    durable = distinguishable(_pair(first["durable_rate_95"]), _pair(second["durable_rate_95"]))
    apart = wins or durable
    leader, next_ = first["label"], second["label"]
    return {
        "leader": leader,
        "next": next_,
        "distinguishable": apart,
        "note": (
            f"{leader} leads {next_} beyond the 95% intervals ({'win' if wins else 'durable'} rate)"
            if apart
            else f"{leader} is not distinguishable from {next_} (their 95% intervals of win and durable rate overlap)"
        ),
    }


def _pair(value: list[float] | None) -> tuple[float, float] | None:
    return (value[0], value[1]) if value is not None else None


def interval_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Plain lines for `aoe standings`: each row's intervals, then the leader's note."""
    lines = ["95% intervals (Wilson):"]
    for item in standings_intervals(rows):
        win, durable = item["win_rate_95"], item["durable_rate_95"]
        lines.append(
            f"  {item['label']}: win rate "
            + (f"{win[0]:.0%}-{win[1]:.0%}" if win else "n/a")
            + ", durable rate "
            + (f"{durable[0]:.0%}-{durable[1]:.0%}" if durable else "n/a")
        )
    note = leader_note(rows)
    if note is not None:
        lines.append(note["note"])
    return lines
