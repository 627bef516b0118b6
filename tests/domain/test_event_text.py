"""One line per event (`domain.event_text`): what the event list's rows say and the headless narration prints."""

from __future__ import annotations

from aoe_tui.domain import events as ev
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.event_text import actor, summary
from aoe_tui.engine.narration import Narrator
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import HARNESS


def test_summaries_say_what_happened():
    events = load_match(HARNESS).events
    passed = next(e for e in events if e.kind == "milestone_passed")
    assert summary(passed) == f"{passed.milestone} +{passed.points} pts"
    finished = next(e for e in events if e.kind == "match_finished")
    assert summary(finished).startswith("winner builder-three")


def test_drain_and_operator_rows_read_as_sentences():
    events = load_match(HARNESS).events
    drain = next(e for e in events if e.kind == "post_match_drain_started")
    assert summary(drain) == (
        f"{drain.pending_agents} agents may still hand in results (up to {format_clock(drain.timeout_ms)})"
    )
    done = next(e for e in events if e.kind == "post_match_drain_finished")
    assert summary(done) == f"{done.captured_agents} captured, {done.terminated_agents} terminated"
    assert summary(ev.MatchPaused(reason="lunch")) == "lunch"
    assert summary(ev.MatchResumed(paused_ms=65_000)).startswith("resumed after 1:05 paused")
    assert summary(ev.MilestonePaused(milestone="host-reboot")) == "host-reboot (all territories)"
    assert actor(ev.MilestonePaused(territory="t1", milestone="host-reboot")) == "operator"


def test_an_unknown_kind_shows_its_own_fields():
    unknown = ev.parse_event(
        {"schema_version": 1, "sequence": 0, "elapsed_ms": 5, "kind": "weather_changed", "sky": "grey"}
    )
    assert (actor(unknown), summary(unknown)) == ("referee", "sky=grey")


def test_a_headless_line_is_the_event_rows_words_and_repeats_are_dropped():
    failed = ev.MilestoneFailed(
        elapsed_ms=12_000, territory="t1", milestone="write-read", category="wrong", detail="record-0a1b missing"
    )
    again = failed.model_copy(update={"detail": "record-ffff missing"})
    narrator = Narrator()
    assert narrator.line(failed) == "[0:12] t1             milestone_failed: write-read: wrong — record-0a1b missing"
    assert narrator.line(again) is None  # the same failure with a fresh record id
    assert narrator.line(ev.MilestonePassed(territory="t1", milestone="write-read", points=20)) is not None
    assert narrator.line(again) is not None  # a failure after a pass is news again
    assert narrator.line(ev.UsageCharged(agent="a1", resource_units=3)) is None
