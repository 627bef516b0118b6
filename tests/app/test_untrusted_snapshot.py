"""What hostile player text looks like on the match screen: the characters themselves, no markup, no escapes.

Just after the crafted match's first failure (`hostile_match`): queue-one's
failure detail `GET /health returned body '[/]' [bold red]boom` in the event
list and in its pane, and the unknown event kind `[/]` with its `[link=…]`
note, each shown as typed, the escape sequences after them gone.
"""

from __future__ import annotations

from aoe_tui.app.app import AoeApp
from aoe_tui.store.saved_match import load_match

from aoe_tui.testing.clock import ManualSource
from tests.app.hostile_match import hostile_match


def test_hostile_text_is_shown_literally(snap_compare, tmp_path):
    match = load_match(hostile_match(tmp_path))
    unknown = next(i for i, event in enumerate(match.events) if event.kind == "[/]")

    async def run_before(pilot) -> None:
        screen = pilot.app.screen
        screen.playback.go_to_position(unknown)
        screen.refresh_cursor()
        await pilot.pause()

    assert snap_compare(AoeApp(match, clock=ManualSource().now), terminal_size=(160, 48), run_before=run_before)
