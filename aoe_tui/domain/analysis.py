"""A deterministic reading of one agent's observable tool calls ("How they fought").

Analyses are produced by `aoe_tui.analysis.analyze` and also stored in saved
matches by the earlier controller; both parse into these models. Field order
follows the stored `*-analysis.json` files so our output reads like theirs.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class ActionKind(StrEnum):
    """What a tool call did to the territory, from weakest to strongest effect."""

    DISCOVERY = "discovery"
    VALIDATION = "validation"
    LIFECYCLE = "lifecycle"
    MUTATION = "mutation"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class AnalysisMetrics(_Lenient):
    tool_calls: int = 0
    tool_errors: int = 0
    discoveries: int = 0
    mutations: int = 0
    lifecycle_actions: int = 0
    validations: int = 0
    first_mutation_after_ms: int | None = None
    last_observed_after_ms: int | None = None


class AnalysisArchitecture(_Lenient):
    """What the agent built with, as far as its commands show."""

    technologies: list[str] = Field(default_factory=list)
    service_units: list[str] = Field(default_factory=list)
    persistent_paths: list[str] = Field(default_factory=list)


class AnalysisAction(_Lenient):
    """One classified tool call; `index` is its position in the transcript's tool_trace."""

    index: int
    tool_id: str | None = None
    kind: ActionKind
    started_after_ms: int | None = None
    duration_ms: int | None = None
    description: str | None = None
    command: str | None = None
    success: bool | None = None
    output_excerpt: str | None = None
    # Moves against what the referee relies on (aoe_tui.analysis.tampering): a reason to look, not a verdict.
    tampering: list[str] = Field(default_factory=list)


class Analysis(_Lenient):
    schema_version: int = 1
    analyzer: str | None = None
    source_sha256: str | None = None
    agent: str | None = None
    territory: str | None = None
    model: str | None = None
    outcome: str | None = None
    metrics: AnalysisMetrics = Field(default_factory=AnalysisMetrics)
    architecture: AnalysisArchitecture = Field(default_factory=AnalysisArchitecture)
    actions: list[AnalysisAction] = Field(default_factory=list)
