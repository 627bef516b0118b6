"""The tolerant-but-strict reader: what a live writer may leave is fine, a broken file is named."""

import json
import shutil

import pytest

from aoe_tui.app.view.log_reader import split_in_a_child
from aoe_tui.domain.errors import AoeError
from aoe_tui.store import log_lines
from aoe_tui.domain.events import UnknownEvent, parse_event
from aoe_tui.store.event_log import read_event_log, read_log_bytes
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineIndex
from tests.fixture_paths import MATCH_DIRS, ORACLE_DIR


def read_as_index(path):
    """The replay's reader: the timeline index's own pass over the log's bytes (`from_log`)."""
    return list(TimelineIndex.from_log(read_log_bytes(path), str(path)).events)


def readsplit_in_a_child(path):
    """The app's reader: `from_log` with the lines taken apart in a child process, in chunks of 3 lines whose
    body numbers start over every 4 bodies (so every fixture crosses both)."""
    return list(TimelineIndex.from_log(read_log_bytes(path), str(path), split=split_in_a_child).events)


@pytest.fixture(
    params=[read_event_log, read_as_index, readsplit_in_a_child],
    ids=["event-list", "timeline-index", "split-in-a-child"],
)
def read(request, monkeypatch):
    """Every reader of a log: every rule and every error's wording must be the same in each."""
    if request.param is readsplit_in_a_child:
        monkeypatch.setattr(log_lines, "CHUNK_LINES", 3)  # the forked child takes them as they are
        monkeypatch.setattr(log_lines, "BODY_CACHE_LIMIT", 4)
    return request.param


def write(tmp_path, lines, trailing_newline=True):
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""))
    return path


def test_reads_fixture(read, oracle_lines):
    assert len(read(ORACLE_DIR / "events.jsonl")) == len(oracle_lines)


def test_truncated_last_line_is_skipped(read, tmp_path, oracle_lines):
    cut = oracle_lines[:-1] + [oracle_lines[-1][:25]]
    events = read(write(tmp_path, cut, trailing_newline=False))
    assert len(events) == len(oracle_lines) - 1


def test_gap_names_file_and_line(read, tmp_path, oracle_lines):
    path = write(tmp_path, oracle_lines[:10] + oracle_lines[11:])
    with pytest.raises(AoeError, match=r"events.jsonl line 11: sequence 11 where 10 was expected \(gap\)"):
        read(path)


def test_duplicate_sequence(read, tmp_path, oracle_lines):
    path = write(tmp_path, oracle_lines[:10] + [oracle_lines[9]] + oracle_lines[10:])
    with pytest.raises(AoeError, match=r"line 11: .*\(duplicate\)"):
        read(path)


def test_bad_json_in_the_middle(read, tmp_path, oracle_lines):
    lines = list(oracle_lines)
    lines[5] = lines[5][:-3]
    with pytest.raises(AoeError, match=r"line 6: bad JSON"):
        read(write(tmp_path, lines))


def test_bad_json_on_complete_last_line_is_an_error(read, tmp_path, oracle_lines):
    lines = oracle_lines[:-1] + [oracle_lines[-1][:20]]
    with pytest.raises(AoeError, match=f"line {len(lines)}: bad JSON"):
        read(write(tmp_path, lines, trailing_newline=True))


def test_unknown_kind_is_visible(read, tmp_path, oracle_lines):
    lines = oracle_lines[:3] + ['{"schema_version":1,"sequence":3,"elapsed_ms":0,"kind":"comet_seen","size":3}']
    events = read(write(tmp_path, lines))
    assert isinstance(events[3], UnknownEvent) and events[3].kind == "comet_seen"


def test_wrong_schema_version(read, tmp_path, oracle_lines):
    lines = list(oracle_lines)
    lines[2] = lines[2].replace('"schema_version":1', '"schema_version":2')
    with pytest.raises(AoeError, match=r"line 3: schema_version 2 is not supported"):
        read(write(tmp_path, lines))


def test_clock_going_back(read, tmp_path, oracle_lines):
    lines = list(oracle_lines)
    lines[20] = (
        '{"schema_version":1,"sequence":20,"elapsed_ms":1,"kind":"match_state_changed","from":"preparing","to":"running"}'
    )
    with pytest.raises(AoeError, match=r"line 21: elapsed_ms 1 goes back"):
        read(write(tmp_path, lines))


