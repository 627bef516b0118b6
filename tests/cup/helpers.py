"""Cups on scripted territories: each entrant's play is its own (`plans` by entrant, not by seat)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from aoe_tui.testing.scripted_host import ScriptedPlan
from tests.series.helpers import quick_arena

NEVER = ScriptedPlan(ready_at_ms=10**9)


def write_cup(
    directory: Path,
    entrants: list[str],
    heat_size: int | None = 3,
    attempts: int = 2,
    seed: int | None = 7,
    territories: int = 3,
    cup_id: str = "test-cup",
    arena_id: str | None = None,
    **rules,
) -> Path:
    quick_arena(directory / "arena", territories=territories, arena_id=arena_id, **rules)
    lines = [
        "[cup]",
        f'id = "{cup_id}"',
        'display_name = "Test Cup"',
        'arena = "arena/arena.json"',
        f"attempts = {attempts}",
    ]
    if heat_size is not None:
        lines.append(f"heat_size = {heat_size}")
    if seed is not None:
        lines.append(f"seed = {seed}")
    for entrant in entrants:
        lines += ["", "[[entrants]]", f'id = "{entrant}"', 'adapter = "oracle"', f'model = "scripted/{entrant}"']
    path = directory / "CUP.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


class ScriptedHeats:
    """A heat factory: `ready[entrant]` ms to its (only) milestone (absent: never); `unavailable[(round, heat,
    attempt)]` lists entrants whose provider is down then; `stop_at[(round, heat, attempt)]` stops the cup once
    that attempt's agents start."""

    def __init__(self, arena: Path, ready: dict[str, int], unavailable=None, stop_at=None) -> None:
        self.arena, self.ready = arena, ready
        self.unavailable = unavailable or {}
        self.stop_at = stop_at or set()
        self.cup: Any = None  # the cup under test, set by the test (stop_at stops it)
        self.plans: list[tuple[int, int, int]] = []

    def __call__(self, plan):
        from aoe_tui.engine.runner import MatchRunner
        from aoe_tui.testing.clock import ManualSource
        from aoe_tui.testing.scripted_provider import AgentScript, ScriptedLauncher, ScriptedProvider

        key = (plan.round, plan.heat, plan.attempt)
        self.plans.append(key)
        seats = {a.territory: a.id for a in plan.manifest.agents}
        plans = {t: ScriptedPlan(ready_at_ms=self.ready[e]) if e in self.ready else NEVER for t, e in seats.items()}
        scripts = {
            agent: AgentScript(finishes_after=0.5, status="unavailable", summary="provider returned 503")
            for agent in self.unavailable.get(key, [])
        }
        runner = MatchRunner(
            self.arena,
            plan.output,
            ScriptedProvider(plans),
            ScriptedLauncher(scripts),
            source=ManualSource(limit=math.inf),
            drain_seconds=1,
            manifest=plan.manifest,
        )
        if key in self.stop_at:

            def stop(update):
                if getattr(update, "kind", None) == "agent_started":
                    self.cup.request_stop("the aoe process was terminated (SIGTERM)")

            runner.subscribe(stop)
        return runner
