"""A damaged optional file is skipped and named; the match still opens and replays exactly.

Issue 17 item 5: a published match whose live transcript had interleaved
writes could not be opened at all. Only the event log, the world and a
single-file artifact are essential.
"""

from __future__ import annotations

import json
import shutil

import pytest

from aoe_tui.cli.main import main
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import FIXTURES

INTACT = FIXTURES / "matches" / "primary-failover-real-20260813-174631"
LIVE = "deepseek-failover-engineer-transcript.live.json"
ANALYSIS = "glm-failover-engineer-analysis.json"


@pytest.fixture
def damaged(tmp_path):
    match = tmp_path / INTACT.name
    shutil.copytree(INTACT, match)
    live = (match / LIVE).read_bytes()
    (match / LIVE).write_bytes(live[: len(live) // 2])  # an adapter killed mid-write
    (match / ANALYSIS).write_bytes(b"\x00garbage{{{")
    return match


def test_damaged_files_are_skipped_and_the_replay_is_exact(damaged):
    match, intact = load_match(damaged), load_match(INTACT)
    assert [e.to_json() for e in match.events] == [e.to_json() for e in intact.events]
    assert match.world.to_json() == intact.world.to_json()
    skipped = dict(match.skipped_files())
    assert set(skipped) == {LIVE, ANALYSIS}
    assert skipped[LIVE].startswith("line ") and "bad JSON in a transcript" in skipped[LIVE]
    assert "not UTF-8" in skipped[ANALYSIS] or "bad JSON" in skipped[ANALYSIS]
    assert "deepseek-failover-engineer" not in match.transcripts and "glm-failover-engineer" not in match.analyses
    assert set(intact.transcripts) - set(match.transcripts) == {"deepseek-failover-engineer"}
    assert not intact.skipped


def test_a_valid_json_file_of_the_wrong_shape_is_skipped_too(damaged):
    (damaged / "match.json").write_text("[1, 2]")
    (damaged / "luna-failover-engineer-transcript.json").write_text('{"tool_trace": 5}')
    match = load_match(damaged)
    skipped = dict(match.skipped_files())
    assert skipped["match.json"] == "expected a JSON object, found list, in provenance" and match.provenance is None
    assert "field tool_trace" in skipped["luna-failover-engineer-transcript.json"]
    assert "luna-failover-engineer" in match.transcripts  # the intact live transcript stands in


def test_nested_agent_files_and_tool_traces(tmp_path):
    directory = tmp_path / "m"
    shutil.copytree(FIXTURES / "matches" / "first-build-oracle-20260813-154733", directory)
    agent_dir = directory / "agents" / "builder-one-agent"
    agent_dir.mkdir(parents=True)
    (agent_dir / "tool_trace.jsonl").write_text('{"name": "Bash"}\nnot json\n{"name": "Bash"}\n')
    (agent_dir / "result.json").write_text("")
    match = load_match(directory)
    assert dict(match.skipped_files()) == {
        "agents/builder-one-agent/tool_trace.jsonl": "line 2: bad tool trace entry",
        "agents/builder-one-agent/result.json": "empty file, expected an agent result",
    }


def test_essential_files_still_fail_with_one_line(damaged):
    (damaged / "events.jsonl").write_text("{not json\n")
    with pytest.raises(AoeError, match=r"events\.jsonl line 1: bad JSON"):
        load_match(damaged)


def test_aoe_info_names_the_skipped_files(damaged, capsys):
    assert main(["info", str(damaged)]) == 0
    out = capsys.readouterr().out
    assert f"skipped    {LIVE}: line " in out and f"skipped    {ANALYSIS}: " in out
    assert main(["info", str(damaged), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert {s["file"] for s in info["skipped"]} == {LIVE, ANALYSIS} and all(s["reason"] for s in info["skipped"])
    assert main(["info", str(INTACT), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == []
