"""Referee events as a discriminated union on `kind`.

Extra fields are kept (`extra="allow"`) because logs from other versions may
carry more than we know, and a replay must show them. A `kind` we do not know
becomes an `UnknownEvent` instead of an error, so new event kinds never make
an old reader drop a match.

`sequence` and `elapsed_ms` belong to the recorder: the engine builds an
event of its class without them (`UNSTAMPED`) and `MatchRecorder.emit`
numbers it and stamps the match clock. A recorded event always has both
(the log reader requires them).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter

SCHEMA_VERSION = 1
UNSTAMPED = -1  # sequence and elapsed_ms of an event the recorder has not emitted yet

MatchState = Literal["preparing", "running", "paused", "finished", "aborted", "void"]
# How a match can end: `finished` has a result (a winner, or none on a tie); `aborted` was stopped from outside
# (an operator, a signal, a crash); `void` ended with every territory lost to infrastructure failures, so it has
# no result and counts nowhere (docs/match-outcomes.md). Only a finished match is ever ranked.
FINAL_MATCH_STATES: tuple[MatchState, ...] = ("finished", "aborted", "void")
CompetitorState = Literal["preparing", "building", "verifying", "durable", "incomplete", "unavailable"]
# Whose doing an outcome was: the player's, its harness or model provider, the arena (referee, guest
# infrastructure), the match controller (stop at the end) or the operator; unknown when nobody said.
Source = Literal["player", "harness", "provider", "arena", "controller", "unknown", "operator"]


class EventBase(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)

    schema_version: int = SCHEMA_VERSION
    sequence: int = UNSTAMPED
    elapsed_ms: int = UNSTAMPED
    kind: str

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    @property
    def territory_id(self) -> str | None:
        return getattr(self, "territory", None)

    @property
    def agent_id(self) -> str | None:
        return getattr(self, "agent", None)


class MatchStateChanged(EventBase):
    kind: Literal["match_state_changed"] = "match_state_changed"
    from_: MatchState = Field(alias="from")
    to: MatchState
    # Only an abort says why; the opening and the finish never wrote the key, so an absent reason stays absent.
    reason: str | None = Field(default=None, exclude_if=lambda reason: reason is None)


class TerritoryRegistered(EventBase):
    kind: Literal["territory_registered"] = "territory_registered"
    territory: str
    class_: str = Field(alias="class")
    agent: str


class AgentStarted(EventBase):
    kind: Literal["agent_started"] = "agent_started"
    agent: str
    territory: str
    model: str | None = None


class CompetitorStateChanged(EventBase):
    kind: Literal["competitor_state_changed"] = "competitor_state_changed"
    territory: str
    from_: CompetitorState = Field(alias="from")
    to: CompetitorState
    reason: str | None = None


class MilestoneEvaluationStarted(EventBase):
    kind: Literal["milestone_evaluation_started"] = "milestone_evaluation_started"
    territory: str
    milestone: str


class MilestonePassed(EventBase):
    kind: Literal["milestone_passed"] = "milestone_passed"
    territory: str
    milestone: str
    points: int
    evidence: Any = None


class MilestoneFailed(EventBase):
    kind: Literal["milestone_failed"] = "milestone_failed"
    territory: str
    milestone: str
    category: str | None = None
    detail: str | None = None
    retryable: bool = True
    # An `evidence` extra (what a failed check saw beyond its detail: a monitor's summary) is kept when given;
    # not a field, so a failure without one is written exactly as before.


class MilestoneRevoked(EventBase):
    kind: Literal["milestone_revoked"] = "milestone_revoked"
    territory: str
    milestone: str
    reason: str | None = None


class DurableDeploymentCompleted(EventBase):
    kind: Literal["durable_deployment_completed"] = "durable_deployment_completed"
    territory: str


class UsageCharged(EventBase):
    """What an agent spent. `measured_by` "referee": read by the model gateway from the provider's answers
    (one model round = one resource unit); absent: from the adapter's own usage.json (logs before the gateway,
    and agents that never called a model through it)."""

    kind: Literal["usage_charged"] = "usage_charged"
    agent: str
    resource_units: int | None = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_microusd: int | None = None
    measured_by: Literal["referee"] | None = Field(default=None, exclude_if=lambda value: value is None)


class UsageReported(EventBase):
    """An adapter's own cumulative usage.json once the gateway measures the agent: a secondary, labelled
    figure the app shows beside the measured one; standings and budgets never read it."""

    kind: Literal["usage_reported"] = "usage_reported"
    agent: str
    resource_units: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_microusd: int | None = None


class UsageRejected(EventBase):
    """An adapter's usage.json was not valid; nothing was charged from it (the last good checkpoint stands)."""

    kind: Literal["usage_rejected"] = "usage_rejected"
    agent: str
    detail: str | None = None


class MatchFinished(EventBase):
    kind: Literal["match_finished"] = "match_finished"
    winner: str | None = None
    reason: str | None = None


class PostMatchDrainStarted(EventBase):
    kind: Literal["post_match_drain_started"] = "post_match_drain_started"
    pending_agents: int = 0
    timeout_ms: int | None = None


class AgentFinished(EventBase):
    kind: Literal["agent_finished"] = "agent_finished"
    agent: str
    source: Source | None = None
    success: bool | None = None
    detail: str | None = None


class AgentInterrupted(EventBase):
    kind: Literal["agent_interrupted"] = "agent_interrupted"
    agent: str
    source: Source | None = None
    detail: str | None = None


class AgentOutraced(EventBase):
    kind: Literal["agent_outraced"] = "agent_outraced"
    agent: str
    reason: str | None = None


