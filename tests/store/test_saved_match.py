"""Every saved-match shape loads into one match object."""

import pytest

from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import MATCH_DIRS, ORACLE_DIR, SINGLE_FILES, WORLD_ONLY

FAILOVER = next(p for p in MATCH_DIRS if p.name.startswith("primary-failover"))
SURGE = next(p for p in MATCH_DIRS if p.name.startswith("traffic-surge"))


def test_published_folder_with_transcripts_and_analyses():
    match = load_match(FAILOVER)
    assert match.shape == "published"
    assert set(match.analyses) == {"deepseek-failover-engineer", "luna-failover-engineer", "glm-failover-engineer"}
    assert "luna-failover-engineer" in match.transcripts  # final transcript
    assert "glm-failover-engineer" in match.transcripts  # only a live transcript exists
    assert match.tool_trace("luna-failover-engineer")
    assert match.provenance["arena_id"] == "primary-failover"


def test_published_folder_with_arena_json_has_manifest_details():
    match = load_match(SURGE)
    assert match.manifest.arena.id == "traffic-surge"
    assert match.agents["luna-surge-engineer"].adapter == "claux"
    assert match.results["luna-surge-engineer"]["status"] == "interrupted"


def test_folder_without_arena_or_match_json():
    match = load_match(ORACLE_DIR)
    assert match.manifest is None and match.provenance is None
    assert match.world.winner == "builder-one"
    assert match.agents["builder-one-agent"].model == "oracle"
    assert match.agents["builder-one-agent"].adapter is None


@pytest.mark.parametrize("path", SINGLE_FILES, ids=lambda p: p.name)
def test_single_file(path):
    match = load_match(path)
    assert match.shape == "single-file" and match.has_timeline
    assert match.visualization is None or match.visualization.nodes
    assert match.analyses and match.provenance is not None
    assert match.world.match_state == match.recorded_world.match_state


def test_world_only():
    match = load_match(WORLD_ONLY)
    assert match.shape == "world-only" and not match.has_timeline
    assert match.world.territories["builder-two"].durable_at_ms is not None


def test_events_jsonl_path_opens_its_folder():
    assert load_match(ORACLE_DIR / "events.jsonl").source == ORACLE_DIR


def test_nested_match_directory(tmp_path):
    import shutil

    target = tmp_path / "m"
    shutil.copytree(FAILOVER, target)
    for agent in ("luna-failover-engineer",):
        (target / "agents" / agent).mkdir(parents=True)
        shutil.move(target / f"{agent}-transcript.json", target / "agents" / agent / "transcript.json")
        shutil.move(target / f"{agent}-analysis.json", target / "agents" / agent / "analysis.json")
    (target / "agents" / "luna-failover-engineer" / "tool_trace.jsonl").write_text(
        '{"id":"1","name":"Bash","input":{"command":"ls"},"output":"x","is_error":false,'
        '"started_after_ms":5,"duration_ms":1}\n{"id":"2","na'
    )
    match = load_match(target)
    assert match.shape == "directory"
    assert "luna-failover-engineer" in match.transcripts and "luna-failover-engineer" in match.analyses
    assert len(match.live_tool_traces["luna-failover-engineer"]) == 1
