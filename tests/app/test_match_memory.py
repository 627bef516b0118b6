"""A match screen keeps its match's objects out of the cycle collector only while it is shown."""

from __future__ import annotations

import gc

from textual.widgets import DataTable

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.match_screen import MatchScreen
from tests.app.app_under_test import SIZE
from tests.fixture_paths import SEEDS


async def test_leaving_a_match_gives_its_objects_back_to_the_collector(clock):
    gc.unfreeze()
    app = AoeApp(roots=[SEEDS], clock=clock.now)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        browser = app.screen
        browser.query_one(DataTable).focus()
        await pilot.press("enter")
        assert isinstance(app.screen, MatchScreen)
        await pilot.pause()
        assert gc.get_freeze_count() > 0, "the shown match is frozen out of the collector's walks"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is browser
        assert gc.get_freeze_count() == 0, "a match left behind would stay in memory for the whole session"
