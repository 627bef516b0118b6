"""The analyzer over hand-made transcripts (rules) and over every real fixture transcript."""

from __future__ import annotations

import json

import pytest

from aoe_tui.analysis import ANALYZER, analyze
from aoe_tui.analysis.tool_calls import is_observable
from aoe_tui.domain.analysis import ActionKind, Analysis
from aoe_tui.domain.transcript import Transcript
from tests.analysis.fixture_files import ANALYSIS_FILES, TRANSCRIPT_FILES, transcript_for


def bash(command: str, started: int, duration: int = 10, error: bool = False, output: str = "") -> dict:
    return {
        "id": f"t{started}",
        "name": "Bash",
        "input": {"command": command, "description": f"at {started}"},
        "output": output,
        "is_error": error,
        "started_after_ms": started,
        "duration_ms": duration,
    }


def transcript(*calls: dict) -> Transcript:
    return Transcript.model_validate({"model": "m", "outcome": {"status": "completed"}, "tool_trace": list(calls)})


def test_first_mutation_is_the_earliest_change_not_the_first_listed():
    analysis = analyze(
        transcript(
            bash("mkdir -p /opt/builder", started=9000),
            {
                "id": "w",
                "name": "Write",
                "input": {"file_path": "/opt/builder/app.py", "content": "import sqlite3\n"},
                "output": "ok",
                "is_error": False,
                "started_after_ms": 4000,
                "duration_ms": 0,
            },
            bash("curl -s http://127.0.0.1:8080/health", started=12000, duration=500),
        ),
        "a",
        "t",
    )
    assert analysis.metrics.first_mutation_after_ms == 4000
    assert analysis.metrics.last_observed_after_ms == 12500


def test_metrics_architecture_and_actions():
    analysis = analyze(
        transcript(
            {
                "id": "plan",
                "name": "TodoWrite",
                "input": {"todos": []},
                "output": "",
                "is_error": False,
                "started_after_ms": 0,
                "duration_ms": 0,
            },
            bash("ls -la /opt", started=100, output="  total 0\n"),
            bash("systemctl restart builder-app", started=200),
            bash("echo x > /opt/builder/records/a", started=300, error=True, output="Permission denied"),
            {
                "id": "w",
                "name": "Write",
                "input": {"file_path": "/opt/builder/app.py", "content": "import sqlite3\n"},
                "output": "ok",
                "is_error": False,
                "started_after_ms": 400,
                "duration_ms": 0,
            },
            bash("curl -s http://127.0.0.1:8080/health", started=500, output="x" * 400),
        ),
        "glm",
        "builder-one",
    )
    metrics = analysis.metrics
    assert (metrics.tool_calls, metrics.tool_errors) == (5, 1)
    assert (metrics.discoveries, metrics.mutations, metrics.lifecycle_actions, metrics.validations) == (1, 2, 1, 1)
    assert [action.index for action in analysis.actions] == [1, 2, 3, 4, 5]  # TodoWrite is not observable
    assert analysis.architecture.persistent_paths == ["/opt/builder/app.py"]  # the failed write is not evidence
    assert analysis.architecture.technologies == ["Python", "SQLite", "systemd"]
    assert analysis.architecture.service_units == ["builder-app.service"]
    assert analysis.actions[0].output_excerpt == "total 0"
    assert analysis.actions[4].output_excerpt == "x" * 280 + "…"
    assert analysis.actions[3].command == "Write /opt/builder/app.py" and analysis.actions[3].description is None
    assert (analysis.analyzer, analysis.agent, analysis.territory, analysis.outcome) == (
        ANALYZER,
        "glm",
        "builder-one",
        "completed",
    )


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: f"{p.parent.name[:12]}/{p.name}")
def test_every_fixture_transcript_gives_a_valid_analysis(path):
    source = Transcript.model_validate_json(path.read_text(encoding="utf-8"))
    analysis = analyze(source, "agent", "territory")
    Analysis.model_validate(analysis.model_dump(mode="json"))
    internal = [entry for entry in source.tool_calls if not is_observable(entry)]
    assert {entry.name for entry in internal} <= {"TodoWrite"}
    assert analysis.metrics.tool_calls + len(internal) == len(source.tool_calls)
    assert analysis.metrics.tool_calls == len(analysis.actions)
    metrics = analysis.metrics
    assert (
        metrics.discoveries + metrics.mutations + metrics.lifecycle_actions + metrics.validations == metrics.tool_calls
    )
    assert analysis.source_sha256 == source.sha256()


