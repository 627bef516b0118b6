"""The race chart of a running match: shown before any pass, it grows as the scripted race scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from aoe_tui.testing.clock import ManualSource
from tests.app_live.live_match import hold_at, live_app, repeatable_arena, until


@pytest.fixture
def arena(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return repeatable_arena(tmp_path)


def test_live_race_chart(snap_compare, arena):
    source = ManualSource(limit=0)
    app = live_app(Path("demo-match"), source, manifest=arena)

    async def run_before(pilot) -> None:
        await hold_at(pilot, source, 2)
        await until(pilot, lambda: app.match_screen is not None)
        assert app.match_screen.session.race.top == 0  # nothing scored yet: the chart must grow by itself
        await pilot.press("h")
        await hold_at(pilot, source, 12)

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