class AgentTerminated(EventBase):
    kind: Literal["agent_terminated"] = "agent_terminated"
    agent: str
    reason: str | None = None


class PostMatchDrainFinished(EventBase):
    kind: Literal["post_match_drain_finished"] = "post_match_drain_finished"
    captured_agents: int = 0
    terminated_agents: int = 0


class TerritoryStateChanged(EventBase):
    kind: Literal["territory_state_changed"] = "territory_state_changed"
    territory: str
    from_: str = Field(alias="from")
    to: str
    reason: str | None = None


class HealthObserved(EventBase):
    kind: Literal["health_observed"] = "health_observed"
    territory: str
    healthy: bool
    status: int | None = None
    latency_ms: int | None = None
    detail: str | None = None


class ResourcesChanged(EventBase):
    kind: Literal["resources_changed"] = "resources_changed"
    territory: str
    delta: int
    remaining: int
    reason: str | None = None


class TerritoryEliminated(EventBase):
    kind: Literal["territory_eliminated"] = "territory_eliminated"
    territory: str
    source: Source | None = None
    detail: str | None = None


class InfrastructureFailure(EventBase):
    kind: Literal["infrastructure_failure"] = "infrastructure_failure"
    component: str
    source: Source | None = "arena"
    detail: str | None = None
    territory: str | None = None


# Continuous monitors (ours): one event when a monitor starts and one with its summary when it stops, never
# one per sample (domain.monitor).
class MonitorStarted(EventBase):
    kind: Literal["monitor_started"] = "monitor_started"
    territory: str
    monitor: str
    milestone: str
    interval_ms: int
    max_samples: int


class MonitorStopped(EventBase):
    kind: Literal["monitor_stopped"] = "monitor_stopped"
    territory: str
    monitor: str
    reason: str
    summary: Any = None


# Operator actions (ours; names are stable once written to a log).
class MatchPaused(EventBase):
    kind: Literal["match_paused"] = "match_paused"
    source: Source = "operator"
    reason: str | None = None


class MatchResumed(EventBase):
    kind: Literal["match_resumed"] = "match_resumed"
    source: Source = "operator"
    paused_ms: int = 0


class MilestonePaused(EventBase):
    """`territory` null means the milestone is paused for every territory."""

    kind: Literal["milestone_paused"] = "milestone_paused"
    territory: str | None = None
    milestone: str
    source: Source = "operator"


class MilestoneResumed(EventBase):
    kind: Literal["milestone_resumed"] = "milestone_resumed"
    territory: str | None = None
    milestone: str
    source: Source = "operator"


class MilestoneRetryRequested(EventBase):
    kind: Literal["milestone_retry_requested"] = "milestone_retry_requested"
    territory: str
    milestone: str
    source: Source = "operator"


class UnknownEvent(EventBase):
    """Any kind this reader does not know; all its fields are kept."""


KNOWN_EVENTS: tuple[type[EventBase], ...] = (
    MatchStateChanged,
    TerritoryRegistered,
    AgentStarted,
    CompetitorStateChanged,
    MilestoneEvaluationStarted,
    MilestonePassed,
    MilestoneFailed,
    MilestoneRevoked,
    DurableDeploymentCompleted,
    UsageCharged,
    UsageReported,
    UsageRejected,
    MatchFinished,
    PostMatchDrainStarted,
    AgentFinished,
    AgentInterrupted,
    AgentOutraced,
    AgentTerminated,
    PostMatchDrainFinished,
    TerritoryStateChanged,
    HealthObserved,
    ResourcesChanged,
    TerritoryEliminated,
    InfrastructureFailure,
    MonitorStarted,
    MonitorStopped,
    MatchPaused,
    MatchResumed,
    MilestonePaused,
    MilestoneResumed,
    MilestoneRetryRequested,
)
EVENT_CLASSES: dict[str, type[EventBase]] = {cls.model_fields["kind"].default: cls for cls in KNOWN_EVENTS}
OPERATOR_EVENTS: tuple[type[EventBase], ...] = (
    MatchPaused,
    MatchResumed,
    MilestonePaused,
    MilestoneResumed,
    MilestoneRetryRequested,
)
OPERATOR_KINDS = frozenset(cls.model_fields["kind"].default for cls in OPERATOR_EVENTS)


def _kind_tag(value: Any) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return kind if kind in EVENT_CLASSES else "unknown"


# Built at import time from EVENT_CLASSES, so it is a value to pydantic and `Any` to a type checker.
_EVENT_UNION: Any = Annotated[
    Union[  # noqa: UP007  (built from a tuple at run time: the `X | Y` form cannot be)
        tuple(Annotated[cls, Tag(kind)] for kind, cls in EVENT_CLASSES.items())
        + (Annotated[UnknownEvent, Tag("unknown")],)
    ],
    Discriminator(_kind_tag),
]
EVENT_ADAPTER: TypeAdapter[EventBase] = TypeAdapter(_EVENT_UNION)
EVENT_LIST_ADAPTER: TypeAdapter[list[EventBase]] = TypeAdapter(list[_EVENT_UNION])


def parse_event(data: dict[str, Any]) -> EventBase:
    return EVENT_ADAPTER.validate_python(data)


def make_event(kind: str, sequence: int, elapsed_ms: int, **fields: Any) -> EventBase:
    """Build a stamped event of a known kind from its fields (tests and benchmarks that write a match by hand)."""
    return EVENT_CLASSES[kind].model_validate(
        {"schema_version": SCHEMA_VERSION, "sequence": sequence, "elapsed_ms": elapsed_ms, "kind": kind, **fields}
    )
