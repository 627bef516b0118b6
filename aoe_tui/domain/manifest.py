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

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from aoe_tui.domain.monitor import MonitorRules
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
    resource_units: int | None = None  # model rounds
    max_cost_microusd: int | None = None
    # Input plus output tokens, as the referee's gateway measures them; absent from older manifests and kept so.
    max_tokens: int | None = Field(default=None, ge=0, exclude_if=lambda value: value is None)


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


class MonitorProbe(StrictModel):
    """One public GET of a monitor's sample: its body must be one of `expect` (status unread, as the original)."""

    path: str
    expect: list[str]
    flag_on: str | None = None
    """A body equal to this raises the monitor's flag (the rollout's `v2` → saw-v2)."""

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        if not path.startswith("/") or any(c.isspace() for c in path):
            raise ValueError(f"probe path {path!r} must start with / and hold no spaces")
        return path

    @field_validator("expect")
    @classmethod
    def _expect(cls, expect: list[str]) -> list[str]:
        if not expect:
            raise ValueError("expect must list at least one accepted body")
        return expect


def _must_be_positive(value: float) -> float:
    if value <= 0:
        raise ValueError("must be positive")
    return value


class MonitorCalibration(StrictModel):
    """How the referee sets a monitor's check timeout for one match, from these guests, before any agent acts.

    A fixed timeout judges the host's speed as much as the player's service: on an emulated guest an honest
    request can take over a second while the guest starts a process. So the referee samples every
    territory's probes while each guest runs `load` (what an honest change costs the guest, such as starting
    the service's Python), at least `min_samples` samples each, and the timeout becomes `factor` times the
    slowest answer seen in any territory: never below the monitor's `timeout_ms`, never above
    `max_timeout_ms`. One bound for every territory, kept in provenance and in each monitor's summary (and
    written to `publish_to` in each guest). Only timeouts move with it: a wrong body, an error status or a
    refused connection fails whatever the bound.
    """

    load: str
    min_samples: int = 20
    factor: float = 3.0
    max_timeout_ms: int = 5000
    load_timeout_seconds: float = 180
    # A file in each guest the calibrated timeout (ms) is written to before any agent acts, so the arena's own
    # programs wait as long as the referee will (the rollout's proxy relays within it). Writing it gives a
    # player nothing: the referee's own timeout still bounds every check.
    publish_to: str | None = None

    positive = field_validator("min_samples", "factor", "max_timeout_ms", "load_timeout_seconds")(_must_be_positive)


class Monitor(StrictModel):
    """A referee-owned watch of each territory's public service (ARENAS §3's continuity monitor).

    It starts when `start_after` passes, samples every `interval_ms` (each sample runs `probes` in order,
    `timeout_ms` each) up to `max_samples`, and outlives that milestone's verifier; `judged_by` waits up to
    `wait_for_flag_seconds` for `flag`, lets it run `settle_ms` more, stops it and judges its summary
    (domain.monitor.judge) before running its own verifier. Details may hold `{samples}` / `{failures}`.
    """

    id: str
    display_name: str | None = None
    start_after: str
    judged_by: str
    interval_ms: int = 50
    max_samples: int = 2400
    timeout_ms: int = 1000
    probes: list[MonitorProbe]
    flag: str | None = None
    wait_for_flag_seconds: float = 0
    never_flagged_detail: str = "the monitored flag was never seen"
    settle_ms: int = 0
    min_samples: int = 1
    too_few_detail: str = "continuity monitor recorded only {samples} samples"
    failures_detail: str = "observed {failures} failed public checks"
    calibration: MonitorCalibration | None = None

    positive = field_validator("interval_ms", "max_samples", "timeout_ms", "min_samples")(_must_be_positive)

    @field_validator("wait_for_flag_seconds", "settle_ms")
    @classmethod
    def _not_negative(cls, value: float) -> float:
        if value < 0:
            raise ValueError("must not be negative")
        return value

    @field_validator("probes")
    @classmethod
    def _probes(cls, probes: list[MonitorProbe]) -> list[MonitorProbe]:
        if not probes:
            raise ValueError("a monitor needs at least one probe")
        return probes

    @model_validator(mode="after")
    def _flag_is_raised(self) -> Monitor:
        raised = {p.flag_on for p in self.probes if p.flag_on is not None}
        for probe in self.probes:
            if probe.flag_on is not None and probe.flag_on not in probe.expect:
                raise ValueError(f"probe {probe.path}: flag_on {probe.flag_on!r} is not one of its expected bodies")
        if (self.flag is None) != (not raised):
            raise ValueError("flag and the probes' flag_on go together: name the flag and the body that raises it")
        for name in ("too_few_detail", "failures_detail", "never_flagged_detail"):
            try:
                getattr(self, name).format(samples=0, failures=0)
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(f"{name} may only use {{samples}} and {{failures}}: {error}") from None
        if self.calibration is not None and self.calibration.max_timeout_ms < self.timeout_ms:
            raise ValueError("calibration.max_timeout_ms must not be below timeout_ms")
        return self

    def rules(self) -> MonitorRules:
        return MonitorRules(
            flag=self.flag,
            never_flagged_detail=self.never_flagged_detail,
            min_samples=self.min_samples,
            failures_detail=self.failures_detail,
            too_few_detail=self.too_few_detail,
        )


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
    monitors: list[Monitor] | None = None

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

    def monitors_started_by(self, milestone_id: str) -> list[Monitor]:
        return [m for m in self.monitors or [] if m.start_after == milestone_id]

    def monitors_judged_by(self, milestone_id: str) -> list[Monitor]:
        return [m for m in self.monitors or [] if m.judged_by == milestone_id]

    def to_json(self) -> dict:
        return self.model_dump(mode="json", by_alias=True)
