"""The recorder numbers and times every event: the engine builds it unstamped, `emit` stamps it once."""

from __future__ import annotations

import pytest

from aoe_tui.domain import events as ev
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.store.event_log import read_event_log
from aoe_tui.testing.clock import ManualSource


def test_emit_numbers_and_times_each_event_and_refuses_a_stamped_one(tmp_path):
    source = ManualSource()
    clock = MatchClock(source)
    recorder = MatchRecorder(clock, tmp_path / "events.jsonl")
    clock.start()
    opened = recorder.emit(ev.MatchStateChanged(from_="preparing", to="running"))
    source.advance(2.5)
    paused = recorder.emit(ev.MatchPaused(reason="lunch"))
    assert (opened.sequence, opened.elapsed_ms, paused.sequence, paused.elapsed_ms) == (0, 0, 1, 2500)
    with pytest.raises(ValueError, match="already stamped"):
        recorder.emit(paused)
    recorder.close()
    assert read_event_log(tmp_path / "events.jsonl") == [opened, paused]
    assert "reason" not in opened.to_json()  # only an abort writes a reason on a match state change
