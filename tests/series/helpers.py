"""Series folders for the standings tests, built from the fixture series' real round matches."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path
from typing import Protocol

from tests.fixture_paths import FIXTURES
from tests.engine.helpers import arena_data

SERIES = FIXTURES / "series" / "first-build-real-20260814-075912"
STORED = json.loads((SERIES / "series.json").read_text())


def copy_series(target: Path) -> Path:
    shutil.copytree(SERIES, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def edit_events(events: Path, edit) -> None:
    """Rewrite an event log line by line: `edit(event)` changes the event in place."""
    lines = []
    for line in events.read_text().splitlines():
        event = json.loads(line)
        edit(event)
        lines.append(json.dumps(event))
    events.write_text("\n".join(lines) + "\n")


def write_round_arena(round_dir: Path, adapter: str = "claux", effort: dict[str, str] | None = None) -> None:
    """An arena.json for a fixture round: its seats (from world.json) with an adapter and reasoning effort."""
    world = json.loads((round_dir / "world.json").read_text())
    data = arena_data()
    data["agents"] = [
        {
            "id": agent,
            "territory": state["territory"],
            "adapter": adapter,
            "model": state["model"],
            "reasoning_effort": (effort or {}).get(agent, "high"),
        }
        for agent, state in sorted(world["agents"].items())
    ]
    (round_dir / "arena.json").write_text(json.dumps(data))


def quick_arena(directory: Path, territories: int = 3, arena_id: str | None = None, **rules) -> Path:
    """First Build cut to its first milestone (`service-up` completes it): a scripted round takes ~0.5 s."""
    data = arena_data(duration_seconds=60, post_match_drain_seconds=1, **rules)
    data["territories"] = data["territories"][:territories]
    data["agents"] = data["agents"][:territories]
    data["arena"]["id"] = arena_id or data["arena"]["id"]
    data["build"]["milestones"] = data["build"]["milestones"][:1]
    data["build"]["completion_milestone"] = data["build"]["milestones"][0]["id"]
    data.pop("visualization", None)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "arena.json"
    path.write_text(json.dumps(data))
    return path


class Stoppable(Protocol):
    """A series or a benchmark: what `stop_in_round` asks of it."""

    def request_stop(self, reason: str) -> object: ...


class ScriptedRounds:
    """A series round factory on scripted territories: `unavailable[(round, attempt)]` lists agents whose
    provider is down in that attempt; `stop_in_round` stops the series once that round's match is running;
    `held[round]` holds that round's match clock at so many seconds (`sources[round]` lets it go on); in the
    `lost` (round, attempt)s every guest dies a second in (the infrastructure's doing: the match is void)."""

    def __init__(
        self,
        arena: Path,
        unavailable: dict[tuple[int, int], list[str]] | None = None,
        stop_in_round: int | None = None,
        held: dict[int, float] | None = None,
        lost: frozenset[tuple[int, int]] = frozenset(),
    ) -> None:
        self.arena = arena
        self.unavailable = unavailable or {}
        self.stop_in_round = stop_in_round
        self.held = held or {}
        self.lost = lost
        self.series: Stoppable | None = None  # the series or benchmark under test, set by the test
        self.plans: list[tuple[int, int]] = []
        self.sources: dict = {}

    def __call__(self, plan):
        from aoe_tui.testing.clock import ManualSource
        from aoe_tui.engine.runner import MatchRunner
        from aoe_tui.testing.scripted_provider import (
            AgentScript,
            ScriptedLauncher,
            ScriptedProvider,
        )
        from tests.engine.helpers import RACE

        self.plans.append((plan.number, plan.attempt))
        scripts = {
            agent: AgentScript(finishes_after=0.5, status="unavailable", summary="provider returned 503")
            for agent in self.unavailable.get((plan.number, plan.attempt), [])
        }
        self.sources[plan.number] = source = ManualSource(limit=self.held.get(plan.number, math.inf))
        lost = (plan.number, plan.attempt) in self.lost
        runner = MatchRunner(
            self.arena,
            plan.output,
            ScriptedProvider({t: dataclasses.replace(p, lost_at_ms=1000) if lost else p for t, p in RACE.items()}),
            ScriptedLauncher(scripts),
            source=source,
            drain_seconds=1,
            manifest=plan.manifest,
        )
        if plan.number == self.stop_in_round:

            def stop(update):
                if getattr(update, "kind", None) == "agent_started":
                    assert self.series is not None, "stop_in_round needs the test to set .series"
                    self.series.request_stop("the aoe process was terminated (SIGTERM)")

            runner.subscribe(stop)
        return runner
