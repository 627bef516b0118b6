"""Opening a match with damaged optional files: it replays, and the app says which files it skipped and why."""

from __future__ import annotations

import shutil

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.screens.report_screen import ReportScreen
from aoe_tui.store.saved_match import load_match

from tests.fixture_paths import PRIMARY_FAILOVER
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import screen_text

LIVE = "deepseek-failover-engineer-transcript.live.json"


async def test_the_app_names_the_skipped_files(tmp_path):
    match_dir = tmp_path / PRIMARY_FAILOVER.name
    shutil.copytree(PRIMARY_FAILOVER, match_dir)
    (match_dir / LIVE).write_text('{"tool_trace": [{"name": "Bash"}, {"na')
    app = AoeApp(load_match(match_dir), clock=ManualSource().now)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, MatchScreen)
        [notification] = list(app._notifications)
        assert notification.title == "1 damaged file skipped" and notification.severity == "warning"
        assert notification.message.startswith(f"{LIVE}: line 1: bad JSON in a transcript")
        await pilot.press("g")
        assert isinstance(app.screen, ReportScreen)
        assert f"skipped (damaged): {LIVE} (line 1: bad JSON" in screen_text(app)
