"""The reduced world equals the recorded one on every field the recorded file has."""

import json

import pytest

from aoe_tui.domain.events import UnknownEvent, parse_event
from aoe_tui.domain.reducer import reduce
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import MATCH_DIRS, SINGLE_FILES


def differences(recorded, reduced, path="world"):
    if isinstance(recorded, dict):
        if not isinstance(reduced, dict):
            return [f"{path}: recorded {recorded!r}, reduced {reduced!r}"]
        found = []
        for key, value in recorded.items():
            if key not in reduced:
                found.append(f"{path}.{key}: missing from reduced world")
            else:
                found += differences(value, reduced[key], f"{path}.{key}")
        return found
    return [] if recorded == reduced else [f"{path}: recorded {recorded!r}, reduced {reduced!r}"]


def recorded_world(source):
    if source.is_dir():
        return json.loads((source / "world.json").read_text())
    return json.loads(source.read_text())["world"]


@pytest.mark.parametrize("source", MATCH_DIRS + SINGLE_FILES, ids=lambda p: p.name)
def test_reduced_world_equals_recorded(source):
    match = load_match(source)
    assert match.events, "every fixture here has a timeline"
    assert differences(recorded_world(source), reduce(match.events).to_json()) == []
    if source.is_dir():  # a folder's log is folded as it is read, straight from its lines: the same world
        assert match.timeline is not None
        assert differences(recorded_world(source), match.timeline.head.to_json()) == []


def test_comparison_can_fail():
    source = MATCH_DIRS[0]
    match = load_match(source)
    tampered = reduce(match.events[:-5]).to_json()
    assert differences(recorded_world(source), tampered)


def test_unknown_kind_is_kept_not_dropped():
    event = parse_event({"schema_version": 1, "sequence": 0, "elapsed_ms": 5, "kind": "weather_changed", "sky": "grey"})
    assert isinstance(event, UnknownEvent)
    assert event.to_json()["sky"] == "grey"
    world = reduce([event])
    assert world.last_sequence == 0 and world.elapsed_ms == 5


def test_extra_fields_survive_round_trip():
    raw = {
        "schema_version": 1,
        "sequence": 0,
        "elapsed_ms": 0,
        "kind": "match_state_changed",
        "from": "preparing",
        "to": "running",
        "note": "extra",
    }
    assert parse_event(raw).to_json() == raw
