"""Smoke test of this arena, no VM needed: `.venv/bin/pytest path/to/this/folder` (a few seconds).

The folder must pass `aoe arena validate`; then a whole match runs headless on scripted territories
with this folder's verifiers, provisioning and rules. A scripted territory is an in-process stand-in
for a guest where a builder already deployed a service answering `/health` and `/records/<id>`;
its plan says how that deployment keeps records. builder-one keeps them on disk (what the oracle
deploys) and must win durable; builder-two on tmpfs (what the forgetful builder leaves) and must
fail host-reboot. The scripted plans of adapters/ are not run here (they need a real guest): the
real race is `aoe run <this folder>/arena.toml --headless`.

The stand-ins speak only that records contract: once your verifiers check other endpoints, keep the
validation test and judge the race on real guests.
"""

import asyncio
from pathlib import Path

from aoe_tui.engine.arena_check import arena_problems
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_host import ScriptedPlan
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider

ARENA = Path(__file__).resolve().parent / "arena.toml"
DEPLOYMENTS = {
    "builder-one": ScriptedPlan(ready_at_ms=6000, storage="disk"),
    "builder-two": ScriptedPlan(ready_at_ms=2000, storage="tmpfs"),
}


def test_the_folder_validates():
    assert arena_problems(ARENA.parent)[1] == []


def test_the_durable_deployment_wins_and_the_forgetful_one_fails_host_reboot(tmp_path):
    runner = MatchRunner(
        ARENA,
        tmp_path / "match",
        ScriptedProvider(DEPLOYMENTS),
        ScriptedLauncher(),
        source=ManualSource(),
        drain_seconds=1,
    )
    world = asyncio.run(runner.run())
    assert world.winner == "builder-one" and world.finish_reason == "first durable deployment"
    assert world.territories["builder-one"].competitor_state == "durable"
    forgetful = world.territories["builder-two"].milestones
    assert forgetful["records-kept"].passed and not forgetful["host-reboot"].passed
    assert "gone" in (forgetful["host-reboot"].failure_detail or "")
