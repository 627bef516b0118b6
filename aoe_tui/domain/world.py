"""World state (SPEC §4): what the referee knows at one moment of a match.

Field names and order follow `world.json` of the earlier implementation, so a
reduced world compares field for field with a recorded one. Fields after the
recorded ones (`attempts`, `passed_at_ms`, `paused`, ...) are ours and exist
for the app (attempt counts, pass times, operator pauses).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class WorldModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


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
    elimination_source: str | None = None
    elimination_detail: str | None = None
    competitor_state: str = "preparing"
    milestones: dict[str, MilestoneState] = Field(default_factory=dict)
    milestone_points: int = 0
    durable_at_ms: int | None = None


class AgentState(WorldModel):
    territory: str | None = None
    model: str | None = None
    running: bool = False
    successful: bool | None = None
    failure_source: str | None = None
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


def milestone_pause_key(territory: str | None, milestone: str) -> str:
    """`*` stands for "every territory" so one entry pauses a milestone arena-wide."""
    return f"{territory or '*'}/{milestone}"


class World(WorldModel):
    match_state: str = "preparing"
    territories: dict[str, TerritoryState] = Field(default_factory=dict)
    agents: dict[str, AgentState] = Field(default_factory=dict)
    winner: str | None = None
    finish_reason: str | None = None
    infrastructure_failures: int = 0
    last_sequence: int | None = None
    elapsed_ms: int = 0
    paused: bool = False
    paused_milestones: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def is_milestone_paused(self, territory: str | None, milestone: str) -> bool:
        return (milestone_pause_key(territory, milestone) in self.paused_milestones
                or milestone_pause_key(None, milestone) in self.paused_milestones)

    def standings(self) -> list[str]:
        """Territory ids, best first: durable, earliest durable, points, passes."""
        def key(item: tuple[str, TerritoryState]):
            tid, t = item
            passes = sum(m.passed for m in t.milestones.values())
            durable = t.durable_at_ms is not None
            return (not durable, t.durable_at_ms or 0, -t.milestone_points, -passes, tid)
        return [tid for tid, _ in sorted(self.territories.items(), key=key)]
