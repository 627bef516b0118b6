"""Files an adapter writes are never read through a symbolic link, live or on replay.

An adapter owns its folder while it runs; a `result.json` or `transcript.json`
pointing at a root-only file must not bring that file into the record.
"""

import shutil

import pytest

from aoe_tui.agents.protocol import InvalidReport, read_usage
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import FIXTURES

QUEUE_DIR = FIXTURES / "matches" / "durable-job-queue-real-20260813-103028"


def test_the_referee_does_not_follow_a_linked_usage_file(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"resource_units": 7}')
    usage = tmp_path / "usage.json"
    usage.symlink_to(secret)
    with pytest.raises(InvalidReport, match=r"usage\.json"):
        read_usage(usage)


def test_a_replay_skips_a_linked_transcript_and_names_it(tmp_path):
    match_dir = tmp_path / "m"
    shutil.copytree(QUEUE_DIR, match_dir)
    transcripts = sorted(match_dir.rglob("*transcript*.json"))
    assert transcripts
    target = transcripts[0]
    secret = tmp_path / "root-only.json"
    shutil.copy(target, secret)
    target.unlink()
    target.symlink_to(secret)
    match = load_match(match_dir)
    assert any("symbolic link" in reason for _, reason in match.skipped_files())
    assert match.world.to_json() == load_match(QUEUE_DIR).world.to_json()