def test_wrong_field_type_names_field(read, tmp_path, oracle_lines):
    lines = oracle_lines[:1] + [
        '{"schema_version":1,"sequence":1,"elapsed_ms":0,"kind":"milestone_passed",'
        '"territory":"t","milestone":"m","points":"many","evidence":null}'
    ]
    with pytest.raises(AoeError, match=r"line 2: milestone_passed field points"):
        read(write(tmp_path, lines))


def test_missing_file(read, tmp_path):
    with pytest.raises(AoeError, match="no such file"):
        read(tmp_path / "events.jsonl")


def test_empty_log_loads_as_empty(read, tmp_path):
    assert read(write(tmp_path, [], trailing_newline=False)) == []


def test_binary_garbage(read, tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a":1}\n\xff\xfe\x00\x81garbage\x00')
    with pytest.raises(AoeError, match=r"line 2: not UTF-8 text"):
        read(path)


def test_directory_with_no_match(tmp_path):
    with pytest.raises(AoeError, match="no match here"):
        load_match(tmp_path)


def test_empty_world_file(tmp_path):
    path = tmp_path / "x.world.json"
    path.write_text("")
    with pytest.raises(AoeError, match="empty file"):
        load_match(path)


def test_binary_match_file(tmp_path):
    path = tmp_path / "x.match.json"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(AoeError, match="not UTF-8"):
        load_match(path)


def test_json_that_is_not_a_match(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(AoeError, match="not a saved match"):
        load_match(path)


def test_directory_with_truncated_live_log_still_loads(tmp_path, oracle_lines):
    shutil.copytree(ORACLE_DIR, tmp_path / "m")
    (tmp_path / "m" / "events.jsonl").write_text("\n".join(oracle_lines[:-1]) + "\n" + oracle_lines[-1][:10])
    match = load_match(tmp_path / "m")
    assert len(match.events) == len(oracle_lines) - 1


@pytest.mark.parametrize("stamp", ["sequence", "elapsed_ms"])
def test_a_record_without_its_stamp_names_the_field(read, tmp_path, oracle_lines, stamp):
    lines = oracle_lines[:1] + ['{"schema_version":1,"sequence":1,"elapsed_ms":0,"kind":"match_paused"}']
    lines[1] = lines[1].replace(f'"{stamp}":{1 if stamp == "sequence" else 0},', "")
    with pytest.raises(AoeError, match=rf"line 2: match_paused field {stamp}: Field required"):
        read(write(tmp_path, lines))


@pytest.mark.parametrize("source", MATCH_DIRS, ids=lambda p: p.name)
def test_every_fixture_reads_as_each_line_parsed_alone(read, source):
    lines = (source / "events.jsonl").read_text().splitlines()
    assert read(source / "events.jsonl") == [parse_event(json.loads(line)) for line in lines]


def test_a_repeated_body_that_names_a_stamp_is_read_line_by_line(read, tmp_path):
    """A body shared by two lines is validated once, unless it holds a stamp key (JSON's last key wins)."""
    body = '"kind":"durable_deployment_completed","territory":"t","elapsed_ms":%d}'
    lines = [
        '{"schema_version":1,"sequence":0,"elapsed_ms":5,' + body % 5,
        '{"schema_version":1,"sequence":1,"elapsed_ms":6,' + body % 5,
        '{"schema_version":1,"sequence":2,"elapsed_ms":9,"kind":"milestone_evaluation_started","territory":"t","milestone":"m"}',
        '{"schema_version":1,"sequence":3,"elapsed_ms":9,"kind":"milestone_evaluation_started","territory":"t","milestone":"m"}',
    ]
    events = read(write(tmp_path, lines))
    assert [(e.sequence, e.elapsed_ms) for e in events] == [(0, 5), (1, 5), (2, 9), (3, 9)]
    assert events == [parse_event(json.loads(line)) for line in lines]


def test_a_stamp_repeated_in_the_body_is_checked_like_any_record(read, tmp_path, oracle_lines):
    lines = list(oracle_lines)
    lines[4] = lines[4].removesuffix("}") + ',"schema_version":2}'
    with pytest.raises(AoeError, match=r"line 5: schema_version 2 is not supported"):
        read(write(tmp_path, lines))
