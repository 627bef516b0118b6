"""`aoe export --format match`: every saved shape becomes one single-file match that reads back as its source."""

from __future__ import annotations

import json
import shutil

import asyncssh
import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.secret_patterns import Redactor
from aoe_tui.domain.transcript import Transcript, ToolTraceEntry, without_private_reasoning
from aoe_tui.store.match_export import encode_document, export_match, shareable_document
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import MATCH_DIRS, SINGLE_FILES, WORLD_ONLY

SOURCES = [*MATCH_DIRS, *SINGLE_FILES, WORLD_ONLY]
FAILOVER = next(p for p in MATCH_DIRS if p.name.startswith("primary-failover"))


def shared(transcript: Transcript) -> Transcript:
    """What an export should make of a source transcript: reasoning out, secrets redacted."""
    data = transcript.model_dump(mode="json", exclude_unset=True)
    data["messages"] = without_private_reasoning(data.get("messages") or [])[0]
    return Transcript.model_validate(Redactor().value(data))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_an_export_reads_back_as_its_source(source, tmp_path):
    original = load_match(source)
    exported = load_match(export_match(original, tmp_path / "out.match.json").output)
    assert exported.events == original.events
    assert exported.world == original.world
    assert exported.recorded_world == (original.recorded_world or original.world)
    assert exported.analyses == original.analyses
    assert exported.provenance == original.provenance
    assert exported.manifest == original.manifest
    assert exported.visualization == original.visualization
    assert exported.agents == original.agents
    assert exported.results == original.results
    assert exported.name == original.name and exported.has_timeline == original.has_timeline
    assert exported.transcripts == {agent: shared(t) for agent, t in original.transcripts.items()}
    for agent in original.agents:
        expected = [
            ToolTraceEntry.model_validate(Redactor().value(e.model_dump(mode="json")))
            for e in original.tool_trace(agent)
        ]
        assert exported.tool_trace(agent) == expected


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_exporting_an_export_gives_the_same_bytes(source, tmp_path):
    first = export_match(load_match(source), tmp_path / "first.match.json").output
    second = export_match(load_match(first), tmp_path / "second.match.json").output
    assert second.read_bytes() == first.read_bytes()


def test_secrets_in_a_transcript_are_redacted_and_counted():
    document, report = shareable_document(load_match(FAILOVER))
    text = encode_document(document)
    assert "OPENROUTER_API_KEY=arena-proxy-placeholder" not in text
    assert "OPENROUTER_API_KEY=[redacted]" in text
    assert ("transcripts.luna-failover-engineer", "credential assignment", 4) in report.redacted


def test_private_reasoning_never_leaves_with_the_export(tmp_path):
    planted = "PLANTED-PRIVATE-REASONING: the operator should never read this"
    match_dir = tmp_path / FAILOVER.name
    shutil.copytree(FAILOVER, match_dir)
    transcript_file = match_dir / "luna-failover-engineer-transcript.json"
    data = json.loads(transcript_file.read_text())
    data["messages"].append({"role": "assistant", "content": [{"type": "reasoning", "text": planted}]})
    data["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "done"}], "reasoning": planted})
    transcript_file.write_text(json.dumps(data))
    report = export_match(load_match(match_dir), tmp_path / "out.match.json")
    assert planted not in report.output.read_text()
    assert '"done"' in report.output.read_text()
    assert report.reasoning_removed >= 2


def test_a_changed_event_is_detected_naming_the_file(tmp_path):
    out = export_match(load_match(FAILOVER), tmp_path / "out.match.json").output
    document = json.loads(out.read_text())
    finished = next(e for e in document["events"] if e["kind"] == "match_finished")
    finished["winner"] = "failover-one"
    out.write_text(json.dumps(document))
    with pytest.raises(AoeError, match=r"out\.match\.json: the events were changed after export"):
        load_match(out)


def test_an_untouched_export_passes_its_check_and_a_seed_has_none(tmp_path):
    out = export_match(load_match(FAILOVER), tmp_path / "out.match.json").output
    assert "integrity" in json.loads(out.read_text())
    load_match(out)
    assert "integrity" not in json.loads(SINGLE_FILES[0].read_text())
    load_match(SINGLE_FILES[0])


def test_a_match_directory_with_keys_exports_no_private_key(tmp_path):
    """A nested match folder as `aoe run` leaves it: per-territory SSH keys, and a key the agent pasted around."""
    match_dir = tmp_path / "keys-match"
    shutil.copytree(FAILOVER, match_dir)
    layout = MatchLayout(match_dir)
    keys = {}
    for territory in ("failover-one", "failover-two"):
        key = asyncssh.generate_private_key("ssh-ed25519")
        keys[territory] = key.export_private_key().decode()
        layout.ssh_directory(territory).mkdir(parents=True)
        (layout.ssh_directory(territory) / "id_ed25519").write_text(keys[territory])
        (layout.ssh_directory(territory) / "known_hosts").write_text("[127.0.0.1]:26000 ssh-ed25519 AAAA\n")
    stray = match_dir / "operator-key.txt"
    stray.write_text(keys["failover-one"])
    transcript_file = match_dir / "luna-failover-engineer-transcript.json"
    data = json.loads(transcript_file.read_text())
    data["tool_trace"][0]["output"] = f"cat ~/.ssh/id_ed25519\n{keys['failover-two']}"
    transcript_file.write_text(json.dumps(data))
    provider_key = "sk-or-v1-" + "0123456789abcdef" * 4
    result_file = match_dir / "luna-failover-engineer-result.json"
    result = json.loads(result_file.read_text())
    result["summary"] = f"used key {provider_key} and the operator's sekrit-value-42"
    result_file.write_text(json.dumps(result))

    report = export_match(load_match(match_dir), tmp_path / "out.match.json", ["sekrit-value-42"])
    text = report.output.read_text()
    assert "PRIVATE KEY" not in text
    for key in keys.values():
        body = [line for line in key.splitlines() if line and not line.startswith("-----")]
        assert body and not any(line in text for line in body)
    assert provider_key not in text and "sekrit-value-42" not in text
    assert ("ssh/ (4 files)", "the match's SSH keys: never exported") in report.left_out
    assert ("operator-key.txt", "private key: never exported") in report.left_out
    kinds = {(where, kind) for where, kind, _ in report.redacted}
    assert {
        ("transcripts.luna-failover-engineer", "private key"),
        ("results.luna-failover-engineer", "provider key"),
    } <= kinds
    assert ("results.luna-failover-engineer", "known secret") in kinds
