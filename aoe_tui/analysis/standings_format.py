"""Standings as cells a person reads, shared by `aoe standings` and the app's standings table.

Unknown figures read "n/a", never 0; times are the match clock (M:SS); cost
is US dollars from the recorded micro-dollars.
"""

from __future__ import annotations

from typing import Any

from aoe_tui.domain.clock import format_clock

NA = "n/a"

COLUMNS = (
    "agent",
    "model",
    "rounds",
    "wins",
    "durable",
    "median durable",
    "usage",
    "tokens in",
    "tokens out",
    "cost",
    "cost/durable",
    "forfeits",
)


def usd(microusd: int | None) -> str:
    return NA if microusd is None else f"${microusd / 1_000_000:.4f}"


def count(value: int | None) -> str:
    return NA if value is None else f"{value:,}"


def row_label(row: dict[str, Any]) -> str:
    """An agent id for a series row; `model · adapter · effort` for a benchmark's model configuration."""
    if "agent" in row:
        return str(row["agent"])
    return (
        " · ".join(
            str(part)
            for part in (row.get("model"), row.get("adapter"), row.get("reasoning_effort"))
            if part is not None
        )
        or NA
    )


def standing_cells(row: dict[str, Any]) -> list[str]:
    """One row's cells in `COLUMNS` order."""
    median = row.get("median_durable_ms")
    return [
        row_label(row),
        str(row.get("model") or NA),
        str(row["appearances"]),
        str(row["wins"]),
        str(row["durable_deployments"]),
        NA if median is None else format_clock(median),
        f"{row['usage_recorded']}/{row['appearances']}",
        count(row["input_tokens"]),
        count(row["output_tokens"]),
        usd(row["cost_microusd"]),
        usd(row["cost_per_durable_microusd"]),
        str(row.get("forfeits", 0)),
    ]


def failure_text(failures: dict[str, int]) -> str:
    return ", ".join(f"{source} {n}" for source, n in failures.items()) or "none"


def standings_table(rows: list[dict[str, Any]]) -> list[str]:
    """Plain text lines: a header and one aligned line per row (benchmark rows add milestones and failures)."""
    columns = list(COLUMNS)
    cells = [standing_cells(row) for row in rows]
    if rows and "milestone_passes" in rows[0]:
        columns += ["milestones", "failures"]
        for row, line in zip(rows, cells):
            available = row["milestones_available"]
            line += [
                f"{row['milestone_passes']}/{NA if available is None else available}",
                failure_text(row["failures"]),
            ]
    widths = [max(len(column), *(len(line[i]) for line in cells)) for i, column in enumerate(columns)]
    return ["  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip() for line in [columns, *cells]]
