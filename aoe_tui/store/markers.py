"""Moments worth jumping to, and failure stalls.

A replay viewer wants to jump to "when did B pass write-read" or "when did A
start failing the same check over and over", not step through 600 identical
failures. Markers are the notable events; a stall is a run of identical
failures of one milestone on one territory (same category and detail, no
pass in between), shown as one row with its count and span.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aoe_tui.domain.events import OPERATOR_KINDS, EventBase

MARKER_KINDS = {
    "milestone_passed": "pass",
    "milestone_revoked": "revoked",
    "durable_deployment_completed": "durable",
    "match_finished": "finish",
    "infrastructure_failure": "infra",
    **{kind: "operator" for kind in OPERATOR_KINDS},
}


@dataclass(frozen=True)
class Marker:
    position: int
    elapsed_ms: int
    kind: str
    territory: str | None
    label: str


@dataclass
class Stall:
    """Consecutive identical failures of one milestone on one territory."""

    territory: str
    milestone: str
    category: str | None
    detail: str | None
    first_position: int
    last_position: int
    first_ms: int
    last_ms: int
    positions: list[int] = field(default_factory=list)
    # The evaluation_started event of each failed attempt: part of the same story.
    evaluation_positions: list[int] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.positions)


def _label(event: EventBase) -> str:
    who = event.territory_id or event.agent_id or ""
    what = getattr(event, "milestone", None) or getattr(event, "winner", None) or ""
    return " ".join(part for part in (event.kind.replace("_", " "), who, what) if part)


def find_stalls(events: list[EventBase], minimum: int = 2) -> list[Stall]:
    open_runs: dict[tuple[str, str], Stall] = {}
    last_evaluation: dict[tuple[str, str], int] = {}
    stalls: list[Stall] = []
    for position, event in enumerate(events):
        if event.kind not in (
            "milestone_failed",
            "milestone_passed",
            "milestone_revoked",
            "milestone_evaluation_started",
        ):
            continue
        key = (event.territory_id or "", getattr(event, "milestone", ""))
        if event.kind == "milestone_evaluation_started":
            last_evaluation[key] = position
            continue
        run = open_runs.get(key)
        if event.kind != "milestone_failed":
            open_runs.pop(key, None)
            continue
        category, detail = getattr(event, "category", None), getattr(event, "detail", None)
        if run is None or (run.category, run.detail) != (category, detail):
            run = Stall(key[0], key[1], category, detail, position, position, event.elapsed_ms, event.elapsed_ms)
            open_runs[key] = run
            stalls.append(run)
        run.positions.append(position)
        run.last_position, run.last_ms = position, event.elapsed_ms
        if key in last_evaluation:
            run.evaluation_positions.append(last_evaluation.pop(key))
    return [s for s in stalls if s.count >= minimum]


def find_markers(events: list[EventBase]) -> list[Marker]:
    markers = [
        Marker(p, e.elapsed_ms, MARKER_KINDS[e.kind], e.territory_id, _label(e))
        for p, e in enumerate(events)
        if e.kind in MARKER_KINDS
    ]
    for stall in find_stalls(events):
        markers.append(
            Marker(
                stall.first_position,
                stall.first_ms,
                "stall",
                stall.territory,
                f"{stall.territory} stuck on {stall.milestone} ×{stall.count}",
            )
        )
    return sorted(markers, key=lambda m: (m.position, m.kind))
