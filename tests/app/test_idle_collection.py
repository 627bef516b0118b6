"""The cycle collector's full collections wait while a match screen is shown and run when it is idle."""

from __future__ import annotations

import gc

import pytest

from aoe_tui.app.screens.idle_collection import (
    LONGEST_WAIT_S,
    POSTPONED,
    QUIET_S,
    IdleCollector,
    full_collection_due,
)
from tests.app.app_under_test import SIZE, replay_app
from tests.fixture_paths import HARNESS


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_due() -> None:
    """As many young collections as Python waits for before a full one (each counts towards it)."""
    while not full_collection_due():
        gc.collect(1)


@pytest.fixture
def full_collections():
    """The full collections that start while the test runs."""
    started: list[int] = []

    def noted(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2:
            started.append(2)

    gc.callbacks.append(noted)
    yield started
    gc.callbacks.remove(noted)


def test_holding_postpones_full_collections_until_the_last_holder_releases() -> None:
    before = gc.get_threshold()
    first, second = IdleCollector(), IdleCollector()
    first.hold()
    second.hold()
    assert gc.get_threshold() == (before[0], before[1], POSTPONED)
    first.release()
    assert gc.get_threshold()[2] == POSTPONED
    second.release()
    second.release()  # a second release changes nothing
    assert gc.get_threshold() == before


def test_a_full_collection_runs_once_frames_stop_and_only_after_frames(full_collections) -> None:
    clock = Clock()
    collector = IdleCollector(clock)
    assert not collector.check() and not full_collections  # nothing drawn: nothing to collect
    collector.frame_drawn()
    clock.now += QUIET_S / 2
    assert not collector.check() and not full_collections  # frames are still coming
    clock.now += QUIET_S
    make_due()
    assert collector.check() and full_collections == [2]
    clock.now += 10 * QUIET_S
    make_due()
    assert not collector.check() and full_collections == [2]  # no frame since: no new garbage to look for


def test_a_quiet_screen_runs_no_full_collection_before_python_would_have(full_collections) -> None:
    """A full collection walks the whole heap: a quiet second is no reason to run one before Python's own
    threshold of young collections would have."""
    clock = Clock()
    collector = IdleCollector(clock)
    gc.collect()  # the count of young collections starts at zero
    collector.frame_drawn()
    clock.now += 2 * QUIET_S
    assert not full_collection_due()
    assert not collector.check() and full_collections == [2]  # only the one started above
    make_due()
    assert collector.check() and full_collections == [2, 2]


def test_frames_that_never_pause_still_get_a_full_collection_at_the_longest_wait(full_collections) -> None:
    """A live screen draws every second: never quiet, its garbage is still looked for."""
    clock = Clock()
    collector = IdleCollector(clock)
    started = clock.now
    while clock.now - started < LONGEST_WAIT_S:
        collector.frame_drawn()
        assert not collector.check() and not full_collections
        clock.now += QUIET_S / 2
    collector.frame_drawn()
    make_due()
    assert collector.check() and full_collections == [2]


async def test_the_match_screen_holds_full_collections_while_it_is_shown(clock) -> None:
    before = gc.get_threshold()
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right", "end")
        assert gc.get_threshold() == (before[0], before[1], POSTPONED)
    assert gc.get_threshold() == before


async def test_no_full_collection_runs_while_a_long_log_is_read(clock, full_collections) -> None:
    """The read's millions of new objects are not frozen yet: a full collection would walk them all."""
    app = replay_app(HARNESS, clock)
    async with app.run_test(size=SIZE):
        screen = app.screen
        quiet = Clock()
        screen._collector._clock = quiet
        screen._collector.frame_drawn()
        quiet.now += 2 * QUIET_S
        full_collections.clear()  # (the app's start-up may have had one, before the screen held them)
        screen.reading = 0.4
        screen._collect_when_idle()
        assert not full_collections
        screen.reading = None
        make_due()
        screen._collect_when_idle()
        assert full_collections == [2]
