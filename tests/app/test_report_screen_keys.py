"""The match report (Pilot): each key opens it on its tab, and its tables hold the agents and standings."""

from __future__ import annotations

import pytest

from textual.widgets import DataTable, TabbedContent

from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.screens.report_screen import ReportScreen
from tests.fixture_paths import HARNESS
from tests.app.app_under_test import SIZE, replay_app


@pytest.mark.parametrize("key,tab", [("f", "fought"), ("g", "agents"), ("w", "standings"), ("v", "provenance")])
async def test_report_keys_open_the_report_on_their_tab(clock, key, tab):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
        assert isinstance(app.screen, ReportScreen)
        assert app.screen.query_one(TabbedContent).active == tab
        await pilot.press("escape")
        assert isinstance(app.screen, MatchScreen)


async def test_report_tables_hold_the_agents_and_standings(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        agents = app.screen.query_one("#agents-table", DataTable)
        assert agents.row_count == 3
        assert [str(c) for c in agents.get_row_at(0)][:5] == [
            "claux",
            "builder-one",
            "openai/gpt-5.6-luna",
            "claux",
            "high",
        ]
        standings = app.screen.query_one("#standings-table", DataTable)
        assert str(standings.get_row_at(0)[1]) == "builder-three"
