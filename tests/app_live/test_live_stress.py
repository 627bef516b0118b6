"""The live app under the stress script (benchmarks/live_stress.py), and the race it found."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from aoe_tui.app.screens.dialogs import ConfirmScreen
from benchmarks.live_stress import StressFailure, Tally, stress
from aoe_tui.testing.clock import ManualSource
from tests.app_live.live_match import hold_at, live_app, until
from tests.engine.helpers import arena_data, write_arena

SIZE = (160, 48)
STRESS_SECONDS = 60  # the issue asks for one minute of it; benchmarks/live_stress.py runs it for longer
SHORT_STRESS_SECONDS = 6  # the fast suite's share of it (a round or two; the soak runs the minute)


async def test_answering_abort_after_the_match_ended_meanwhile_still_leaves(tmp_path):
    source = ManualSource(limit=0)
    data = arena_data(duration_seconds=8)  # the timer decides soon after the question
    for milestone in data["build"]["milestones"]:
        milestone["timeout_seconds"] = min(milestone["timeout_seconds"], 8)
    short = write_arena(tmp_path, data)
    app = live_app(tmp_path / "m", source, manifest=short)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 4)
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen)
        source.limit = math.inf  # the match runs to its end while the question is open
        await until(pilot, lambda: not app.engine_running)
        await pilot.press("y")
        await until(pilot, lambda: not app.is_running, seconds=10)
    assert app.runner.world.match_state == "finished"


async def stressed(seconds: float, directory: Path) -> Tally:
    """Rounds of the stress script for `seconds` on a random seed (named when a check fails)."""
    seed = random.randrange(10**6)
    try:
        tally = await stress(seconds, seed, 40.0, directory)
    except StressFailure as failure:
        raise AssertionError(f"seed {seed}: {failure}") from None
    return tally


async def test_a_short_stress_run_loses_no_event(tmp_path):
    """The stress script's operator and every one of its checks (no exception, the screen never shows an event
    out of the recorder's order and catches up, the log on disk is what was made), for a few seconds: what the fast
    suite runs of the minute below."""
    tally = await stressed(SHORT_STRESS_SECONDS, tmp_path)
    assert isinstance(tally, Tally) and tally.rounds >= 1 and tally.events > 0 and tally.actions > 0


@pytest.mark.soak
async def test_the_live_app_under_stress_loses_no_event(tmp_path):
    """The minute of stress issue 16 asks for: more rounds, so rarer interleavings, of the same checks as
    test_a_short_stress_run_loses_no_event. A soak outside the fast suite's 3-minute budget, so skipped there
    (tests/conftest.py says why); AOE_SOAK=1 (or AOE_ALL_VM=1) runs it."""
    tally = await stressed(STRESS_SECONDS, tmp_path)
    assert isinstance(tally, Tally) and tally.rounds >= 1 and tally.events > 0 and tally.actions > 0
