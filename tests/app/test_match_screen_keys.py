"""The match screen under the keyboard and mouse (Pilot): stepping, seeking, playing, panes, the event
list and its filters, tool feeds, the palette, quitting, and live events growing the timeline."""

from __future__ import annotations

from textual.widgets import Static, TabbedContent

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.commands import MatchCommands
from aoe_tui.app.widgets.event_list import EventList
from aoe_tui.app.widgets.header import MatchHeader
from aoe_tui.app.screens.inspector import InspectorScreen
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.app.widgets.tool_feed import ToolFeed
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import HARNESS, WORLD_ONLY
from tests.app.app_under_test import SIZE, rendered, replay_app


def pane_text(pane: TerritoryPane) -> str:
    """A territory pane's lines (above and below its service map, if it draws one)."""
    return "\n".join(rendered(lines) for lines in pane.query(".lines"))


async def test_arrows_step_one_event_and_shift_arrows_jump_ten_seconds(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MatchScreen) and screen.playback.position == -1
        await pilot.press("right", "right", "right")
        assert screen.playback.position == 2
        await pilot.press("left")
        assert screen.playback.position == 1
        await pilot.press("shift+right")
        assert screen.playback.elapsed_ms == 10_000
        await pilot.press("shift+right", "shift+left")
        assert screen.playback.elapsed_ms == 10_000
        assert "0:10 / 0:45" in rendered(screen.query_one(MatchHeader))


