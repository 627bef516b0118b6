"""The transcript and analysis models read every real fixture without losing a byte."""

from __future__ import annotations

import json

import pytest

from aoe_tui.domain.analysis import ActionKind, Analysis
from aoe_tui.domain.transcript import ToolTraceEntry, Transcript
from tests.analysis.fixture_files import ANALYSIS_FILES, TRANSCRIPT_FILES, seed_analyses, transcript_for


def test_fixture_lists_are_not_empty():
    assert len(TRANSCRIPT_FILES) == 9
    assert len(ANALYSIS_FILES) == 6
    assert len(seed_analyses()) == 9


@pytest.mark.parametrize("path", TRANSCRIPT_FILES, ids=lambda p: p.name)
def test_every_transcript_serializes_back_to_its_own_bytes(path):
    raw = path.read_text(encoding="utf-8")
    transcript = Transcript.model_validate_json(raw)
    assert transcript.canonical_json() == raw
    assert all(isinstance(entry, ToolTraceEntry) for entry in transcript.tool_calls)


@pytest.mark.parametrize("path", ANALYSIS_FILES, ids=lambda p: p.name)
def test_transcript_sha256_matches_the_stored_source_sha256(path):
    stored = json.loads(path.read_text())
    transcript = Transcript.model_validate_json(transcript_for(path).read_text(encoding="utf-8"))
    assert transcript.sha256() == stored["source_sha256"]


@pytest.mark.parametrize(
    "label,data",
    [(p.name, json.loads(p.read_text())) for p in ANALYSIS_FILES] + seed_analyses(),
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_every_stored_analysis_round_trips(label, data):
    analysis = Analysis.model_validate(data)
    dumped = analysis.model_dump(mode="json")
    assert {key: dumped[key] for key in data if key != "actions"} == {k: v for k, v in data.items() if k != "actions"}
    # Fields added since (tampering) take their defaults; everything stored comes back unchanged.
    assert [
        {key: ours[key] for key in stored} for ours, stored in zip(dumped["actions"], data.get("actions", []))
    ] == data.get("actions", [])
    assert all(isinstance(action.kind, ActionKind) for action in analysis.actions)


def test_transcript_is_lenient_about_missing_and_extra_fields():
    transcript = Transcript.model_validate({"model": "m", "tool_trace": [{"name": "Bash", "extra": 1}], "new": True})
    assert transcript.outcome is None and transcript.usage is None
    assert transcript.tool_calls[0].model_extra == {"extra": 1}
    assert json.loads(transcript.canonical_json())["new"] is True


def test_live_tool_trace_line_parses_as_an_entry():
    line = '{"id":"t1","name":"Bash","input":{"command":"ls"},"output":"x","is_error":false,"started_after_ms":5,"duration_ms":7}'
    entry = ToolTraceEntry.model_validate_json(line)
    assert entry.input == {"command": "ls"} and entry.finished_after_ms == 12


def test_analysis_rejects_an_unknown_action_kind():
    with pytest.raises(ValueError):
        Analysis.model_validate({"actions": [{"index": 0, "kind": "teleport"}]})
