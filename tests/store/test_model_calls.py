"""The referee's gateway's `model_calls.jsonl` read back by the store, and the exports built from it."""

from __future__ import annotations

import json

import pytest

from aoe_tui.store.atif import TrajectorySteps, _from_model_calls, agent_trajectory, export_atif, validate_trajectory
from aoe_tui.store.match_export import export_match, shareable_document
from aoe_tui.store.match_layout import AgentPaths, MatchLayout
from aoe_tui.store.model_calls import (
    HISTORY_LEFT_OUT,
    ModelCallTail,
    answer_text,
    new_input,
    public_record,
    read_model_calls,
    summarize,
)
from aoe_tui.store.saved_match import load_match
from tests.store.model_calls_match import (
    ANTHROPIC,
    CHAT,
    CUT,
    ENCRYPTED,
    HOSTILE,
    REASONING,
    RESPONSES,
    chat_records,
    encoded,
    gemini_records,
    model_calls_match,
)


def test_the_layout_names_the_file_nested_and_published(tmp_path):
    assert AgentPaths(tmp_path / "agents" / "a").model_calls == tmp_path / "agents" / "a" / "model_calls.jsonl"
    assert MatchLayout(tmp_path, flat=True).agent("a").model_calls == tmp_path / "a-model_calls.jsonl"


def test_the_reader_skips_a_garbage_line_and_a_torn_last_line(tmp_path):
    match = model_calls_match(tmp_path)
    records = read_model_calls(MatchLayout(match, flat=True).agent(CHAT).model_calls)
    assert [r["sequence"] for r in records] == [1, 2, 3]
    assert read_model_calls(tmp_path / "absent.jsonl") == []


def test_the_reader_is_bounded_to_whole_lines_and_never_follows_a_link(tmp_path):
    path = tmp_path / "model_calls.jsonl"
    data = encoded(chat_records(), CHAT)
    path.write_bytes(data)
    first_line = data.index(b"\n") + 1
    assert [r["sequence"] for r in read_model_calls(path, limit=first_line + 10)] == [1]
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    assert read_model_calls(link) == []


def test_a_summary_reads_a_record_whatever_its_fields_hold():
    first, second, third = (summarize(r) for r in chat_records())
    assert (first.elapsed_ms, first.protocol, first.status, first.streamed) == (5_000, "openai-chat", 200, True)
    assert (first.input_tokens, first.output_tokens, first.tool_names) == (100, 20, ("shell",))
    assert (second.input_tokens, second.output_tokens, second.streamed) == (150, None, False)
    assert second.tool_names == ("shell", HOSTILE)
    assert (third.input_tokens, third.cut, third.status) == (None, CUT, 402)
    odd = summarize({"usage": "lots", "tool_calls": {"x": 1}, "status": "200", "streamed": 1, "cut": {"why": 1}})
    assert (odd.input_tokens, odd.tool_names, odd.status, odd.streamed, odd.cut) == (None, (), None, None, '{"why": 1}')


def test_the_tail_reads_only_whole_appended_lines(tmp_path):
    path = tmp_path / "model_calls.jsonl"
    one, two, three = (json.dumps(r).encode() + b"\n" for r in chat_records())
    tail = ModelCallTail(path)
    assert tail.read_new() == [] and tail.seen == 0  # no file yet
    path.write_bytes(one + two[:30])
    assert [c.sequence for c in tail.read_new()] == [1]
    with open(path, "ab") as handle:
        handle.write(two[30:] + b"garbage\n" + three)
    assert [c.sequence for c in tail.read_new()] == [2, 3]
    assert tail.read_new() == [] and tail.seen == 3
    path.write_bytes(one)  # replaced by a shorter file: read again
    assert [c.sequence for c in tail.read_new()] == [1] and tail.seen == 1


