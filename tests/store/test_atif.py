"""`aoe export --format atif`: every fixture's trajectories validate, carry the referee's verdict, and no reasoning."""

from __future__ import annotations

import json
import shutil
from importlib.resources import files

import pytest
from jsonschema import Draft202012Validator

from aoe_tui.cli.main import main
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.atif import ATIF_VERSION, SCHEMA_FILE, agent_trajectory, export_atif, validate_trajectory
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import MATCH_DIRS, SINGLE_FILES, WORLD_ONLY
from tests.series.helpers import SERIES

SOURCES = [*MATCH_DIRS, *SINGLE_FILES, WORLD_ONLY]
FAILOVER = next(p for p in MATCH_DIRS if p.name.startswith("primary-failover"))
SCHEMA = Draft202012Validator(json.loads(files("aoe_tui.store").joinpath("schemas", SCHEMA_FILE).read_text()))


def trajectories(folder):
    return {p.name.removesuffix(".trajectory.json"): json.loads(p.read_text()) for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_every_agent_gets_a_valid_trajectory_with_the_referees_verdict(source, tmp_path):
    match = load_match(source)
    written = trajectories(export_atif(match, tmp_path / "atif").output)
    assert set(written) == set(match.agents)
    for agent_id, trajectory in written.items():
        assert list(SCHEMA.iter_errors(trajectory)) == []
        assert trajectory["schema_version"] == ATIF_VERSION
        referee = trajectory["final_metrics"]["extra"]["referee"]
        territory = match.world.territories[referee["territory"]]
        assert referee["won"] == (match.world.winner == referee["territory"])
        assert referee["failure_source"] == match.world.agents[agent_id].failure_source
        assert {m["milestone"]: m["passed_at_ms"] for m in referee["milestones"]} == {
            m: (state.passed_at_ms if state.passed else None) for m, state in territory.milestones.items()
        }
        calls = [c for step in trajectory["steps"] for c in step.get("tool_calls", [])]
        expected = len(match.tool_trace(agent_id)) or len(
            match.analyses[agent_id].actions if agent_id in match.analyses else []
        )
        assert len(calls) >= expected if match.transcripts.get(agent_id) else len(calls) == expected


def test_each_tool_result_lands_on_the_step_that_made_the_call():
    trajectory, _ = agent_trajectory(load_match(FAILOVER), "luna-failover-engineer")
    results = [(step, r) for step in trajectory["steps"] for r in step.get("observation", {}).get("results", [])]
    assert results and all(
        r["source_call_id"] in {c["tool_call_id"] for c in step["tool_calls"]} for step, r in results
    )
    trace = load_match(FAILOVER).tool_trace("luna-failover-engineer")
    by_id = {r["source_call_id"]: r["content"] for _, r in results}
    assert by_id[trace[0].id] == trace[0].output


def test_planted_reasoning_is_never_exported(tmp_path):
    planted = "PLANTED-REASONING-7f3a: keep this between me and myself"
    match_dir = tmp_path / FAILOVER.name
    shutil.copytree(FAILOVER, match_dir)
    transcript_file = match_dir / "luna-failover-engineer-transcript.json"
    data = json.loads(transcript_file.read_text())
    data["messages"][1]["content"].insert(0, {"type": "reasoning", "text": planted, "details": [{"text": planted}]})
    data["messages"].append({"role": "assistant", "content": [{"type": "thinking", "thinking": planted}]})
    data["messages"].append({"role": "assistant", "content": "all done", "reasoning_content": planted})
    data["messages"].append({"role": "assistant", "content": [{"type": "mystery", "text": planted}]})
    transcript_file.write_text(json.dumps(data))
    out = export_atif(load_match(match_dir), tmp_path / "atif").output
    text = (out / "luna-failover-engineer.trajectory.json").read_text()
    assert planted not in text and "PLANTED" not in text
    trajectory = json.loads(text)
    assert trajectory["steps"][-2]["message"] == "all done"
    assert "left out; 1 message block(s) of other kinds" in trajectory["notes"]


def test_the_validator_refuses_what_atif_forbids():
    trajectory, _ = agent_trajectory(load_match(FAILOVER), "luna-failover-engineer")
    validate_trajectory(trajectory, "ok.json")
    user_with_calls = json.loads(json.dumps(trajectory))
    user_with_calls["steps"][0]["tool_calls"] = [{"tool_call_id": "x", "function_name": "Bash", "arguments": {}}]
    with pytest.raises(AoeError, match=r"bad\.json: not valid ATIF-v1\.4 at steps/0"):
        validate_trajectory(user_with_calls, "bad.json")
    renumbered = json.loads(json.dumps(trajectory))
    renumbered["steps"][1]["step_id"] = 7
    with pytest.raises(AoeError, match="step 2 has step_id 7"):
        validate_trajectory(renumbered, "bad.json")
    stray = json.loads(json.dumps(trajectory))
    step = next(s for s in stray["steps"] if "observation" in s)
    step["observation"]["results"][0]["source_call_id"] = "no-such-call"
    with pytest.raises(AoeError, match="observes 'no-such-call'"):
        validate_trajectory(stray, "bad.json")


def test_the_schema_takes_a_trajectory_written_the_way_the_rfc_describes():
    """An independent, minimal v1.4 trajectory (system prompt, user task, agent turn with a call and its result)."""
    example = {
        "schema_version": "ATIF-v1.4",
        "session_id": "example-1",
        "agent": {"name": "example-agent", "version": "0.1", "model_name": "some-model"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are terse."},
            {"step_id": 2, "source": "user", "message": "What is in /tmp?", "timestamp": "2025-10-11T10:30:00Z"},
            {
                "step_id": 3,
                "source": "agent",
                "message": "Listing it.",
                "reasoning_content": "ls answers that",
                "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "ls /tmp"}}],
                "observation": {"results": [{"source_call_id": "c1", "content": "a b"}]},
                "metrics": {"prompt_tokens": 10, "completion_tokens": 3, "cached_tokens": 2, "cost_usd": 0.001},
            },
        ],
        "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 3, "total_steps": 3},
    }
    assert list(SCHEMA.iter_errors(example)) == []
    validate_trajectory(example, "example.json")


def test_the_cli_writes_one_file_per_agent_and_refuses_a_series(tmp_path, capsys):
    out = tmp_path / "atif"
    assert main(["export", str(FAILOVER), "--format", "atif", "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"exported {ATIF_VERSION} trajectories: {out}")
    assert sorted(p.name for p in out.iterdir()) == [
        "deepseek-failover-engineer.trajectory.json",
        "glm-failover-engineer.trajectory.json",
        "luna-failover-engineer.trajectory.json",
    ]
    assert main(["export", str(SERIES), "--format", "atif"]) == 2
    assert "exported per match" in capsys.readouterr().err
