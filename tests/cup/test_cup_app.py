"""The cup and the ladder in the app: the published heat's header, the cup view (rounds as columns, heats as
boxes, Enter opens a heat's replay), a cup played live, and the ladder's chart and table."""

from __future__ import annotations

from datetime import datetime, UTC

from aoe_tui.analysis.ladder import ladder_report
from aoe_tui.app.app import AoeApp
from aoe_tui.app.cup_app import CupApp
from aoe_tui.app.cup_live_app import CupLiveApp
from aoe_tui.app.ladder_app import LadderApp
from aoe_tui.app.screens.cup_screen import CupLiveScreen, CupScreen, HeatWidget
from aoe_tui.app.screens.ladder_screen import LadderScreen, RatingChart
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.view.series_progress import SeriesLog
from aoe_tui.app.widgets.header import MatchHeader
from aoe_tui.engine.cup import CupRunner
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import SIZE, rendered, screen_text
from tests.cup.helpers import ScriptedHeats, write_cup
from tests.fixture_paths import PROJECT

PUBLISHED = PROJECT / "aoe_tui" / "samples" / "opencode-cup-r1-h2.match.json"
START = datetime(2026, 9, 13, 2, 19, 18, tzinfo=UTC)
READY = {"kimi": 2000, "deepseek": 3000, "glm": 5000, "qwen": 6000}  # every heat ends at a durable deployment


async def until(pilot, condition, timeout=30.0):
    for _ in range(int(timeout / 0.05)):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not met in time")


async def played_cup(tmp_path):
    write_cup(tmp_path, ["kimi", "glm", "deepseek", "qwen", "minimax", "grok"], cup_id="opencode-cup")
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", READY)
    cup = CupRunner(tmp_path / "CUP.toml", tmp_path / "cup", factory, report=lambda _: None, now=lambda: START)
    factory.cup = cup
    await cup.run()
    return tmp_path / "cup"


async def test_the_published_cup_heat_opens_with_its_cup_context_in_the_header():
    app = AoeApp(load_match(PUBLISHED), clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, MatchScreen))
        header = rendered(app.screen.query_one(MatchHeader))
        assert "cup opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1" in header


async def test_the_cup_view_rounds_as_columns_heats_as_boxes_enter_opens_the_replay(tmp_path):
    folder = await played_cup(tmp_path)
    app = CupApp(folder, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, CupScreen))
        text = screen_text(app)
        assert "Round 1 · 6 entrants" in text and "Final · 3 entrants" in text
        assert "winner kimi: won the final (round 2)" in text
        heats = list(app.screen.query(HeatWidget))
        assert [(h.box.round, h.box.heat, h.box.state) for h in heats] == [
            (1, 1, "decided"),
            (1, 2, "decided"),
            (2, 1, "decided"),
        ]
        assert "attempts: a1 decided" in rendered(heats[0])
        heats[1].focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MatchScreen))
        assert "round 1 heat 2 · attempt 1" in rendered(app.screen.query_one(MatchHeader))


async def test_a_cup_played_live_ends_on_the_cup_view(tmp_path):
    write_cup(tmp_path, ["kimi", "glm", "deepseek", "qwen"], cup_id="live-cup")
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", READY)
    log = SeriesLog()
    cup = CupRunner(tmp_path / "CUP.toml", tmp_path / "cup", factory, report=log.add, now=lambda: START)
    factory.cup = cup
    cup.open()
    app = CupLiveApp(cup, log, clock=ManualSource().now, intermission_s=0.2)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.ended is not None and isinstance(app.screen, CupLiveScreen), timeout=60)
        await until(pilot, lambda: "cup complete" in screen_text(app))
        text = screen_text(app)
        assert "winner kimi" in text and "Final · 3 entrants" in text
    assert app.engine_error is None and cup.checkpoint["winner"] == "kimi"


async def test_the_ladder_view_charts_ratings_over_time(tmp_path):
    folder = await played_cup(tmp_path)
    report = ladder_report([folder], history=True)
    app = LadderApp(report, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, LadderScreen))
        await pilot.pause()
        text = screen_text(app)
        assert "LADDER" in text and "3 decided matches" in text and "kimi" in text
        assert app.screen.query_one(RatingChart).report is report
        assert "P(kimi beats" in text
