"""`aoe series` in the app (Pilot): each round prepared and raced as `aoe run` shows a match, the series view
between rounds and at the end, steering in a round, quitting and signals stopping the series as headless does.

The rounds are scripted (the round factory the headless tests use), each on its own `ManualSource`: a held
round waits at a fixed match time until the test lets it go on, so what is on screen is the same every run.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
from pathlib import Path

import pytest

from aoe_tui.analysis.standings import standings_report
from aoe_tui.app.screens.dialogs import BusyScreen, ConfirmScreen
from aoe_tui.app.screens.live_series_screen import LiveSeriesScreen, SeriesRoundScreen
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.screens.preparation import PreparationScreen
from aoe_tui.app.screens.territory_screen import TerritoryScreen
from aoe_tui.app.series_live_app import SeriesLiveApp
from aoe_tui.app.view.series_progress import SeriesLog
from aoe_tui.app.widgets.header import MatchHeader
from aoe_tui.cli import series_commands
from aoe_tui.cli.main import main
from aoe_tui.engine.series import SeriesRunner
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import rendered, screen_text
from tests.app_live.live_match import until
from tests.series.helpers import ScriptedRounds, quick_arena

WIDE = (160, 48)
HELD_AT_S = 1.0


def series_app(
    root: Path, rounds: int = 2, held: dict[int, float] | None = None, intermission_s: float = 0.3, wall_clock=None
) -> tuple[SeriesLiveApp, ScriptedRounds]:
    """The app on a scripted series of `rounds` into `root/series`, opened as `aoe series` opens it."""
    arena = quick_arena(root / "arena")
    factory = ScriptedRounds(arena, held=held)
    log = SeriesLog()
    options = {} if wall_clock is None else {"wall_clock": wall_clock}
    series = SeriesRunner(arena, root / "series", factory, rounds=rounds, report=log.add, **options)
    series.open()
    return SeriesLiveApp(series, log, clock=ManualSource().now, intermission_s=intermission_s), factory


def racing(app: SeriesLiveApp, number: int) -> bool:
    """Round `number`'s race is on top, held at its limit."""
    screen = app.screen
    return isinstance(screen, SeriesRoundScreen) and app.playing == number and screen.runner.clock.source.held


def text_of(screen, selector: str) -> str:
    return rendered(screen.query_one(selector))


def table_rows(table) -> list[str]:
    return [" ".join(str(cell) for cell in table.get_row_at(row)) for row in range(table.row_count)]


async def test_rounds_follow_each_other_with_the_series_view_between_and_at_the_end(tmp_path):
    app, rounds = series_app(tmp_path, held={1: HELD_AT_S, 2: HELD_AT_S}, intermission_s=3600)
    output = tmp_path / "series"
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: racing(app, 1))
        first = app.screen
        await until(pilot, lambda: "s Series" in screen_text(app))  # the footer may be drawn a frame after the race
        assert "● LIVE" in text_of(first, MatchHeader) and "s Series" in screen_text(app)

        await pilot.press("s")  # the series view, mid-round
        await until(pilot, lambda: isinstance(app.screen, LiveSeriesScreen))
        view = app.screen
        assert table_rows(view.query_one("#series-next")) == [
            "1 playing amnesiac@builder-two, oracle@builder-one, tmpfs-writer@builder-three",
            "2 next amnesiac@builder-three, oracle@builder-two, tmpfs-writer@builder-one",
        ]
        assert "2 rounds to go · time left known once a round is decided" in text_of(view, ".series-heading")
        assert "round 1/2 started" in text_of(view, "#series-log")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is first)

        rounds.sources[1].limit = math.inf  # round 1 is decided: the series view until round 2 takes over
        await until(pilot, lambda: isinstance(app.screen, LiveSeriesScreen) and app.screen.series.decided == 1)
        grid = table_rows(app.screen.query_one("#series-grid"))
        assert any(row.startswith("amnesiac") and "r1 won" in row for row in grid), grid
        assert app.screen.series.standings[0]["agent"] == "amnesiac"

        await until(pilot, lambda: app.playing == 2)
        assert isinstance(app.screen, LiveSeriesScreen)  # round 2 has begun; the view stays for the intermission
        await pilot.press("escape")  # unless the operator goes to the round
        await until(pilot, lambda: racing(app, 2))
        assert app.screen is not first and app.screen.runner.match_dir.root == output / "round-002"
        rounds.sources[2].limit = math.inf
        await until(pilot, lambda: isinstance(app.screen, LiveSeriesScreen) and app.screen.progress.ended is not None)
        final = app.screen
        assert "series complete" in text_of(final, ".series-heading") and not final.progress.rounds
        assert "progress: 2/2 rounds done" in text_of(final, "#series-log")
        await pilot.press("escape")  # nothing to go back to
        assert app.screen is final
        await pilot.press("q")  # the series is over: no question
        await until(pilot, lambda: not app.is_running)
    checkpoint = json.loads((output / "series.json").read_text())
    assert checkpoint["rounds_completed"] == 2 and [r["round"] for r in checkpoint["rounds"]] == [1, 2]
    assert checkpoint["standings"] == standings_report(output)["standings"]
    assert app.series_stopped is None and app.engine_error is None


