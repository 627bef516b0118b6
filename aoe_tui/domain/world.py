"""World state: what the referee knows at one moment of a match.

Field names and order follow `world.json` of the earlier implementation, so a
reduced world compares field for field with a recorded one. Fields after the
recorded ones (`attempts`, `passed_at_ms`, `paused`, ...) are ours and exist
for the app (attempt counts, pass times, operator pauses).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer, model_validator

from aoe_tui.domain.events import CompetitorState, MatchState, Source


class WorldModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    # The reducer writes world fields millions of times in a long match. Pydantic's own `__setattr__` (a
    # handler lookup, then bookkeeping of which fields were set) costs ten plain writes, and world models
    # neither validate assignments nor read `model_fields_set`: a field is written straight to the instance.
    __setattr__ = object.__setattr__


class HealthReading(WorldModel):
    healthy: bool
    status: int | None = None
    latency_ms: int | None = None
    detail: str | None = None


class MilestoneState(WorldModel):
    evaluating: bool = False
    passed: bool = False
    points: int = 0
    evidence: Any = None
    failure_category: str | None = None
    failure_detail: str | None = None
    attempts: int = 0
    failures: int = 0
    passed_at_ms: int | None = None
    last_failed_at_ms: int | None = None


class TerritoryState(WorldModel):
    class_: str | None = Field(default=None, alias="class")
    agent: str | None = None
    state: str = "provisioning"
    resources: int = 0
    last_health: HealthReading | None = None
    elimination_source: Source | None = None
    elimination_detail: str | None = None
    competitor_state: CompetitorState = "preparing"
    milestones: dict[str, MilestoneState] = Field(default_factory=dict)
    milestone_points: int = 0
    durable_at_ms: int | None = None


class AgentState(WorldModel):
    territory: str | None = None
    model: str | None = None
    running: bool = False
    successful: bool | None = None
    failure_source: Source | None = None
    terminal_state: str | None = None
    terminal_detail: str | None = None
    resource_units_used: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_microusd: int = 0
    # Written as null by the earlier implementation; kept so worlds round-trip.
    cost_complete: bool | None = None
    tokens_known: bool = False
    cost_known: bool = False
    # True once the referee's gateway measured a model round of this agent: the figures above are its own.
    metered: bool = False
    # The adapter's own cumulative report (usage.json) once the agent is metered: shown beside, never counted.
    reported_resource_units: int | None = None
    reported_input_tokens: int | None = None
    reported_output_tokens: int | None = None
    reported_cost_microusd: int | None = None


_EVERY_TERRITORY = "*"


class MilestonePause(BaseModel):
    """One operator pause: a milestone for one territory, or for all of them (`territory` None).

    Saved as the string `territory/milestone`, `*` standing for every
    territory (ids never hold a `/`), the format `world.json` has always had.
    """

    model_config = ConfigDict(frozen=True)

    territory: str | None
    milestone: str

    @model_validator(mode="before")
    @classmethod
    def _from_saved(cls, value: Any) -> Any:
        if isinstance(value, str):
            territory, _, milestone = value.partition("/")
            return {"territory": None if territory == _EVERY_TERRITORY else territory, "milestone": milestone}
        return value

    @model_serializer
    def _to_saved(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return f"{self.territory or _EVERY_TERRITORY}/{self.milestone}"

    def holds(self, territory: str | None, milestone: str) -> bool:
        """Whether this pause stops `milestone` for `territory` (None: for every territory at once)."""
        return self.milestone == milestone and self.territory in (None, territory)

    def lifted_by(self, territory: str | None, milestone: str) -> bool:
        """Whether resuming `milestone` for `territory` ends this pause (None ends every pause of it)."""
        return self.milestone == milestone and territory in (None, self.territory)


class World(WorldModel):
    match_state: MatchState = "preparing"
    territories: dict[str, TerritoryState] = Field(default_factory=dict)
    agents: dict[str, AgentState] = Field(default_factory=dict)
    winner: str | None = None
    finish_reason: str | None = None
    infrastructure_failures: int = 0
    last_sequence: int | None = None
    elapsed_ms: int = 0
    paused: bool = False
    paused_milestones: list[MilestonePause] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def is_milestone_paused(self, territory: str | None, milestone: str) -> bool:
        return any(pause.holds(territory, milestone) for pause in self.paused_milestones)

    def pauses_lifted_by(self, territory: str | None, milestone: str) -> list[MilestonePause]:
        """The pauses that resuming `milestone` for `territory` ends (none: there is nothing to resume)."""
        return [pause for pause in self.paused_milestones if pause.lifted_by(territory, milestone)]

    def standings(self) -> list[str]:
        """Territory ids, best first: durable, earliest durable, points, passes."""

        def key(item: tuple[str, TerritoryState]) -> tuple[Any, ...]:
            tid, t = item
            passes = sum(m.passed for m in t.milestones.values())
            durable = t.durable_at_ms is not None
            return (not durable, t.durable_at_ms or 0, -t.milestone_points, -passes, tid)

        return [tid for tid, _ in sorted(self.territories.items(), key=key)]