@pytest.mark.parametrize("path", ANALYSIS_FILES, ids=lambda p: p.name)
def test_against_stored_analyses(path):
    """Same calls, timings, commands and excerpts as the earlier analyzer; kinds may differ where it was wrong."""
    stored = Analysis.model_validate_json(path.read_text())
    ours = analyze(
        Transcript.model_validate_json(transcript_for(path).read_text(encoding="utf-8")), stored.agent, stored.territory
    )
    assert ours.source_sha256 == stored.source_sha256
    assert [a.index for a in ours.actions] == [a.index for a in stored.actions]
    for mine, theirs in zip(ours.actions, stored.actions):
        assert (
            mine.tool_id,
            mine.started_after_ms,
            mine.duration_ms,
            mine.success,
            mine.command,
            mine.output_excerpt,
            mine.description,
        ) == (
            theirs.tool_id,
            theirs.started_after_ms,
            theirs.duration_ms,
            theirs.success,
            theirs.command,
            theirs.output_excerpt,
            theirs.description,
        )
    assert ours.metrics.last_observed_after_ms == stored.metrics.last_observed_after_ms
    assert ours.metrics.tool_errors == stored.metrics.tool_errors


def _stored_vs_ours(match: str, agent: str) -> tuple[Analysis, Analysis]:
    path = next(p for p in ANALYSIS_FILES if p.parent.name.startswith(match) and p.name.startswith(agent))
    stored = Analysis.model_validate_json(path.read_text())
    return stored, analyze(Transcript.model_validate_json(transcript_for(path).read_text()), agent, stored.territory)


def test_known_mistakes_of_the_earlier_analyzer_are_fixed():
    stored, ours = _stored_vs_ours("durable-job-queue", "luna-queue-builder")
    # A SELECT through sqlite3 was counted as the first change at 0:07; the first real change is the Write at 2:42.
    assert stored.actions[2].kind == "mutation" and ours.actions[2].kind is ActionKind.DISCOVERY
    assert (stored.metrics.first_mutation_after_ms, ours.metrics.first_mutation_after_ms) == (7057, 162714)
    stored, ours = _stored_vs_ours("primary-failover", "luna-failover-engineer")
    # Writes that failed on a read-only /etc were listed as persistent paths, and `/etc/nginx` came from a grep.
    assert "/etc/systemd/system/failover-promote.service" in stored.architecture.persistent_paths
    assert ours.architecture.persistent_paths == ["/usr/local/sbin/failover-promote"]
    assert "Nginx" in stored.architecture.technologies and "Nginx" not in ours.architecture.technologies
    assert not any(unit.startswith("etc/") for unit in ours.architecture.service_units)
    stored, ours = _stored_vs_ours("primary-failover", "glm-failover-engineer")
    # A Python heredoc that atomically rewrote the failover state was a "discovery".
    assert stored.actions[7].kind == "discovery" and ours.actions[7].kind is ActionKind.MUTATION
    assert ours.architecture.persistent_paths == ["/var/lib/failover"]


def test_analysis_is_deterministic():
    path = TRANSCRIPT_FILES[0]
    source = Transcript.model_validate_json(path.read_text(encoding="utf-8"))
    first = json.dumps(analyze(source, "a", "t").model_dump(mode="json"))
    assert first == json.dumps(analyze(source, "a", "t").model_dump(mode="json"))
