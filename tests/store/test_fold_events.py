"""The fold of a long log decodes new bodies into msgspec mirrors: the world it folds is the events' own."""

import json

import pytest

from aoe_tui.app.view.log_reader import split_in_a_child
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import make_event
from aoe_tui.domain.reducer import reduce
from aoe_tui.store.event_log import encode_event, read_event_log, read_log_bytes
from aoe_tui.store.fold_events import decode_for_fold
from aoe_tui.store.log_lines import split_lines
from aoe_tui.store.timeline import TimelineIndex
from tests.fixture_paths import MATCH_DIRS


@pytest.mark.parametrize("match", MATCH_DIRS, ids=lambda path: path.name)
def test_every_fixture_folds_as_its_events(match):
    log = match / "events.jsonl"
    if not log.exists():
        pytest.skip("no event log")
    index = TimelineIndex.from_log(read_log_bytes(log), str(log))
    assert index.head == reduce(read_event_log(log))


def body_object(event):
    """A recorded line's body as the fold decodes it: a JSON object without the envelope's stamps."""
    line = encode_event(event).encode()
    return b"{" + line[line.index(b'"kind"') :]


def test_a_mirror_has_its_events_values():
    event = make_event("usage_charged", 4, 9, agent="a", input_tokens=12, measured_by="referee")
    mirror = decode_for_fold(body_object(event))
    assert type(mirror).__name__ == "UsageCharged"
    fields = [name for name in type(event).model_fields if name not in ("kind", "schema_version", "sequence")]
    fields.remove("elapsed_ms")
    assert {name: getattr(mirror, name) for name in fields} == {name: getattr(event, name) for name in fields}


def test_refused_bodies_are_left_to_the_event_classes():
    event = make_event("milestone_failed", 0, 0, territory="t", milestone="m")
    assert decode_for_fold(body_object(event)) is not None
    assert decode_for_fold(b'{"kind":"no_such_kind"}') is None
    assert decode_for_fold(body_object(event)[:-1] + b',"kind":"milestone_passed"}') is None
    for stamp in (b'"sequence":0', b'"elapsed_ms":0', b'"schema_version":1', b'"\\u0073equence":0'):
        assert decode_for_fold(body_object(event)[:-1] + b"," + stamp + b"}") is None, stamp


@pytest.mark.parametrize(
    "fields",
    [
        {"points": "5"},  # pydantic's lax int: a string of digits
        {"points": 5.0},  # and a whole float
        {"evidence": float("nan")},  # NaN, which only Python's parser takes
        {"kind": "milestone_passed", "points": 5, "novel": 1},  # an extra field (kept by pydantic, ignored here)
    ],
)
def test_lines_msgspec_refuses_or_pydantic_coerces_fold_the_same(tmp_path, fields):
    """A line msgspec refuses but pydantic accepts is folded from pydantic's event: the same world."""
    record = {"schema_version": 1, "sequence": 0, "elapsed_ms": 5, "kind": "milestone_passed"}
    record |= {"territory": "t", "milestone": "m", "points": 5} | fields
    log = tmp_path / "events.jsonl"
    log.write_text(json.dumps(record) + "\n")
    world = TimelineIndex.from_log(log.read_bytes(), str(log)).head
    assert world == reduce(read_event_log(log))
    assert world.territories["t"].milestone_points == 5


@pytest.mark.parametrize("split", [split_lines, split_in_a_child])
def test_a_stamp_spelled_with_an_escape_is_caught_as_in_the_strict_reader(tmp_path, split):
    """A chunk's new lines are decoded at once only when no body can name a stamp: a key spelled with `\\u`
    escapes is JSON's `sequence` too, and pydantic would take it, so the line is judged alone."""
    first = make_event("milestone_evaluation_started", 0, 5, territory="t", milestone="m")
    second = encode_event(make_event("milestone_evaluation_started", 1, 6, territory="t", milestone="m"))
    log = tmp_path / "events.jsonl"
    log.write_text(encode_event(first) + "\n" + second[:-1] + ',"\\u0073equence":0}\n')
    with pytest.raises(AoeError) as strict:
        read_event_log(log)
    with pytest.raises(AoeError) as folded:
        TimelineIndex.from_log(log.read_bytes(), str(log), split=split)
    assert str(folded.value) == str(strict.value)
    assert "line 2" in str(strict.value)
