"""Snapshots of the match screen at several moments of each seed match, and of every other screen.

Deterministic by construction: the clock is injected and never advances, the
playback timer stays paused, and nothing here raises a notification.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from aoe_tui.app.app import AoeApp

from tests.fixture_paths import HARNESS, SINGLE_FILES, WORLD_ONLY
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import replay_app

WIDE, NARROW = (160, 48), (80, 24)


def seek_to(elapsed_ms: int | None):
    """run_before hook: move the cursor to a moment (None: the end of the match)."""

    async def run_before(pilot) -> None:
        screen = pilot.app.screen
        if elapsed_ms is None:
            screen.playback.end()
        else:
            screen.playback.go_to_time(elapsed_ms)
        screen.refresh_cursor()
        await pilot.pause()

    return run_before


MOMENTS = [(WIDE, 20_000), (NARROW, 20_000), (WIDE, None)]


@pytest.mark.parametrize("path", SINGLE_FILES, ids=lambda p: p.name.removesuffix(".match.json"))
@pytest.mark.parametrize("size,moment", MOMENTS, ids=["wide-0m20s", "narrow-0m20s", "wide-end"])
def test_match_screen(snap_compare, path, size, moment):
    assert snap_compare(replay_app(path), terminal_size=size, run_before=seek_to(moment))


def test_world_only_match(snap_compare):
    assert snap_compare(replay_app(WORLD_ONLY), terminal_size=WIDE)


def test_narrow_end_of_match(snap_compare):
    assert snap_compare(replay_app(HARNESS), terminal_size=NARROW, run_before=seek_to(None))


def test_event_inspector(snap_compare):
    async def run_before(pilot) -> None:
        await seek_to(20_000)(pilot)
        pilot.app.screen.query_one("EventTable").focus()
        await pilot.press("enter")

    assert snap_compare(replay_app(HARNESS), terminal_size=WIDE, run_before=run_before)


def test_tool_call_feed(snap_compare):
    async def run_before(pilot) -> None:
        await seek_to(40_000)(pilot)
        await pilot.press("c")

    assert snap_compare(replay_app(HARNESS), terminal_size=WIDE, run_before=run_before)


def test_how_they_fought(snap_compare):
    assert snap_compare(replay_app(HARNESS), terminal_size=WIDE, press=["f"])


def test_help(snap_compare):
    assert snap_compare(replay_app(HARNESS), terminal_size=NARROW, press=["question_mark"])


def browser_app(tmp_path, monkeypatch) -> AoeApp:
    """The seeds, a world-only match and a match aborted while booting (its one event: `aborted`)."""
    matches = tmp_path / "matches"
    matches.mkdir()
    for path in SINGLE_FILES + [WORLD_ONLY]:
        shutil.copy(path, matches / path.name)
        os.utime(matches / path.name, (1_760_000_000, 1_760_000_000))  # matches without a stamp date by mtime
    aborted = matches / "first-build-20260101-120000"
    aborted.mkdir()
    (aborted / "events.jsonl").write_text(
        json.dumps(
            {
                "schema_version": 1,
                "sequence": 0,
                "elapsed_ms": 0,
                "kind": "match_state_changed",
                "from": "preparing",
                "to": "aborted",
                "reason": "builder-two: SSH did not answer within 240 s",
            }
        )
        + "\n"
    )
    monkeypatch.chdir(tmp_path)
    return AoeApp(roots=[Path("matches")], clock=ManualSource().now)


async def scanned(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_browser(snap_compare, tmp_path, monkeypatch):
    assert snap_compare(browser_app(tmp_path, monkeypatch), terminal_size=WIDE, run_before=scanned)


def test_browser_at_80_columns_shows_state_winner_and_duration(snap_compare, tmp_path, monkeypatch):
    assert snap_compare(browser_app(tmp_path, monkeypatch), terminal_size=NARROW, run_before=scanned)
