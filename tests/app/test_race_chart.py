"""The race chart: each territory's points over time, folded from the milestone passes, and how it looks."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.app import App, ComposeResult

from aoe_tui.app.app import AoeApp
from aoe_tui.app.view.points_race import PointsRace
from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.widgets.race_chart import CURSOR_GLYPH, Canvas, RaceChart, RacePlot, step_line
from aoe_tui.domain.events import MilestonePassed, MilestoneRevoked
from aoe_tui.domain.world import World
from aoe_tui.store.markers import find_markers
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineIndex
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import rendered, replay_app
from tests.app.test_snapshots import seek_to
from tests.domain.test_reducer_fixtures import recorded_world
from tests.fixture_paths import MATCH_DIRS, MATCHES, SINGLE_FILES

DURABLE_QUEUE = MATCHES / "durable-job-queue-real-20260813-103028"  # three lines, passes from 2:06 to 4:00
SCORED = [
    source
    for source in MATCH_DIRS + SINGLE_FILES
    if any(territory.get("milestone_points") for territory in recorded_world(source)["territories"].values())
]
SIZES = {"80x24": (80, 24), "120x36": (120, 36)}


@pytest.mark.parametrize("source", SCORED, ids=lambda p: p.name)
def test_the_race_ends_at_the_points_of_the_recorded_world(source):
    session = MatchSession(load_match(source))
    recorded = recorded_world(source)["territories"]
    end = session.timeline.duration_ms
    assert {t: session.race.points_at(t, end) for t in recorded} == {
        t: state["milestone_points"] for t, state in recorded.items()
    }


def test_every_step_is_the_points_of_the_world_at_its_moment():
    session = MatchSession(load_match(DURABLE_QUEUE))
    steps = session.race.steps
    assert [points for _, points in steps["queue-two"]] == [0, 10, 35, 55, 75, 100]
    for territory_id, territory_steps in steps.items():
        for elapsed_ms, points in territory_steps:
            territory = session.timeline.state_at_time(elapsed_ms).territories.get(territory_id)
            assert (territory.milestone_points if territory else 0) == points


def test_a_second_pass_scores_nothing_and_a_revoke_takes_the_points_back():
    events = [
        MilestonePassed(sequence=0, elapsed_ms=1_000, territory="a", milestone="up", points=10),
        MilestonePassed(sequence=1, elapsed_ms=2_000, territory="a", milestone="up", points=10),
        MilestonePassed(sequence=2, elapsed_ms=2_500, territory="b", milestone="up", points=10),
        MilestoneRevoked(sequence=3, elapsed_ms=3_000, territory="a", milestone="up", reason="re-check failed"),
    ]
    race = PointsRace.of(TimelineIndex(events), find_markers(events))
    assert race.steps == {"a": [(0, 0), (1_000, 10), (3_000, 0)], "b": [(0, 0), (2_500, 10)]}
    assert [race.points_at("a", t) for t in (999, 1_000, 2_999, 3_000)] == [0, 10, 10, 0]
    assert race.top == 10 and race.version == 3


def test_a_world_only_match_starts_the_race_at_its_points():
    world = World.model_validate({"territories": {"a": {"milestone_points": 40}}})
    assert PointsRace.of(TimelineIndex(initial=world), []).steps == {"a": [(0, 40)]}


def test_a_step_line_goes_flat_then_straight_up_to_the_end():
    assert step_line([(0, 0), (1_000, 10), (3_000, 5)], 4_000) == (
        [0, 1_000, 1_000, 3_000, 3_000, 4_000],
        [0, 0, 10, 10, 5, 5],
    )


def test_the_cursor_column_spans_the_canvas():
    canvas = Canvas(left=4, width=11, top=1, bottom=9)
    assert [canvas.column(t, 1_000) for t in (-5, 0, 500, 1_000, 2_000)] == [4, 4, 9, 14, 14]


class ChartApp(App[None]):
    def compose(self) -> ComposeResult:
        yield RaceChart()


async def test_the_cursor_at_a_pass_falls_on_its_step():
    """The cursor is painted where plotext put the moment: at a pass it meets the step's climb, not beside it."""
    race = PointsRace(World())
    race.add(MilestonePassed(sequence=0, elapsed_ms=500, territory="a", milestone="up", points=100), 500)
    app = ChartApp()
    async with app.run_test(size=(61, 14)) as pilot:

        async def cursor_column(cursor_ms: int) -> list[str]:
            app.query_one(RaceChart).show(race, ["a"], cursor_ms, 1_000)
            await pilot.pause()
            lines = rendered(app.query_one(RacePlot)).splitlines()
            canvas = Canvas.found_in([Text(line) for line in lines])
            assert canvas is not None
            column = canvas.column(cursor_ms, 1_000)
            return [lines[row][column] for row in range(canvas.top, canvas.bottom)]

        at_the_pass, before_it = await cursor_column(500), await cursor_column(250)
        assert CURSOR_GLYPH not in at_the_pass  # the climb from 0 to 100 fills the column
        assert before_it.count(CURSOR_GLYPH) == len(before_it) - 1  # all but the line at 0


async def test_a_hostile_territory_name_is_shown_as_typed_and_never_reaches_plotext():
    hostile = "[bold red]boom\x1b]0;pwned\x07\x1b[2J"
    race = PointsRace(World())
    race.add(MilestonePassed(sequence=0, elapsed_ms=500, territory=hostile, milestone="up", points=10), 500)
    app = ChartApp()
    async with app.run_test(size=(80, 12)) as pilot:
        app.query_one(RaceChart).show(race, [hostile], 1_000, 1_000)
        await pilot.pause()
        legend, plot = rendered(app.query_one("#race-legend")), rendered(app.query_one(RacePlot))
        assert "[bold red]boom 10" in legend and "\x1b" not in legend + plot and "pwned" not in plot


async def test_h_shows_the_chart_in_place_of_the_panes_and_back():
    app = replay_app(DURABLE_QUEUE)
    async with app.run_test(size=SIZES["120x36"]) as pilot:
        screen = app.screen
        chart, panes = screen.query_one(RaceChart), screen.query_one("#panes")
        assert not chart.display and panes.display
        await pilot.press("h")
        assert chart.display and not panes.display
        await pilot.press("h")
        assert not chart.display and panes.display


async def test_live_events_grow_the_race_and_the_chart_draws_it_again():
    """The live screen's seam (`add_events`): a pass arriving while the chart shows is on it at once."""
    match = load_match(DURABLE_QUEUE)
    events, match.timeline = list(match.events), None
    match.events = events[:400]  # queue-three has passed service-up (10 points), queue-two not yet
    app = AoeApp(match, clock=ManualSource().now)
    async with app.run_test(size=SIZES["120x36"]) as pilot:
        screen = app.screen
        await pilot.press("end", "h")
        plot, legend = screen.query_one(RacePlot), screen.query_one("#race-legend")
        before = rendered(plot)
        assert "queue-two 0" in rendered(legend) and "queue-three 10" in rendered(legend)
        screen.add_events(events[400:])
        await pilot.pause()
        assert "queue-two 100" in rendered(legend) and rendered(plot) != before
        assert screen.session.race.points_at("queue-two", screen.playback.elapsed_ms) == 100


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("moment", [130_000, 224_000], ids=["2m10s", "3m44s"])
def test_race_chart(snap_compare, size, moment):
    async def run_before(pilot) -> None:
        await pilot.press("h")
        await seek_to(moment)(pilot)

    assert snap_compare(replay_app(DURABLE_QUEUE), terminal_size=size, run_before=run_before)
