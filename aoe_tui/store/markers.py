"""Moments worth jumping to, and failure stalls.

A replay viewer wants to jump to "when did B pass write-read" or "when did A
start failing the same check over and over", not step through 600 identical
failures. Markers are the notable events; a stall is a run of identical
failures of one milestone on one territory (same category and detail, no
pass in between), shown as one row with its count and span.
"""

from __future__ import annotations

from collections.abc import Iterable
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


class MarkerFinder:
    """Markers and stalls found as events arrive, so a long log is walked once, while it is read."""

    def __init__(self, minimum: int = 2) -> None:
        self.minimum = minimum
        self._marks: list[Marker] = []
        self._stalls: list[Stall] = []
        self._open_runs: dict[tuple[str, str], Stall] = {}
        self._last_evaluation: dict[tuple[str, str], int] = {}

    def add(self, position: int, event: EventBase, elapsed_ms: int, territory: str | None) -> None:
        """The event at `position`, at `elapsed_ms` (its recorded time), about `territory` (its territory_id)."""
        kind = event.kind
        marker_kind = MARKER_KINDS.get(kind)
        if marker_kind is not None:
            self._marks.append(Marker(position, elapsed_ms, marker_kind, territory, _label(event)))
        if kind in _STALL_KINDS:
            self._follow_stall(position, event, elapsed_ms, territory)

    def _follow_stall(self, position: int, event: EventBase, elapsed_ms: int, territory: str | None) -> None:
        key = (territory or "", getattr(event, "milestone", ""))
        if event.kind == "milestone_evaluation_started":
            self._last_evaluation[key] = position
            return
        run = self._open_runs.get(key)
        if event.kind != "milestone_failed":
            self._open_runs.pop(key, None)
            return
        category, detail = getattr(event, "category", None), getattr(event, "detail", None)
        if run is None or (run.category, run.detail) != (category, detail):
            run = Stall(key[0], key[1], category, detail, position, position, elapsed_ms, elapsed_ms)
            self._open_runs[key] = run
            self._stalls.append(run)
        run.positions.append(position)
        run.last_position, run.last_ms = position, elapsed_ms
        if key in self._last_evaluation:
            run.evaluation_positions.append(self._last_evaluation.pop(key))

    def stalls(self) -> list[Stall]:
        return [s for s in self._stalls if s.count >= self.minimum]

    def markers(self) -> list[Marker]:
        stalls = [
            Marker(
                s.first_position, s.first_ms, "stall", s.territory, f"{s.territory} stuck on {s.milestone} ×{s.count}"
            )
            for s in self.stalls()
        ]
        return sorted(self._marks + stalls, key=lambda m: (m.position, m.kind))


_STALL_KINDS = frozenset({"milestone_failed", "milestone_passed", "milestone_revoked", "milestone_evaluation_started"})


def _found(events: Iterable[EventBase], minimum: int = 2) -> MarkerFinder:
    finder = MarkerFinder(minimum)
    for position, event in enumerate(events):
        finder.add(position, event, event.elapsed_ms, event.territory_id)
    return finder


def find_stalls(events: Iterable[EventBase], minimum: int = 2) -> list[Stall]:
    return _found(events, minimum).stalls()


def find_markers(events: Iterable[EventBase]) -> list[Marker]:
    return _found(events).markers()
