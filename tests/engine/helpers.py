"""Building scripted matches for the engine tests: real verifiers, loopback hosts, virtual time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aoe_tui.domain.manifest import Manifest
from aoe_tui.testing.scripted_agent import ScriptedAgent
from aoe_tui.testing.clock import ManualSource
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.referee import Referee
from aoe_tui.testing.scripted_host import ScriptedPlan, ScriptedTerritory
from aoe_tui.store.manifest_file import read_manifest_data, resolve_verifier
from tests.fixture_paths import PROJECT

NEVER_READY = ScriptedPlan(ready_at_ms=10**9)
ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
TERRITORIES = ("builder-one", "builder-two", "builder-three")


def arena_data(**rules: Any) -> dict[str, Any]:
    """The First Build manifest as data, with absolute verifier paths so it can live anywhere."""
    data = read_manifest_data(ARENA)
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(resolve_verifier(ARENA, milestone["verifier"]))
    data["rules"].update(rules)
    return data


def write_arena(directory: Path, data: dict[str, Any]) -> Path:
    path = directory / "arena.json"
    path.write_text(json.dumps(data))
    return path


class ScriptedReferee:
    """A referee over scripted territories, driven tick by tick on a manual clock."""

    def __init__(
        self,
        work: Path,
        plans: dict[str, ScriptedPlan],
        data: dict[str, Any] | None = None,
        agents: dict[str, float | None] | None = None,
    ) -> None:
        self.manifest = Manifest.model_validate(data or arena_data())
        self.source = ManualSource()
        self.clock = MatchClock(self.source)
        self.recorder = MatchRecorder(self.clock, work / "events.jsonl")
        self.hosts = {
            t.id: ScriptedTerritory(t.id, plans.get(t.id, NEVER_READY), self.clock.elapsed_ms, work)
            for t in self.manifest.territories
        }
        assert self.manifest.build is not None, "a scripted match races for milestones"
        verifiers = {m.id: Path(m.verifier) for m in self.manifest.build.milestones}
        # The referee only reads its hosts but declares a dict (invariant): pending its rewrite (a Mapping).
        self.referee = Referee(self.manifest, self.hosts, self.recorder, verifiers, work)  # type: ignore[arg-type]
        self.referee.open_match(sorted(self.hosts))
        self.agents = {}
        for spec in self.manifest.agents:
            finishes = (agents or {}).get(spec.id)
            handle = ScriptedAgent(spec.id, spec.territory, self.source.now, finishes)
            self.agents[spec.id] = handle
            self.referee.agent_started(handle)

    @property
    def world(self):
        return self.recorder.world

    async def tick(self, seconds: float = 2.0) -> None:
        self.source.advance(seconds)
        await self.referee.tick()
        await self.referee.settle()

    async def run_until_over(self, max_ticks: int = 400) -> None:
        for _ in range(max_ticks):
            if self.referee.over:
                return
            await self.tick()
        raise AssertionError("match did not end")

    def kinds(self) -> list[str]:
        return [e.kind for e in self.recorder.events]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.recorder.events if e.kind == kind]

    def close(self) -> None:
        self.recorder.close()
        for host in self.hosts.values():
            host.close()


# The race of First Build with its three classic builders, on scripted hosts.
RACE = {
    "builder-one": ScriptedPlan(ready_at_ms=6000, storage="disk"),
    "builder-two": ScriptedPlan(ready_at_ms=2000, storage="memory"),
    "builder-three": ScriptedPlan(ready_at_ms=4000, storage="tmpfs"),
}