async def test_steering_and_drill_down_work_in_a_round_and_a_round_ending_waits_for_the_drill_down(tmp_path):
    app, rounds = series_app(tmp_path, held={1: HELD_AT_S, 2: HELD_AT_S})
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: racing(app, 1))
        screen = app.screen
        await pilot.press("p", "y")
        await until(pilot, lambda: app.runner.world.paused)
        await until(pilot, lambda: screen.pending_operation is None)
        await pilot.press("r")
        await until(pilot, lambda: "match_resumed" in [e.kind for e in screen.session.timeline.events])
        await pilot.press("2", "d")
        assert isinstance(app.screen, TerritoryScreen)
        rounds.sources[1].limit = math.inf
        await until(pilot, lambda: app.playing == 2)
        await pilot.pause(0.5)  # round 1 ended and the pause between rounds is over: the drill-down stays
        assert isinstance(app.screen, TerritoryScreen)
        await pilot.press("escape")
        await until(pilot, lambda: racing(app, 2))
    kinds = [json.loads(line)["kind"] for line in (tmp_path / "series/round-001/events.jsonl").open()]
    assert "match_paused" in kinds and "match_resumed" in kinds


async def test_quitting_mid_round_asks_then_stops_the_series_keeping_the_round_as_interrupted(tmp_path):
    app, _ = series_app(tmp_path, held={1: HELD_AT_S})
    output = tmp_path / "series"
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: racing(app, 1))
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen) and "Stop the series" in app.screen.question
        await pilot.press("n")
        assert isinstance(app.screen, SeriesRoundScreen) and app.engine_running
        await pilot.press("q", "y")
        assert isinstance(app.screen, BusyScreen)
        await until(pilot, lambda: not app.is_running)
    assert app.series_stopped == "interrupted by the operator" and app.engine_error is None
    assert json.loads((output / "series.json").read_text())["rounds_completed"] == 0
    kept = output / "round-001.interrupted-1"
    assert kept.is_dir() and not (output / "round-001").exists()
    last = json.loads((kept / "events.jsonl").read_text().splitlines()[-1])
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_stops_the_series_as_headless_does(tmp_path, signum):
    app, _ = series_app(tmp_path, held={1: HELD_AT_S})
    output = tmp_path / "series"
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: racing(app, 1))
        os.kill(os.getpid(), signum)
        await until(pilot, lambda: not app.is_running)
    assert app.stopped_by_signal == signum and signal.Signals(signum).name in app.series_stopped
    assert (output / "round-001.interrupted-1").is_dir()
    last = json.loads((output / "round-001.interrupted-1" / "events.jsonl").read_text().splitlines()[-1])
    assert last["to"] == "aborted" and signal.Signals(signum).name in last["reason"]


def test_the_live_series_view_mid_series(snap_compare, tmp_path, monkeypatch):
    """Round 1 decided, round 2 held before its race: standings of one round, the grid, what comes next."""
    monkeypatch.chdir(tmp_path)
    ticks = itertools.count(0, 30)  # every round takes 30 s of wall time: one minute per round is left
    app, _ = series_app(Path("."), rounds=3, held={2: 0}, intermission_s=3600, wall_clock=lambda: next(ticks))

    async def run_before(pilot) -> None:
        await until(pilot, lambda: app.playing == 2 and app.runner.clock.source.held)
        await pilot.press("escape")  # to round 2 and back: the view drawn with round 2 where it is held
        await until(pilot, lambda: isinstance(app.screen, (PreparationScreen, SeriesRoundScreen)))
        await until(pilot, lambda: app.check_action("show_series", ()) is True)
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, LiveSeriesScreen))

    assert snap_compare(app, terminal_size=WIDE, run_before=run_before)


async def test_a_replay_opened_from_the_series_view_is_not_pulled_away_by_the_next_round(tmp_path):
    app, rounds = series_app(tmp_path, held={1: HELD_AT_S, 2: HELD_AT_S}, intermission_s=0.3)
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: racing(app, 1))
        await pilot.press("s", "enter")  # the series view, and round 1's replay from its rounds table
        await until(pilot, lambda: type(app.screen) is MatchScreen)
        rounds.sources[1].limit = math.inf
        await until(pilot, lambda: app.playing == 2 and app.round_screen is not None and not app.showing_series)
        await pilot.pause(0.3)
        assert type(app.screen) is MatchScreen and app.screen.session.match.name == "round-001"
        await pilot.press("escape")  # back to the series view: the next round takes over
        await until(pilot, lambda: racing(app, 2))


def test_a_folder_that_cannot_be_resumed_is_one_line_before_the_app_opens(tmp_path, monkeypatch, capsys):
    arena, output = quick_arena(tmp_path / "arena"), tmp_path / "series"
    (output / "notes.txt").parent.mkdir()
    (output / "notes.txt").write_text("not a series")
    monkeypatch.setattr(
        series_commands, "real_round_factory", lambda args, manifest, pool=None: ScriptedRounds(manifest)
    )
    monkeypatch.setattr(SeriesLiveApp, "run", lambda app: pytest.fail("the app opened"))
    assert main(["series", str(arena), "--output", str(output)]) == 2
    assert capsys.readouterr().err == f"aoe: {output}: exists and holds no series.json; choose another --output\n"
