"""state_at from keyframes equals a fold from zero, at every position and time."""

import random

import pytest

from aoe_tui.app.view.log_reader import split_in_a_child
from aoe_tui.domain.reducer import apply_event, reduce
from aoe_tui.domain.world import World
from aoe_tui.store.event_log import read_event_log, read_log_bytes
from aoe_tui.store import log_lines
from aoe_tui.store.log_lines import LogLines
from aoe_tui.store.markers import find_markers, find_stalls
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineIndex
from benchmarks.synthetic_match import synthetic_match
from tests.fixture_paths import MATCH_DIRS

CONQUEST = next(p for p in MATCH_DIRS if p.name.startswith("first-contact"))
QUEUE = next(p for p in MATCH_DIRS if p.name.startswith("durable-job-queue"))


def test_state_at_equals_fold_from_zero():
    events = load_match(CONQUEST).events
    index = TimelineIndex(events, keyframe_every=64)
    rng = random.Random(7)
    for position in [-1, 0, 63, 64, 65, len(events) - 2, len(events) - 1] + rng.sample(range(len(events)), 25):
        assert index.state_at(position) == reduce(events[: position + 1]), position


def test_state_at_time_takes_last_event_at_or_before():
    events = load_match(QUEUE).events
    index = TimelineIndex(events)
    target = events[100].elapsed_ms
    expected_position = max(i for i, e in enumerate(events) if e.elapsed_ms <= target)
    assert index.state_at_time(target) == reduce(events[: expected_position + 1])
    assert index.state_at_time(-1) == reduce([])
    assert index.duration_ms == events[-1].elapsed_ms


def test_returned_states_are_copies():
    index = TimelineIndex(load_match(QUEUE).events)
    state = index.state_at(10)
    state.match_state = "tampered"
    assert index.state_at(10).match_state != "tampered"
    assert index.head.match_state != "tampered"


def test_live_append_grows_index():
    events = load_match(QUEUE).events
    index = TimelineIndex(events[:50])
    for event in events[50:]:
        index.append(event)
    assert index.head == reduce(events)
    assert index.state_at(200) == reduce(events[:201])


def test_stalls_collapse_identical_failures():
    events = load_match(QUEUE).events
    stalls = find_stalls(events)
    assert stalls
    for stall in stalls:
        details = {(events[p].category, events[p].detail) for p in stall.positions}
        assert details == {(stall.category, stall.detail)} and stall.count >= 2
    markers = find_markers(events)
    assert any(m.kind == "stall" for m in markers) and any(m.kind == "finish" for m in markers)


@pytest.mark.parametrize("in_a_child", [False, True], ids=["split-here", "split-in-a-child"])
def test_seeks_equal_a_full_fold_at_a_thousand_random_positions(in_a_child, monkeypatch):
    """A long synthetic race read from its log, keyframes thinned by a small budget, against folding from zero;
    its lines taken apart here or (as the app does) by a child process, in chunks of 1,000 lines whose body
    numbers start over every 50 bodies."""
    path = synthetic_match(10_000) / "events.jsonl"
    monkeypatch.setattr(log_lines, "CHUNK_LINES", 1_000)
    monkeypatch.setattr(log_lines, "BODY_CACHE_LIMIT", 50)
    split = split_in_a_child if in_a_child else log_lines.split_lines
    index = TimelineIndex.from_log(
        read_log_bytes(path), str(path), keyframe_every=16, budget_bytes=400_000, split=split
    )
    assert index.keyframe_every > 16, "the budget thinned the keyframes"
    events = read_event_log(path)
    positions = sorted(random.Random(13).sample(range(-1, len(events)), 1000))
    world, folded = World(), 0
    for position in positions:  # one fold from zero, read at each position in turn
        while folded <= position:
            apply_event(world, events[folded])
            folded += 1
        assert index.state_at(position) == world, position
    assert index.head == reduce(events)


def test_a_split_that_ends_early_leaves_the_rest_to_the_strict_reader(monkeypatch):
    """A splitter that stops handing on chunks (its process killed) loses nothing: the rest is read line by line."""
    path = synthetic_match(10_000) / "events.jsonl"
    monkeypatch.setattr(log_lines, "CHUNK_LINES", 1_000)

    def first_chunks(data: bytes):
        chunks = log_lines.split_lines(data)
        yield next(chunks)
        yield next(chunks)

    index = TimelineIndex.from_log(read_log_bytes(path), str(path), split=first_chunks)
    whole = TimelineIndex.from_log(read_log_bytes(path), str(path))
    assert len(index) == len(whole) == 10_000 and index.head == whole.head
    assert index.state_at(4_321) == whole.state_at(4_321)


def test_a_log_timeline_keeps_lines_not_events():
    path = CONQUEST / "events.jsonl"
    index = TimelineIndex.from_log(read_log_bytes(path), str(path))
    assert isinstance(index.events, LogLines) and list(index.events) == read_event_log(path)
    assert index.markers.markers() == find_markers(read_event_log(path))
    assert [index.columns.kind(p) for p in range(len(index))] == [e.kind for e in read_event_log(path)]


def test_steps_forward_and_back_from_the_last_state_equal_a_fold():
    """Stepping reuses the last state asked for; back, forth and a tampered result never leak into the next."""
    events = load_match(CONQUEST).events
    index = TimelineIndex(events, keyframe_every=64)
    for position in [70, 71, 72, 71, 70, 69, 63, 64, 90, 89, 127, 128, 129]:
        state = index.state_at(position)
        assert state == reduce(events[: position + 1]), position
        state.match_state = "tampered"
