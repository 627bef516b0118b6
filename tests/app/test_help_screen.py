"""The help screen (Pilot): `?` lists the keys of the screen it was opened from."""

from __future__ import annotations

from aoe_tui.app.screens.help_screen import HelpScreen
from aoe_tui.app.screens.match_screen import MatchScreen
from tests.fixture_paths import HARNESS
from tests.app.app_under_test import SIZE, replay_app


async def test_help_screen_lists_the_keys(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = [keys for keys, _ in app.screen.lines]
        assert "space" in keys and "[" in keys and "s" in keys
        await pilot.press("escape")
        assert isinstance(app.screen, MatchScreen)