async def test_home_end_and_markers(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("end")
        assert screen.playback.position == len(screen.session.timeline) - 1
        assert "winner builder-three" in rendered(screen.query_one(MatchHeader))
        await pilot.press("home")
        assert screen.playback.position == -1
        await pilot.press("right_square_bracket")
        first = screen.session.markers[0]
        assert screen.playback.position == first.position
        await pilot.press("right_square_bracket", "left_square_bracket")
        assert screen.playback.position == first.position


async def test_space_plays_with_the_injected_clock_and_s_cycles_speed(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("s")
        assert screen.playback.speed == 5
        await pilot.press("space")
        assert screen.playback.playing
        clock.advance(2.0)
        screen._tick()
        assert screen.playback.elapsed_ms == 10_000
        assert "5x ▶ playing" in rendered(screen.query_one(TimelineScrubber))
        await pilot.press("space")
        assert not screen.playback.playing
        await pilot.press("s", "s", "s")
        assert screen.playback.speed == 1


async def test_clicking_and_dragging_on_the_scrubber_seeks(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        scrubber = screen.query_one(TimelineScrubber)
        width = scrubber.content_region.width
        await pilot.click(TimelineScrubber, offset=(width // 2, 1))
        await pilot.pause()
        half = screen.playback.duration_ms / 2
        assert abs(screen.playback.elapsed_ms - half) < screen.playback.duration_ms / width * 2
        assert screen.playback.position == screen.session.timeline.position_at_time(screen.playback.elapsed_ms)
        await pilot.mouse_down(TimelineScrubber, offset=(10, 1))
        await pilot.hover(TimelineScrubber, offset=(width - 1, 1))
        await pilot.mouse_up(TimelineScrubber, offset=(width - 1, 1))
        await pilot.pause()
        assert screen.playback.elapsed_ms == screen.playback.duration_ms


async def test_panes_show_the_state_at_the_cursor(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        pane = screen.query_one("#pane-builder-three", TerritoryPane)
        await pilot.press("shift+right", "shift+right")
        text = pane_text(pane)
        assert "✗ service-up" in text and "attempts" in text and "curl" in text
        await pilot.press("end")
        text = pane_text(pane)
        assert "✓ host-reboot" in text and "points 100" in text
        assert pane.frame_title == "#1 builder-three"
        status = pane_text(pane)
        assert "tokens" in status and "cost n/a" in status  # unknown cost is never $0


async def test_a_narrow_terminal_drops_the_blank_line_between_a_panes_parts(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.screen.query_one("#pane-builder-three", TerritoryPane)

        def line_after_identity() -> str:
            return pane_text(pane).splitlines()[3].strip()  # the identity is three lines

        assert line_after_identity() == ""
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert line_after_identity().startswith("· service-up")
        await pilot.resize_terminal(*SIZE)
        await pilot.pause()
        assert line_after_identity() == ""


async def test_the_scoreboard_drawn_only_when_shown_shows_the_cursor_once_narrow(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")  # wide: the scoreboard is hidden and not drawn
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "#1 builder-three" in rendered(app.screen.query_one("#scoreboard"))


async def test_event_list_follows_the_cursor_and_enter_opens_the_inspector(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        table = screen.query_one(EventList).table
        await pilot.press("right", "right", "right", "right")
        assert table.row_count == 4
        await pilot.press("left")
        assert table.row_count == 3
        table.focus()
        await pilot.press("enter")
        assert isinstance(app.screen, InspectorScreen)
        assert '"sequence": 2' in rendered(app.screen.query_one("#inspector-json", Static))
        await pilot.press("escape")
        assert app.screen is screen


async def test_filter_keys_cycle_and_clear(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        events = screen.query_one(EventList)
        await pilot.press("end", "k")
        assert events.event_filter.kind == sorted({e.kind for e in screen.session.timeline.events})[0]
        await pilot.press("t")
        assert events.event_filter.territory == "builder-one"
        await pilot.press("u")
        assert events.event_filter.agent == "claux"
        await pilot.press("x")
        assert events.event_filter.kind is None and events.event_filter.territory is None
        screen.set_filter(kind="milestone_passed")
        await pilot.pause()
        assert events.table.row_count == 4


async def test_tool_feed_key_cycles_agents_and_enter_opens_a_call(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("end", "c")
        lower = screen.query_one("#lower", TabbedContent)
        assert lower.active == "tab-feed-0"
        feed = screen.query_one("#feed-0", ToolFeed)
        assert feed.row_count == len(screen.session.tool_calls["claux"].calls)
        await pilot.press("enter")
        assert isinstance(app.screen, InspectorScreen)
        assert "claux tool call" in rendered(app.screen.query_one("#inspector-title", Static))
        await pilot.press("escape")
        await pilot.pause()  # the inspector is gone before the next key (a loaded machine delivers it late)
        assert app.screen is screen
        await pilot.press("c")
        assert lower.active == "tab-feed-1"
        await pilot.press("e")
        assert lower.active == "tab-events"
        await pilot.press("home")
        assert feed.row_count == 0


async def test_palette_offers_every_described_binding_and_filters(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        titles = [title for title, _ in MatchCommands(screen)._commands()]
        assert "Play/pause" in titles and "How they fought" in titles
        assert "Filter events: territory = builder-two" in titles
        command = dict(MatchCommands(screen)._commands())["Speed"]
        command()
        await pilot.pause()
        assert screen.playback.speed == 5


async def test_q_quits(clock):
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_add_events_grows_the_timeline_and_a_following_cursor_stays_at_the_end(clock):
    match = load_match(HARNESS)
    events, match.events = match.events, match.events[:50]
    app = AoeApp(match, clock=clock.now)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        await pilot.press("end")
        assert screen.playback.position == 49 and screen.playback.following
        for event in events[50:]:
            screen.add_events([event])
        await pilot.pause()
        assert screen.playback.position == len(events) - 1
        assert screen.query_one(EventList).table.row_count == len(screen.query_one(EventList).rows)
        assert any(m.kind == "finish" for m in screen.session.markers)
        await pilot.press("home")
        screen.add_events([events[-1].model_copy(update={"sequence": len(events)})])
        assert screen.playback.position == -1  # not following: the cursor stays put


async def test_world_only_match_says_it_has_no_timeline(clock):
    app = replay_app(WORLD_ONLY, clock)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert "no timeline" in rendered(screen.query_one(MatchHeader))
        pane = screen.query_one("#pane-builder-two", TerritoryPane)
        assert "points 100" in pane_text(pane)
        await pilot.press("space", "right")
        assert not screen.playback.playing
