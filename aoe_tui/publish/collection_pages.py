"""What the series, benchmark, cup and ladder pages show: the app's tables (standings with intervals, the
rotation grid, the leaderboard by configuration, a cup's bracket, the ladder's rating over time).

Series and benchmark standings come from `analysis.series_overview` (recomputed from the round matches, as
`aoe standings` does). Cups and the ladder are read tolerantly from their JSON files: their formats are still
settling (issue 28), so a page shows the known parts (rounds and heats, rows and rating histories) and the
whole record below them, and a missing field is left out rather than refused.
"""

from __future__ import annotations

import math
from functools import partial
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aoe_tui.analysis.series_overview import BenchmarkOverview, SeriesOverview
from aoe_tui.analysis.standings_format import NA, count, failure_text, row_label, usd
from aoe_tui.domain.clock import format_clock
from aoe_tui.publish.text import Scrubber

Z95 = 1.959964


def wilson(wins: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def standing_rows(rows: list[dict[str, Any]], scrub: Scrubber) -> list[dict[str, Any]]:
    shown = []
    for row in rows:
        n, wins = row.get("appearances", 0) or 0, row.get("wins", 0) or 0
        low, high = wilson(wins, n)
        median = row.get("median_durable_ms")
        item = {
            "label": row_label(row),
            "model": row.get("model") or NA,
            "appearances": n,
            "wins": wins,
            "rate": _percent(wins / n) if n else NA,
            "rate_value": wins / n if n else 0.0,
            "low": _percent(low),
            "high": _percent(high),
            "low_value": low,
            "high_value": high,
            "durable": row.get("durable_deployments", 0),
            "median": NA if median is None else format_clock(median),
            "usage": f"{row.get('usage_recorded', 0)}/{n}",
            "tokens_in": count(row.get("input_tokens")),
            "tokens_out": count(row.get("output_tokens")),
            "cost": usd(row.get("cost_microusd")),
            "cost_per_durable": usd(row.get("cost_per_durable_microusd")),
            "forfeits": row.get("forfeits", 0),
        }
        if "milestone_passes" in row:
            item["milestones"] = f"{row['milestone_passes']}/{row.get('milestones_available', 0)}"
            item["failures"] = failure_text(row.get("failures") or {})
        shown.append(item)
    return scrub.value(shown, 500)


def interval_chart(rows: list[dict[str, Any]], width: int = 900) -> dict[str, Any]:
    """Win rate bars with their 95% interval, one row per standing."""
    left, span = 260, width - 260 - 120
    bars = []
    for index, row in enumerate(rows):
        bars.append(
            {
                "label": row["label"][:40],
                "y": 8 + index * 24,
                "w": round(row["rate_value"] * span, 1),
                "lo": round(left + row["low_value"] * span, 1),
                "hi": round(left + row["high_value"] * span, 1),
                "text": f"{row['rate']} ({row['low']}–{row['high']})",
                "colour": index % 12,
            }
        )
    return {"width": width, "height": 16 + 24 * len(rows), "left": left, "bars": bars}


def series_context(
    overview: SeriesOverview, title: str, round_slug: Callable[[int], str | None], scrub: Scrubber
) -> dict[str, Any]:
    standings = standing_rows(overview.standings, scrub)
    rounds = [
        {
            "number": row.number,
            "slug": round_slug(row.number),
            "state": row.state,
            "winner": row.winner or "none",
            "duration": format_clock(row.duration_ms),
            "seats": ", ".join(f"{agent} → {territory}" for agent, territory in row.seats.items()),
        }
        for row in overview.rounds
    ]
    grid = [(agent, seats) for agent, seats in overview.grid().items()]
    return scrub.value(
        {
            "title": title,
            "arena_id": overview.arena_id,
            "requested": overview.rounds_requested if overview.rounds_requested is not None else len(overview.rounds),
            "decided": overview.decided,
            "standings": standings,
            "chart": interval_chart(standings),
            "rounds": rounds,
            "territories": overview.territories,
            "grid": grid,
        },
        1000,
    )


def benchmark_context(
    overview: BenchmarkOverview,
    title: str,
    round_slug: Callable[[int, int], str | None],
    scrub: Scrubber,
) -> dict[str, Any]:
    standings = standing_rows(overview.standings, scrub)
    arenas = [
        series_context(arena, arena.path.name, partial(round_slug, index), scrub)
        for index, arena in enumerate(overview.arenas)
    ]
    return {"title": scrub.text(title), "standings": standings, "chart": interval_chart(standings), "arenas": arenas}


def _first(record: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        value = record.get(key)
        if value not in (None, "", [], {}):
            return value
    return None


def cup_ids(record: dict[str, Any], folder: Path) -> tuple[str, str]:
    """(cup id, season) of a cup record: its own fields when it has them, else the folder's names."""
    found = record.get("cup")
    cup: dict[str, Any] = found if isinstance(found, dict) else {}
    cup_id = _first(record, "cup_id", "id") or _first(cup, "id") or folder.parent.name or folder.name
    season = _first(record, "season", "season_id") or _first(cup, "season") or folder.name
    return str(cup_id), str(season)


def _names(value: Any) -> list[str]:
    if isinstance(value, list):
        return [
            str(_first(item, "entrant", "agent", "name", "id") or item) if isinstance(item, dict) else str(item)
            for item in value
        ]
    if isinstance(value, dict):
        return [f"{key}: {item}" for key, item in value.items()]
    return []


def cup_context(
    record: dict[str, Any], folder: Path, matches: list[tuple[str, str, Path]], scrub: Scrubber
) -> dict[str, Any]:
    """A cup page: its facts, a bracket from `rounds[].heats[]` when the record has one, and its matches."""
    cup_id, season = cup_ids(record, folder)
    facts = [(key, value) for key, value in record.items() if isinstance(value, (str, int, float, bool))]
    bracket = []
    rounds = record.get("rounds")
    if isinstance(rounds, dict):
        rounds = [
            dict(value, round=key) if isinstance(value, dict) else {"round": key} for key, value in rounds.items()
        ]
    for index, round_ in enumerate(rounds if isinstance(rounds, list) else [], 1):
        if not isinstance(round_, dict):
            continue
        heats = round_.get("heats")
        if isinstance(heats, dict):
            heats = [
                dict(value, heat=key) if isinstance(value, dict) else {"heat": key} for key, value in heats.items()
            ]
        shown_heats = []
        for number, heat in enumerate(heats if isinstance(heats, list) else [], 1):
            if not isinstance(heat, dict):
                continue
            heat_name = str(_first(heat, "heat", "number", "id") or number)
            by_path = {path.as_posix(): slug for slug, _, path in matches}
            attempts = [a for a in heat.get("attempts") or [] if isinstance(a, dict) and a.get("output") in by_path]
            if attempts:  # each attempt's own match, with how it went
                linked = [
                    (by_path[a["output"]], f"attempt {a.get('attempt', '?')}: {a.get('outcome') or 'played'}")
                    for a in attempts
                ]
            else:
                linked = [
                    (slug, "match")
                    for slug, _, path in matches
                    if f"round-{_first(round_, 'round', 'number') or index}" in path.parts
                    and f"heat-{heat_name}" in path.parts
                ]
            shown_heats.append(
                {
                    "title": f"heat {heat_name}",
                    "winner": _first(heat, "winner", "winner_entrant", "winner_agent"),
                    "entrants": _names(_first(heat, "order", "entrants", "seats", "standings") or []),
                    "matches": linked,
                }
            )
        bracket.append({"title": f"round {_first(round_, 'round', 'number') or index}", "heats": shown_heats})
    context = {
        "title": f"{cup_id} · {season}",
        "facts": facts,
        "bracket": bracket,
        "matches": [(slug, name) for slug, name, _ in matches],
        "record": record,
    }
    return scrub.value(context, 2000)


def ladder_context(record: Any, scrub: Scrubber) -> dict[str, Any] | None:
    """The ladder: its rows (a list, or `rows`/`standings`/`ladder`/`entries` of an object) and, when rows
    carry a `history` of ratings (numbers, or [time, rating] pairs, or objects with `rating`), the chart."""
    if record is None:
        return None
    rows = record if isinstance(record, list) else None
    extra: dict[str, Any] = {}
    if isinstance(record, dict):
        for key in ("rows", "standings", "ladder", "entries", "ratings"):
            if isinstance(record.get(key), list):
                rows = record[key]
                break
        extra = {key: value for key, value in record.items() if not isinstance(value, list)}
    rows = [row for row in rows or [] if isinstance(row, dict)]
    columns = list(
        dict.fromkeys(key for row in rows for key, value in row.items() if not isinstance(value, (list, dict)))
    )
    histories: list[tuple[str, list[tuple[int, float]]]] = []
    for row in rows:
        history = row.get("history")
        if not isinstance(history, list) or not history:
            continue
        values = []
        for index, item in enumerate(history):
            if isinstance(item, (int, float)):
                values.append((index, float(item)))
            elif isinstance(item, list) and len(item) >= 2 and isinstance(item[-1], (int, float)):
                values.append((index, float(item[-1])))
            elif isinstance(item, dict) and isinstance(item.get("rating"), (int, float)):
                values.append((index, float(item["rating"])))
        if values:
            histories.append((str(_first(row, "name", "entrant", "agent", "model", "id") or len(histories)), values))
    chart = None
    if histories:
        width, height = 900, 240
        low = min(v for _, values in histories for _, v in values)
        high = max(v for _, values in histories for _, v in values)
        steps = max(len(values) for _, values in histories) - 1 or 1
        spread = high - low or 1
        lines = [
            {
                "name": name,
                "colour": index % 12,
                "points": " ".join(
                    f"{round(i / steps * width, 1)},{round(height - (v - low) / spread * (height - 10) - 5, 1)}"
                    for i, v in values
                ),
            }
            for index, (name, values) in enumerate(histories)
        ]
        chart = {"width": width, "height": height, "low": round(low), "high": round(high), "lines": lines}
    return scrub.value({"columns": columns, "rows": rows, "chart": chart, "extra": extra}, 2000)


def rated_ladder(report: dict[str, Any], matches_by_source: dict[str, str], scrub: Scrubber) -> dict[str, Any] | None:
    """The ladder `aoe ladder` computes (`analysis.ladder.ladder_report` with history): its table, each
    entry's conservative rating (mu - 3 sigma) after every match it played, and links to the matches behind it
    (`matches_by_source`: a match's source path -> its slug)."""
    rows = []
    for row in report.get("ladder", []):
        config = row.get("config") or {}
        interval = row.get("durable_rate_95")
        rows.append(
            {
                "entrant": row.get("entrant"),
                "model": config.get("model") or NA,
                "harness": config.get("adapter") or NA,
                "rating": f"{row.get('rating', 0):.2f}",
                "mu": f"{row.get('mu', 0):.2f}",
                "sigma": f"{row.get('sigma', 0):.2f}",
                "matches": row.get("matches"),
                "wins": row.get("wins"),
                "durable (95%)": (
                    f"{row.get('durable')}/{row.get('matches')} ({interval[0]:.0%}–{interval[1]:.0%})"
                    if interval
                    else NA
                ),
            }
        )
    if not rows:
        return None
    histories = {
        name: [[index, mu - 3 * sigma] for index, mu, sigma in steps]
        for name, steps in (report.get("history") or {}).items()
    }
    context = ladder_context({"rows": [dict(r, history=histories.get(str(r["entrant"]), [])) for r in rows]}, scrub)
    if context is not None:
        context["extra"] = {"decided matches": report.get("matches"), "rated by": report.get("by")}
        behind = {source for row in report.get("ladder", []) for source in row.get("replays") or []}
        context["links"] = [(slug, source) for source, slug in sorted(matches_by_source.items()) if source in behind]
    return context