def test_the_tail_of_a_long_file_starts_near_its_end_and_keeps_the_last(tmp_path):
    path = tmp_path / "model_calls.jsonl"
    records = [{**chat_records()[0], "sequence": n} for n in range(1, 101)]
    path.write_bytes(encoded(records, CHAT))
    line = len(encoded(records[:1], CHAT))
    tail = ModelCallTail(path, keep=5, first_bytes=10 * line + line // 2, chunk_bytes=4 * line)
    seen = []
    while new := tail.read_new():
        seen += [c.sequence for c in new]
    assert seen == list(range(91, 101))  # the half line at the cut is not read as a record
    assert [c.sequence for c in tail.summaries] == [96, 97, 98, 99, 100] and tail.skipped_bytes > 0


def test_public_record_takes_every_kind_of_reasoning_out():
    for records in (chat_records(), gemini_records()):
        for record in records:
            public, removed = public_record(record)
            assert removed and REASONING not in json.dumps(public)
    public, _ = public_record(chat_records()[0])
    assert public["response"]["choices"][0]["message"]["content"] == "Looking around."


@pytest.mark.parametrize(
    "records,expected",
    [
        (chat_records(), [("call_1", "app.py\nreqs.txt")]),
        (gemini_records(), [(None, '{"output": "a b"}')]),
    ],
)
def test_the_next_request_brings_the_tool_results_only(records, expected):
    first, second = records[0], records[1]
    protocol = first["protocol"]
    assert [s.source for s in new_input(protocol, first["request"])] == ["system", "user"]
    assert [(s.call_id, s.text) for s in new_input(protocol, second["request"])] == expected
    assert REASONING not in answer_text(protocol, first["response"])


def trajectory_of(match, agent):
    trajectory, steps = agent_trajectory(match, agent)
    validate_trajectory(trajectory, agent)
    return trajectory, steps


def test_atif_steps_come_from_the_model_calls_of_an_agent_without_a_transcript(tmp_path):
    match = load_match(model_calls_match(tmp_path))
    trajectory, steps = trajectory_of(match, CHAT)
    shape = [
        (s["source"], s["message"], [c["function_name"] for c in s.get("tool_calls", [])]) for s in trajectory["steps"]
    ]
    assert shape == [
        ("system", "You are a builder.", []),
        ("user", "Build the service.", []),
        ("agent", "Looking around.", ["shell"]),
        ("agent", "Starting it.", ["shell", HOSTILE]),
        ("agent", "Done.", []),
    ]
    first, second = trajectory["steps"][2], trajectory["steps"][3]
    assert first["tool_calls"][0] == {
        "tool_call_id": "call_1",
        "function_name": "shell",
        "arguments": {"command": "ls /srv"},
    }
    assert first["observation"]["results"] == [{"source_call_id": "call_1", "content": "app.py\nreqs.txt"}]
    assert second["observation"]["results"] == [
        {"source_call_id": "call_2", "content": "started"},
        {"source_call_id": "call_3", "content": "no such tool"},
    ]
    assert first["metrics"] == {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 10, "cost_usd": 0.001}
    assert second["metrics"] == {"prompt_tokens": 150} and "metrics" not in trajectory["steps"][4]
    assert trajectory["steps"][4]["extra"]["model_call"]["cut"] == CUT
    assert steps.reasoning_removed >= 3 and REASONING not in json.dumps(trajectory)


@pytest.mark.parametrize(
    "agent,calls,results",
    [
        (ANTHROPIC, [["bash"], []], [("toolu_1", "Linux guest")]),
        (RESPONSES, [["shell"], []], [("fc_1", "/dev/vda 10G")]),
    ],
)
def test_atif_from_anthropic_and_responses_exchanges(tmp_path, agent, calls, results):
    trajectory, _ = trajectory_of(load_match(model_calls_match(tmp_path)), agent)
    agents = [s for s in trajectory["steps"] if s["source"] == "agent"]
    assert [[c["function_name"] for c in s.get("tool_calls", [])] for s in agents] == calls
    observed = [
        (r["source_call_id"], r["content"]) for s in agents for r in s.get("observation", {}).get("results", [])
    ]
    assert observed == results
    assert trajectory["steps"][0] == {"step_id": 1, "source": "system", "message": "You are a builder."}
    text = json.dumps(trajectory)
    assert REASONING not in text and ENCRYPTED not in text


def test_atif_from_gemini_exchanges_names_the_result_by_its_function():
    steps = TrajectorySteps(timing={})
    _from_model_calls(steps, gemini_records())
    agents = [s for s in steps.steps if s["source"] == "agent"]
    assert [s["message"] for s in agents] == ["Listing.", "Two files."]
    assert agents[0]["observation"]["results"] == [{"source_call_id": "call-0", "content": '{"output": "a b"}'}]
    assert steps.reasoning_removed and REASONING not in json.dumps(steps.steps)


def test_the_atif_files_hold_no_reasoning_and_validate(tmp_path):
    match = load_match(model_calls_match(tmp_path))
    report = export_atif(match, tmp_path / "atif")
    files = sorted((tmp_path / "atif").iterdir())
    assert len(files) == 3 and report.reasoning_removed >= 5
    for path in files:
        text = path.read_text()
        assert REASONING not in text and ENCRYPTED not in text
        trajectory = json.loads(text)
        validate_trajectory(trajectory, path.name)
        assert any(step.get("tool_calls") for step in trajectory["steps"])
    assert not any("no transcript" in why for _, why in report.left_out)


def test_the_match_export_carries_the_model_calls_without_reasoning_or_history(tmp_path):
    match = load_match(model_calls_match(tmp_path))
    document, report = shareable_document(match)
    assert set(document["model_calls"]) == {CHAT, ANTHROPIC, RESPONSES}
    text = json.dumps(document)
    assert REASONING not in text and ENCRYPTED not in text and report.reasoning_removed >= 5
    chat = document["model_calls"][CHAT]
    assert [r["sequence"] for r in chat] == [1, 2, 3]
    assert chat[2]["request"]["messages"] == [
        {"role": "tool", "tool_call_id": "call_2", "content": "started"},
        {"role": "tool", "tool_call_id": "call_3", "content": [{"type": "text", "text": "no such tool"}]},
    ]
    assert chat[2]["request"][HISTORY_LEFT_OUT] == 5 and HISTORY_LEFT_OUT not in chat[0]["request"]

    exported = tmp_path / "out.match.json"
    export_match(match, exported)
    assert not any("model_calls" in name for name, _ in export_match(match, exported).left_out)
    again = load_match(exported)
    assert again.agent_model_calls(CHAT) == chat
    twice = tmp_path / "twice.match.json"
    export_match(again, twice)
    assert twice.read_bytes() == exported.read_bytes()
    trajectory, _ = trajectory_of(again, CHAT)  # the ATIF of an export: the same steps
    assert [s["message"] for s in trajectory["steps"]] == [s["message"] for s in trajectory_of(match, CHAT)[0]["steps"]]


def test_the_match_export_redacts_secrets_in_the_model_calls(tmp_path):
    match = load_match(model_calls_match(tmp_path))
    path = MatchLayout(match.directory, flat=True).agent(RESPONSES).model_calls
    records = read_model_calls(path)
    records[0]["request"]["input"][0]["content"][0]["text"] = "my key is sk-proj-" + "a1B2" * 12
    path.write_bytes(encoded(records, RESPONSES))
    document, report = shareable_document(load_match(match.directory))
    assert "a1B2a1B2" not in json.dumps(document)
    assert any(where == f"model_calls.{RESPONSES}" for where, _, _ in report.redacted)
