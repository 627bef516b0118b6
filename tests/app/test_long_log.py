"""A long log opens on its start at once; the match screen reads the rest in the background, then shows it all."""

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.widgets.event_list import WINDOW, EventList
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from benchmarks.synthetic_match import synthetic_match
from tests.app.app_under_test import SIZE, rendered


async def test_a_long_log_opens_on_its_start_and_reads_the_rest_in_the_background():
    folder = synthetic_match(10_000)
    preview = load_match(folder, preview_bytes=100_000)
    assert preview.pending_log is not None and 0 < len(preview.events) < 1_000
    app = AoeApp(preview, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MatchScreen) and len(screen.session.timeline) == len(preview.events)
        for _ in range(1200):  # up to a minute on a loaded machine
            if screen.reading is None:
                break
            await pilot.pause(0.05)
        screen = app.screen
        assert screen.reading is None and len(screen.session.timeline) == 10_000
        await pilot.press("end")
        await pilot.pause()
        assert "event 10000/10000" in rendered(screen.query_one(TimelineScrubber))
        table = screen.query_one(EventList).table
        assert 0 < table.row_count <= 2 * WINDOW, "the list holds a window of rows, not all of them"
        assert "builder-12-agent  succeeded" in rendered(table)  # the last event, at the cursor
