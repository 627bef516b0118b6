"""`aoe replay` of an export shows what the source shows: the same screens at the same moment."""

from __future__ import annotations

import pytest

from aoe_tui.app.app import AoeApp
from aoe_tui.store.match_export import export_match
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import HARNESS, MATCHES
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import screen_text

QUEUE = MATCHES / "durable-job-queue-real-20260813-103028"


async def screens(path) -> list[str]:
    """The main screen mid-match, then the tool calls and "how they fought" views."""
    app = AoeApp(load_match(path), clock=ManualSource().now)
    shown = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.screen.playback.go_to_time(40_000)
        app.screen.refresh_cursor()
        await pilot.pause()
        shown.append(screen_text(app))
        for key in ("c", "f"):
            await pilot.press(key)
            await pilot.pause()
            shown.append(screen_text(app))
    return shown


@pytest.mark.parametrize("source", [QUEUE, HARNESS], ids=lambda p: p.name)
async def test_the_export_replays_like_its_source(source, tmp_path):
    exported = export_match(load_match(source), tmp_path / "shared.match.json").output
    original, shared = await screens(source), await screens(exported)
    assert len(set(original)) == len(original)  # each step showed something new
    assert shared == original
