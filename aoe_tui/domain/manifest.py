"""The arena manifest as strict pydantic models.

Every table forbids unknown keys so a typo in `arena.toml` is an error naming
its key path instead of a silently ignored setting. The same models read the
`arena.json` / `arena` object of saved matches, which is why JSON-only extras
of the earlier implementation (`schema_version`, `fog_of_war = null`,
`label = null`) are accepted.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from aoe_tui.domain.provisioning import Provisioning

ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_ENV_NAMES = frozenset({"SSH_AUTH_SOCK"})
RESERVED_ENV_PREFIX = "AOE_"


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)


class ArenaInfo(StrictModel):
    id: str
    display_name: str
    category: str | None = None
    mode: Literal["build_race", "conquest"] = "build_race"


class Network(StrictModel):
    cidr: str
    allow_public_internet: bool = False


class Rules(StrictModel):
    duration_seconds: int
    tick_ms: int = 2000
    minimum_territories: int = 2
    healthy_resources_per_tick: int = 0
    post_match_drain_seconds: int = 30


class Milestone(StrictModel):
    id: str
    display_name: str
    depends_on: list[str] = Field(default_factory=list)
    operation: Literal["observe", "host_reboot"] = "observe"
    verifier: str
    timeout_seconds: int
    points: int
    required: bool = True


class Build(StrictModel):
    stop_on_first_durable: bool = True
    completion_milestone: str
    milestones: list[Milestone]


class Resources(StrictModel):
    vcpus: int = 1
    memory_mib: int = 1024
    disk_mib: int = 2048


class TerritoryClass(StrictModel):
    id: str
    display_name: str
    resources: Resources = Field(default_factory=Resources)
    strengths: list[str] = Field(default_factory=list)
    weaknesses: list[str] = Field(default_factory=list)


class HealthPolicy(StrictModel):
    poll_interval_ms: int = 1000
    consecutive_failures: int = 3
    recovery_window_seconds: int = 60


class Service(StrictModel):
    port: int = 8080
    path: str = "/health"
    expected_status: int = 200
    expected_body: str | None = None
    health: HealthPolicy = Field(default_factory=HealthPolicy)


class Territory(StrictModel):
    id: str
    class_: str = Field(alias="class")
    nixos_config: str | None = None
    image: str | None = None
    service: Service = Field(default_factory=Service)


class Budget(StrictModel):
    resource_units: int | None = None
    max_cost_microusd: int | None = None


class AgentSpec(StrictModel):
    id: str
    territory: str
    adapter: str
    model: str
    reasoning_effort: str | None = None
    budget: Budget = Field(default_factory=Budget)
    env: list[str] = Field(default_factory=list)
    """Host environment variables this agent's adapter may receive (its environment is allow-listed)."""

    @field_validator("env")
    @classmethod
    def _env_names(cls, names: list[str]) -> list[str]:
        # `AOE_*` is the referee's own contract with the adapter and the agent socket would hand out the
        # operator's SSH identities, so neither may be passed through by a manifest.
        for name in names:
            if not ENV_NAME_PATTERN.match(name):
                raise ValueError(f"env name {name!r} is not a valid environment variable name")
            if name.startswith(RESERVED_ENV_PREFIX) or name in RESERVED_ENV_NAMES:
                raise ValueError(f"env name {name!r} is reserved for the referee")
        return names


class VisualNode(StrictModel):
    id: str
    display_name: str
    kind: str
    milestone: str | None = None
    x: float
    y: float


class VisualLink(StrictModel):
    from_: str = Field(alias="from")
    to: str
    kind: str
    label: str | None = None


class Visualization(StrictModel):
    nodes: list[VisualNode] = Field(default_factory=list)
    links: list[VisualLink] = Field(default_factory=list)


class LeakAudit(StrictModel):
    """What no guest may hold before launch (ARENAS §6): referee-only names searched under `scan_paths`."""

    scan_paths: list[str] = Field(default_factory=list)
    forbidden_strings: list[str] = Field(default_factory=list)

    @field_validator("scan_paths")
    @classmethod
    def _scan_paths(cls, paths: list[str]) -> list[str]:
        if not paths:
            raise ValueError("scan_paths must name at least one folder")
        for path in paths:
            if not path.startswith("/") or path.rstrip("/") == "" or ".." in path.split("/"):
                raise ValueError(f"scan path {path!r} must be absolute and narrower than /")
        return paths

    @field_validator("forbidden_strings")
    @classmethod
    def _forbidden(cls, strings: list[str]) -> list[str]:
        if not strings:
            raise ValueError("forbidden_strings must list at least one string")
        if any(not s.strip() for s in strings):
            raise ValueError("forbidden_strings must not hold a blank string")
        return strings


class FogOfWar(StrictModel):
    player_brief: str | None = None
    hide_topology_until_observed: bool = True
    guest_leak_audit: LeakAudit | None = None

    @field_validator("player_brief")
    @classmethod
    def _brief(cls, brief: str | None) -> str | None:
        if brief is not None and not brief.strip():
            raise ValueError("player_brief must name the brief file (relative to the arena folder)")
        return brief


class Manifest(StrictModel):
    schema_version: Literal[1] = 1
    arena: ArenaInfo
    network: Network
    rules: Rules
    build: Build | None = None
    classes: list[TerritoryClass]
    territories: list[Territory]
    agents: list[AgentSpec]
    visualization: Visualization | None = None
    fog_of_war: FogOfWar | None = None
    provisioning: Provisioning | None = None

    def territory(self, territory_id: str) -> Territory:
        return next(t for t in self.territories if t.id == territory_id)

    def territory_class(self, territory_id: str) -> TerritoryClass:
        class_id = self.territory(territory_id).class_
        return next(c for c in self.classes if c.id == class_id)

    def agent_for(self, territory_id: str) -> AgentSpec:
        return next(a for a in self.agents if a.territory == territory_id)

    def milestone(self, milestone_id: str) -> Milestone:
        assert self.build is not None
        return next(m for m in self.build.milestones if m.id == milestone_id)

    def to_json(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
