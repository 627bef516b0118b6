"""Player text on every replay screen is shown literally: markup is text, escapes never reach the terminal.

The match is the durable job queue one with issue 17's strings in a failure
detail, a tool command and output, an agent summary, an unknown event kind and
a guest console (`hostile_match`). Before the app rendered such text
literally, opening it raised Rich/Textual `MarkupError` and the replay died.
"""

from __future__ import annotations

import pytest
from textual.content import Content
from textual.widgets import DataTable

from aoe_tui.app.app import AoeApp
from aoe_tui.app.widgets.event_list import EventList
from aoe_tui.app.screens.inspector import InspectorScreen
from aoe_tui.app.screens.report_screen import ReportScreen
from aoe_tui.app.screens.territory_screen import TerritoryScreen
from aoe_tui.store.saved_match import load_match

from aoe_tui.testing.clock import ManualSource
from tests.app.hostile_match import AGENT, COMMAND, DESCRIPTION, DETAIL, TERRITORY, hostile_match
from tests.app.app_under_test import screen_text

SIZE = (200, 60)


def assert_clean(text: str) -> None:
    assert "\x1b" not in text and "\x9b" not in text and "pwned" not in text


@pytest.fixture
def match(tmp_path):
    return load_match(hostile_match(tmp_path))


async def test_every_replay_screen_shows_hostile_text_literally(match):
    app = AoeApp(match, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        screen.playback.end()
        screen.refresh_cursor()
        await pilot.pause()
        events = screen.query_one(EventList)
        events.set_filter(events.event_filter.__class__(territory=TERRITORY))
        await pilot.pause()
        table = events.table
        row = next(i for i in range(table.row_count) if "[/]" in str(table.get_row_at(i)[1]))
        table.focus()
        table.move_cursor(row=row, animate=False)
        await pilot.pause()
        text = screen_text(app)
        assert "[/]" in text and DESCRIPTION in text  # the unknown event: its kind and its note
        assert_clean(text)

        await pilot.press("enter")  # the inspector over the unknown event
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        assert '"kind": "[/]"' in screen_text(app)
        await pilot.press("escape")

        failure = next(i for i in range(table.row_count) if DETAIL in str(table.get_row_at(i)[3]))
        table.move_cursor(row=failure, animate=False)
        await pilot.press("enter")
        await pilot.pause()
        assert DETAIL in screen_text(app)
        await pilot.press("escape")

        await pilot.press("c")  # the first agent's tool feed, then the one with the hostile call
        while f"Tools · {AGENT}" not in str(screen.query_one("#lower").active_pane._title):
            await pilot.press("c")
        await pilot.pause()
        text = screen_text(app)
        assert COMMAND in text and DESCRIPTION in text and "[/] [bold red]boom" in text
        assert_clean(text)
        feed = screen.query_one(f"#{screen.query_one('#lower').active.removeprefix('tab-')}")
        feed.move_cursor(row=next(i for i in range(feed.row_count) if COMMAND in str(feed.get_row_at(i)[4])))
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen) and COMMAND in screen_text(app)
        await pilot.press("escape")

        for key in ("f", "g", "w", "v"):
            await pilot.press(key)
            assert isinstance(app.screen, ReportScreen)
            assert_clean(screen_text(app))
            await pilot.press("escape")

        await pilot.press("question_mark")
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.press(*"[/]")
        await pilot.pause(0.3)
        assert "Filter events: kind = [/]" in screen_text(app)
        await pilot.press("escape")

        failed = next(i for i, e in enumerate(match.events) if (getattr(e, "detail", None) or "").startswith(DETAIL))
        app.push_screen(
            TerritoryScreen(
                TERRITORY,
                AGENT,
                screen.session.milestone_ids(),
                match.directory,
                lambda: screen.session.timeline.state_at(failed),
                "ssh root@[::1]",
            )
        )
        await pilot.pause()
        text = screen_text(app)
        assert DETAIL in text and COMMAND in text and "[/] [bold red]boom" in text
        assert_clean(text)


async def test_the_browser_lists_a_match_named_like_markup(tmp_path):
    matches = tmp_path / "matches"
    name = "run [bold red]boom [dim]"  # a folder name cannot hold the "/" of a closing tag: shown, not styled
    hostile_match(matches).rename(matches / name)
    (matches / "[bold red]boom.match.json").write_text('{"artifact_type": "[/]"}')
    app = AoeApp(roots=[matches], clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(app)
        assert name in text and "[bold red]boom.match.json" in text and "unreadable" in text
        table = app.screen.query_one(DataTable)
        table.move_cursor(row=next(i for i in range(table.row_count) if str(table.get_row_at(i)[1]) == "unreadable"))
        await pilot.press("enter")  # the unreadable one: its error is a notification
        await pilot.pause()
        [notification] = list(app._notifications)
        assert "[bold red]boom.match.json: not a saved match" in notification.message and not notification.markup


async def test_no_control_character_of_any_widget_reaches_the_terminal(match):
    app = AoeApp(match, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        header = app.screen.query_one("MatchHeader")
        header.update(Content("title\x1b]0;pwned\x07 \x9b2J\x1b[31mred"))  # straight in, past every cleaner
        await pilot.pause()
        line = screen_text(app).splitlines()[0]
        assert line.startswith("title]0;pwned 2J[31mred") and not any(c in line for c in "\x1b\x07\x9b")
