"""The match browser (Pilot): it lists the saved matches under its folders and Enter opens one."""

from __future__ import annotations

import shutil
import threading

from textual.widgets import DataTable

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens import browser as browser_module
from aoe_tui.app.screens.browser import BrowserScreen
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.view.match_catalog import read_entry
from tests.fixture_paths import HARNESS, SEEDS, WORLD_ONLY
from tests.app.app_under_test import SIZE, rendered


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


async def test_every_match_is_listed_at_once_and_rows_fill_in_as_they_are_read(clock, tmp_path, monkeypatch):
    """A folder of matches never seen before lists every one at once, each row "reading…" until its match is
    read (off the UI thread); a row still being read does not open. Seen again, rows come from the cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "matches"
    root.mkdir()
    for seed in (HARNESS, WORLD_ONLY):
        shutil.copy(seed, root / seed.name)
    gate, reads = threading.Event(), []

    def gated_read(path, cache):
        reads.append(path.name)
        gate.wait(10)
        return read_entry(path, cache)

    monkeypatch.setattr(browser_module, "read_entry", gated_read)
    app = AoeApp(roots=[root], clock=clock.now)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(500):
            if reads:
                break
            await pilot.pause(0.01)
        assert reads, "the browser never read a match in its own worker"
        browser = app.screen
        table = browser.query_one(DataTable)
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [row[:2] for row in rows] == [[p.name, "reading…"] for p in sorted(root.iterdir())]
        assert "2 matches · reading 2 not seen before…" in rendered(browser.query_one("#browser-status"))
        await pilot.press("enter")  # the first row is still being read: nothing opens
        assert app.screen is browser
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        states = sorted(str(table.get_row_at(i)[1]) for i in range(table.row_count))
        assert states == ["finished", "finished"] and "reading" not in rendered(browser.query_one("#browser-status"))
    reads.clear()
    again = AoeApp(roots=[root], clock=clock.now)
    async with again.run_test(size=SIZE) as pilot:
        await again.workers.wait_for_complete()
        await pilot.pause()
        table = again.screen.query_one(DataTable)
        assert table.row_count == 2 and reads == [], "seen before: listed from the cache, nothing read"
        assert "2 matches · enter opens one" in rendered(again.screen.query_one("#browser-status"))
