"""The match browser (Pilot): it lists the saved matches under its folders and Enter opens one."""

from __future__ import annotations

from textual.widgets import DataTable

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.browser import BrowserScreen
from aoe_tui.app.screens.match_screen import MatchScreen
from tests.fixture_paths import SEEDS
from tests.app.app_under_test import SIZE


async def test_browser_lists_matches_and_enter_opens_one(clock):
    app = AoeApp(roots=[SEEDS], clock=clock.now)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        browser = app.screen
        assert isinstance(browser, BrowserScreen)
        table = browser.query_one(DataTable)
        assert table.row_count == 4
        names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "harness-exhibition-20260915-225225" in names
        table.focus()
        table.move_cursor(row=names.index("harness-exhibition-20260915-225225"))
        await pilot.press("enter")
        assert isinstance(app.screen, MatchScreen)
        assert app.screen.session.match.name == "harness-exhibition-20260915-225225"
        await pilot.press("escape")
        assert app.screen is browser
