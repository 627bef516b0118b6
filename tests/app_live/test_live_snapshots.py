"""Snapshots of the live app: booting, a failed boot, racing (wide and 80x24), scrubbed back, paused, finished.

Deterministic by construction: the scripted provider runs on a `ManualSource`
held at a fixed match time, verifiers draw no random ids, the match
directory has a fixed relative name, and nothing here raises a notification.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from aoe_tui.app.screens.preparation import PreparationScreen
from aoe_tui.app.live_app import LiveApp
from tests.app_live.live_match import (
    LIVE_RACE,
    FailingBootProvider,
    GatedBootProvider,
    RivalsFirstProvider,
    hold_at,
    live_app,
    repeatable_arena,
    until,
)
from aoe_tui.testing.clock import ManualSource

WIDE, NARROW = (160, 48), (80, 24)
RACING_AT_S = 12


@pytest.fixture
def arena(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return repeatable_arena(tmp_path)


def app_for(arena: Path, source: ManualSource, provider=None) -> LiveApp:
    return live_app(Path("demo-match"), source, provider, manifest=arena)


def test_booting(snap_compare, arena):
    app = app_for(arena, ManualSource(), GatedBootProvider(dict(LIVE_RACE)))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: app.board.territories["builder-three"].stages["boot"] == "running")

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_a_territory_fails_to_boot(snap_compare, arena):
    app = app_for(arena, ManualSource(), FailingBootProvider())

    async def run_before(pilot) -> None:
        await until(pilot, lambda: app.engine.is_finished and isinstance(app.screen, PreparationScreen))

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["wide", "narrow"])
def test_racing(snap_compare, arena, size):
    source = ManualSource(limit=0)

    async def run_before(pilot) -> None:
        await hold_at(pilot, source, RACING_AT_S)

    assert snap_compare(app_for(arena, source), terminal_size=size, run_before=run_before)


def test_scrubbed_back_while_the_match_goes_on(snap_compare, arena):
    source = ManualSource(limit=0)

    async def run_before(pilot) -> None:
        await hold_at(pilot, source, 8)
        await pilot.press("shift+left")
        await hold_at(pilot, source, RACING_AT_S)

    assert snap_compare(app_for(arena, source), terminal_size=WIDE, run_before=run_before)


def test_paused(snap_compare, arena):
    source = ManualSource(limit=0)
    app = app_for(arena, source)

    async def run_before(pilot) -> None:
        await hold_at(pilot, source, RACING_AT_S)
        await pilot.press("3", "p", "y")
        await until(
            pilot,
            lambda: (
                app.runner.world.paused
                and app.match_screen.pending_operation is None
                and app.match_screen.session.timeline.events[-1].kind == "match_paused"
            ),
        )

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_finished(snap_compare, arena):
    source = ManualSource(limit=math.inf)
    app = app_for(arena, source, RivalsFirstProvider(dict(LIVE_RACE), "builder-one"))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: app.match_screen is not None and not app.engine_running)
        await pilot.pause()

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


def test_steering_keys_in_help(snap_compare, arena):
    source = ManualSource(limit=0)

    async def run_before(pilot) -> None:
        await hold_at(pilot, source, RACING_AT_S)
        await pilot.press("question_mark")

    assert snap_compare(app_for(arena, source), terminal_size=WIDE, run_before=run_before)
