"""What a match page shows, computed from a saved match: header, replay data, tables and the race chart.

The replay runs in the page (`assets/replay.js`) from the events embedded compactly: columns of small
integers into one string table (times, kinds, territories, milestones, summaries), gzip-compressed and
base64-encoded when that is smaller than the columns themselves. The script folds the four milestone
kinds exactly as the reducer does (`milestone_state` below says how a milestone's state reads), so the
page's milestones at any `#t=` equal `reduce()` of the events up to that moment.
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aoe_tui.analysis.match_analyses import match_analyses
from aoe_tui.analysis.standings_format import usd
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.event_text import actor, summary
from aoe_tui.domain.events import EventBase
from aoe_tui.domain.reducer import apply_at
from aoe_tui.domain.world import MilestoneState, World
from aoe_tui.publish.text import Scrubber, script_json
from aoe_tui.store.markers import MARKER_KINDS
from aoe_tui.store.saved_match import SavedMatch

MILESTONE_KINDS = ("milestone_evaluation_started", "milestone_passed", "milestone_failed", "milestone_revoked")
STATES = ("pending", "evaluating", "passed", "failed")
COMPRESS_ABOVE = 64 * 1024
MAX_MARKERS = 400
OUTPUT_LIMIT = 20_000


def milestone_state(milestone: MilestoneState | None) -> str:
    """pending | evaluating | passed | failed: what the page shows for one milestone of the world."""
    if milestone is None:
        return "pending"
    if milestone.passed:
        return "passed"
    if milestone.evaluating:
        return "evaluating"
    if milestone.failure_category is not None:
        return "failed"
    return "pending"


@dataclass
class MatchSummary:
    """One match as the index and the archive list it (kept in the site's state between runs)."""

    slug: str
    name: str
    arena: str
    winner: str
    duration: str
    duration_ms: int
    state: str
    agents: list[str]
    events: int
    recorded: float  # the source's modification time: the latest results come first

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def milestone_ids(match: SavedMatch) -> list[str]:
    manifest = match.manifest
    ids = [m.id for m in manifest.build.milestones] if manifest is not None and manifest.build else []
    for territory in match.world.territories.values():
        ids += [m for m in territory.milestones if m not in ids]
    return ids


def territory_ids(match: SavedMatch) -> list[str]:
    ids = [t.id for t in match.manifest.territories] if match.manifest is not None else []
    return ids + [t for t in match.world.territories if t not in ids]


def summarize(match: SavedMatch, slug: str, recorded: float, scrub: Scrubber) -> MatchSummary:
    world = match.world
    winner = world.winner
    if winner and (agent := world.territories.get(winner)) is not None and agent.agent:
        winner = f"{winner} ({agent.agent})"
    return MatchSummary(
        slug=slug,
        name=scrub.text(match.name, 300),
        arena=scrub.text(match.arena_name, 300),
        winner=scrub.text(winner or "none", 300),
        duration=format_clock(world.elapsed_ms),
        duration_ms=world.elapsed_ms,
        state=world.match_state,
        agents=[scrub.text(a, 200) for a in match.agents],
        events=len(match.events),
        recorded=recorded,
    )


def _packed_events(events: Sequence[EventBase], scrub: Scrubber) -> tuple[dict[str, Any], list[list[Any]]]:
    """The events as columns over one string table, and the markers of the scrubber."""
    strings: dict[str, int] = {}

    def code(text: str | None) -> int:
        if text is None:
            return -1
        found = strings.get(text)
        if found is None:
            found = strings[text] = len(strings)
        return found

    kinds: dict[str, int] = {}
    times, kind_col, territory_col, milestone_col, actor_col, summary_col = [], [], [], [], [], []
    markers: list[list[Any]] = []
    cleaned: dict[str, str] = {}
    for event in events:
        times.append(event.elapsed_ms)
        kind_col.append(kinds.setdefault(event.kind, len(kinds)))
        territory_col.append(code(event.territory_id))
        milestone_col.append(code(getattr(event, "milestone", None)))
        actor_col.append(code(actor(event)))
        said = summary(event)
        text = cleaned.get(said)
        if text is None:
            text = cleaned[said] = scrub.text(said, 400)
        summary_col.append(code(text))
        marker = MARKER_KINDS.get(event.kind)
        if marker is not None and len(markers) < MAX_MARKERS:
            markers.append([event.elapsed_ms, marker, scrub.text(f"{actor(event)}: {said}", 200)])
    columns = {
        "strings": [scrub.text(s, 400) for s in strings],
        "kinds": list(kinds),
        "t": times,
        "k": kind_col,
        "r": territory_col,
        "m": milestone_col,
        "a": actor_col,
        "s": summary_col,
    }
    return columns, markers


def encoded_log(columns: dict[str, Any]) -> dict[str, str]:
    """The columns as JSON text, or gzip + base64 when that is smaller."""
    text = json.dumps(columns, ensure_ascii=False, separators=(",", ":"))
    if len(text) > COMPRESS_ABOVE:
        packed = base64.b64encode(gzip.compress(text.encode(), 6)).decode()
        if len(packed) < len(text):
            return {"encoding": "gzip+base64", "body": packed}
    return {"encoding": "json", "body": text}


def race_steps(match: SavedMatch, events: Sequence[EventBase]) -> dict[str, list[list[int]]]:
    """Per territory, its points as steps [time, points]: the reducer's own fold of passes and revokes."""
    world = World()
    steps: dict[str, list[list[int]]] = {t: [[0, 0]] for t in territory_ids(match)}
    for event in events:
        if event.kind not in ("milestone_passed", "milestone_revoked"):
            continue
        apply_at(world, event, event.sequence, event.elapsed_ms)
        territory = world.territories.get(event.territory_id or "")
        if territory is None:
            continue
        line = steps.setdefault(event.territory_id or "", [[0, 0]])
        if line[-1][1] != territory.milestone_points:
            line.append([event.elapsed_ms, territory.milestone_points])
    return steps


def race_chart(steps: dict[str, list[list[int]]], duration_ms: int, width: int = 900, height: int = 220) -> dict:
    """Polylines of the race chart (SVG coordinates), one per territory, and the scale."""
    top = max([points for line in steps.values() for _, points in line] + [1])
    span = max(duration_ms, 1)
    lines = []
    for index, (territory, line) in enumerate(steps.items()):
        coords: list[str] = []
        last_y: float = height
        for at, points in line:
            x = round(at / span * width, 1)
            y = round(height - points / top * (height - 10), 1)
            if coords:
                coords.append(f"{x},{last_y}")
            coords.append(f"{x},{y}")
            last_y = y
        coords.append(f"{width},{last_y}")
        lines.append({"territory": territory, "points": " ".join(coords), "colour": index % 12, "final": line[-1][1]})
    return {"width": width, "height": height, "top": top, "lines": lines}


def _tool_calls(
    match: SavedMatch, events: Sequence[EventBase], scrub: Scrubber
) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """The "How they fought" rows and each agent's tool calls (time, kind, description, command, output)."""
    starts: dict[str, int] = {}
    for event in events:
        if event.kind == "agent_started" and event.agent_id and event.agent_id not in starts:
            starts[event.agent_id] = event.elapsed_ms
    rows, calls = [], {}
    for agent_id, (analysis, source) in match_analyses(match).items():
        metrics, info = analysis.metrics, match.agents.get(agent_id)
        start = starts.get(agent_id, 0)
        first = metrics.first_mutation_after_ms
        rows.append(
            {
                "agent": scrub.text(agent_id, 200),
                "model": scrub.text((info.model if info else None) or analysis.model or "unavailable", 200),
                "first_change": format_clock(start + first) if first is not None else "—",
                "discovery": metrics.discoveries,
                "changes": metrics.mutations,
                "lifecycle": metrics.lifecycle_actions,
                "checks": metrics.validations,
                "errors": metrics.tool_errors,
                "architecture": scrub.text(
                    ", ".join(analysis.architecture.technologies + analysis.architecture.service_units) or "—", 1000
                ),
                "source": scrub.text(source, 200),
            }
        )
        trace = match.tool_trace(agent_id)
        agent_calls = []
        for action in analysis.actions:
            entry = trace[action.index] if 0 <= action.index < len(trace) else None
            output = entry.output if entry is not None else action.output_excerpt
            at = action.started_after_ms
            agent_calls.append(
                {
                    "time": format_clock(start + at) if at is not None else "—",
                    "ms": start + at if at is not None else None,
                    "kind": str(action.kind),
                    "description": scrub.text(action.description or (entry.name if entry else "") or "", 2000),
                    "command": scrub.text(action.command or "", 4000),
                    "output": scrub.text(output, OUTPUT_LIMIT) if output is not None else "",
                    "failed": action.success is False,
                }
            )
        calls[scrub.text(agent_id, 200)] = agent_calls
    return rows, calls


def _agents(match: SavedMatch, scrub: Scrubber) -> list[dict[str, Any]]:
    rows = []
    for agent_id, info in match.agents.items():
        state = match.world.agents.get(agent_id)
        outcome = "unavailable"
        if state is not None:
            outcome = state.terminal_state or ("running" if state.running else "—")
        rows.append(
            {
                "agent": agent_id,
                "territory": info.territory or "—",
                "model": info.model or "unavailable",
                "harness": info.adapter or "unavailable",
                "reasoning": info.reasoning_effort or "unavailable",
                "outcome": outcome,
                "input": f"{state.input_tokens:,}" if state is not None and state.tokens_known else "n/a",
                "output": f"{state.output_tokens:,}" if state is not None and state.tokens_known else "n/a",
                "cost": usd(state.cost_microusd) if state is not None and state.cost_known else "n/a",
                "summary": (match.results.get(agent_id) or {}).get("summary") or "",
            }
        )
    return scrub.value(rows, 500)


def _service_map(match: SavedMatch, scrub: Scrubber) -> dict[str, Any] | None:
    visual = match.visualization or (match.manifest.visualization if match.manifest is not None else None)
    if visual is None or not visual.nodes:
        return None
    width, height = 900, 320
    nodes = {
        node.id: {
            "id": node.id,
            "name": node.display_name,
            "kind": node.kind,
            "milestone": node.milestone,
            "x": round(40 + node.x / 100 * (width - 80), 1),
            "y": round(30 + node.y / 100 * (height - 60), 1),
        }
        for node in visual.nodes
    }
    links = [
        {
            "from": link.from_,
            "to": link.to,
            "label": link.label or "",
            **{
                "x1": nodes[link.from_]["x"],
                "y1": nodes[link.from_]["y"],
                "x2": nodes[link.to]["x"],
                "y2": nodes[link.to]["y"],
            },
        }
        for link in visual.links
        if link.from_ in nodes and link.to in nodes
    ]
    return scrub.value({"width": width, "height": height, "nodes": list(nodes.values()), "links": links}, 300)


def match_context(match: SavedMatch, slug: str, scrub: Scrubber) -> dict[str, Any]:
    """Everything the match template needs, every player string already scrubbed."""
    world = match.world
    territories = territory_ids(match)
    milestones = milestone_ids(match)
    events = list(match.events)  # a long log's events are decoded on each access: once, here
    columns, markers = _packed_events(events, scrub)
    fought, calls = _tool_calls(match, events, scrub)
    steps = race_steps(match, events) if events else {}
    duration = max(world.elapsed_ms, events[-1].elapsed_ms if events else 0)
    winner = world.winner
    winner_text = "none"
    if winner:
        holder = world.territories.get(winner)
        winner_text = f"{winner} ({holder.agent})" if holder is not None and holder.agent else winner
    panels = []
    for territory_id in territories:
        territory = world.territories.get(territory_id)
        panels.append(
            {
                "id": territory_id,
                "agent": territory.agent if territory is not None and territory.agent else "—",
                "points": territory.milestone_points if territory is not None else 0,
                "state": territory.competitor_state if territory is not None else "preparing",
                "milestones": [
                    {"id": m, "state": milestone_state(territory.milestones.get(m) if territory else None)}
                    for m in milestones
                ],
            }
        )
    replay = {
        "duration_ms": duration,
        "territories": territories,
        "milestones": milestones,
        "fog": match.hides_topology,
        "markers": markers,
        "log": encoded_log(columns),
        "milestone_kinds": list(MILESTONE_KINDS),
    }
    context = {
        "slug": slug,
        "name": match.name,
        "arena": match.arena_name,
        "winner": winner_text,
        "finish_reason": world.finish_reason or "",
        "state": world.match_state,
        "duration": format_clock(duration),
        "duration_ms": duration,
        "events": len(events),
        "has_timeline": match.has_timeline,
        "panels": panels,
        "fought": fought,
        "calls": calls,
        "agents": _agents(match, scrub),
        "service_map": _service_map(match, scrub),
        "race": race_chart(steps, duration) if steps else None,
        "markers": markers,
        "provenance": match.provenance or {},
        "skipped": match.skipped_files(),
    }
    cleaned = scrub.value({k: v for k, v in context.items() if k not in ("fought", "calls", "agents", "markers")}, 2000)
    cleaned.update(fought=fought, calls=calls, agents=context["agents"], markers=markers)
    replay["territories"] = scrub.value(territories, 200)
    replay["milestones"] = scrub.value(milestones, 200)
    cleaned["replay_json"] = script_json(replay)
    return cleaned
