"""A long log opens on its start at once; the match screen reads the rest in the background, then shows it all."""

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.view import log_reader
from aoe_tui.app.widgets.event_list import WINDOW, EventList
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.store import log_lines, timeline
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


async def _read_with_keys(monkeypatch, keys: list[str]) -> tuple[int, str, list[tuple[int, int]]]:
    """A 10^4-event match opened on its start, read in batches of 1,000 by the reader process, `keys` pressed
    at once; (the cursor and the scrubber once the whole match is shown, (cursor, events loaded) at every frame
    meanwhile)."""
    monkeypatch.setattr(timeline, "PROGRESS_EVERY", 1_000)  # the forked reader takes it as it is
    monkeypatch.setattr(log_lines, "CHUNK_LINES", 500)  # a batch after each chunk that passed 1,000 events
    monkeypatch.setattr(log_reader, "FRAME_GAP_S", 0)  # a frame per batch: a load of 10^4 takes a moment
    frames: list[tuple[int, int]] = []
    refresh_cursor = MatchScreen.refresh_cursor

    def recorded(screen: MatchScreen) -> None:
        frames.append((screen.playback.position, len(screen.session.timeline)))
        refresh_cursor(screen)

    monkeypatch.setattr(MatchScreen, "refresh_cursor", recorded)
    preview = load_match(synthetic_match(10_000), preview_bytes=100_000)
    app = AoeApp(preview, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MatchScreen)
        for key in keys:  # the keys' actions: the pilot's own press waits for an idle app, which a load is not
            getattr(screen, f"action_{key}")()
        for _ in range(2400):  # up to two minutes on a loaded machine
            if screen.reading is None:
                break
            await pilot.pause(0.05)
        assert screen.reading is None and len(screen.session.timeline) == 10_000
        await pilot.pause()
        return screen.playback.position, rendered(screen.query_one(TimelineScrubber)), frames


async def test_end_pressed_while_a_long_log_loads_follows_the_end_as_it_grows(monkeypatch):
    position, scrubber, frames = await _read_with_keys(monkeypatch, ["end"])
    loading = [(at, loaded) for at, loaded in frames if 0 < loaded < 10_000]
    assert len({loaded for _, loaded in loading}) >= 3, f"the screen took the log in batches: {frames}"
    ended = next(i for i, (at, loaded) in enumerate(loading) if at == loaded - 1)  # End's own frame
    assert len({loaded for _, loaded in loading[ended:]}) >= 2, f"batches came after End: {frames}"
    assert all(at == loaded - 1 for at, loaded in loading[ended:]), f"End follows the end: {frames}"
    assert position == 9_999 and "event 10000/10000" in scrubber


async def test_home_pressed_while_a_long_log_loads_stays_home(monkeypatch):
    position, scrubber, _ = await _read_with_keys(monkeypatch, ["end", "home"])
    assert position == -1 and "event 0/10000" in scrubber, "moving away from the end stops following it"
