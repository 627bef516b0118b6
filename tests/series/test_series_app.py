"""The app on a series or benchmark folder: snapshots of the series view, standings, grid and charts."""

from __future__ import annotations

import json
import shutil

import pytest

from aoe_tui.analysis.series_overview import overview
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.screens.series_screen import SeriesScreen, chart_content
from aoe_tui.app.series_app import SeriesApp
from aoe_tui.cli.main import main
from aoe_tui.testing.clock import ManualSource
from tests.series.helpers import SERIES, STORED, copy_series, write_round_arena

WIDE, NARROW = (160, 48), (80, 24)


@pytest.fixture
def in_fixtures(monkeypatch):
    """Relative paths, so the folder shown in the title is the same on every machine."""
    monkeypatch.chdir(SERIES.parent)
    return SERIES.name


def benchmark_folder(tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    first = copy_series(bench / "01-first-build-real")
    second = bench / "02-first-build-variant"
    for number in (1, 2):
        shutil.copytree(first / f"round-00{number}", second / f"round-00{number}")
    (second / "series.json").write_text(json.dumps({**STORED, "rounds_requested": 2}))
    (bench / "benchmark.json").write_text(json.dumps({"schema_version": 2, "suite_id": "fixture-suite"}))
    for round_dir in [*first.glob("round-*"), *second.glob("round-*")]:
        write_round_arena(round_dir)
    monkeypatch.chdir(tmp_path)
    return "bench"


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["wide", "narrow"])
def test_series_view(snap_compare, in_fixtures, size):
    assert snap_compare(SeriesApp(overview(in_fixtures), clock=ManualSource().now), terminal_size=size)


def test_benchmark_leaderboard(snap_compare, tmp_path, monkeypatch):
    folder = benchmark_folder(tmp_path, monkeypatch)
    assert snap_compare(SeriesApp(overview(folder), clock=ManualSource().now), terminal_size=WIDE)


def test_the_chart_scales_bars_and_says_na_for_unknown_cost():
    rows = [dict(STORED["standings"][0]), dict(STORED["standings"][2], cost_microusd=None)]
    lines = chart_content(rows).plain.splitlines()
    wins = [line for line in lines if line.strip().startswith(("deepseek", "luna"))][:2]
    assert wins[0].count("█") == 24 and wins[1].count("█") == 0
    assert lines[-1].rstrip().endswith("n/a") and "█" not in lines[-1]


async def test_enter_on_a_round_opens_its_replay_and_escape_comes_back(in_fixtures):
    app = SeriesApp(overview(in_fixtures), clock=ManualSource().now)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MatchScreen) and app.screen.session.match.name == "round-002"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SeriesScreen)


async def test_enter_on_a_benchmark_arena_opens_its_series(tmp_path, monkeypatch):
    app = SeriesApp(overview(benchmark_folder(tmp_path, monkeypatch)), clock=ManualSource().now)
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, SeriesScreen) and app.screen.series.arena_id == "first-build-real"
        assert app.screen.series.decided == 2


def test_aoe_replay_json_on_a_series_prints_its_standings(capsys):
    assert main(["replay", str(SERIES), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["standings"] == STORED["standings"]
