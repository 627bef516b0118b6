"""Whole matches through the runner on scripted territories: the match directory is complete and replayable."""

from __future__ import annotations

import asyncio
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.reducer import reduce
from aoe_tui.domain.world import World
from aoe_tui.testing.clock import ManualSource
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.recorder import Progress
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.scripted_provider import AgentScript, ScriptedLauncher, ScriptedProvider
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.engine.helpers import ARENA, NEVER_READY, RACE, TERRITORIES, arena_data, write_arena

PROVENANCE_KEYS = [
    "schema_version",
    "controller_version",
    "source_revision",
    "arena_id",
    "arena_mode",
    "manifest_sha256",
    "player_brief_sha256",
    "verifier_sha256",
    "adapter_sha256",
    "compatibility_key",
]


def runner(output, manifest=ARENA, scripts=None, drain_seconds=5):
    return MatchRunner(
        manifest,
        output,
        ScriptedProvider(dict(RACE)),
        ScriptedLauncher(scripts or {}),
        source=ManualSource(),
        drain_seconds=drain_seconds,
    )


@dataclass
class PlayedRace:
    output: Path
    world: World
    updates: list


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> PlayedRace:
    """One whole scripted race (each costs seconds of real verifier runs), shared by the tests that only read
    the directory it leaves (one that must stay untouched works on a copy)."""
    output = tmp_path_factory.mktemp("played") / "match"
    race = runner(output, scripts={"oracle": AgentScript(finishes_after=1)})
    updates = race.queue()
    world = asyncio.run(race.run())
    seen = []
    while not updates.empty():
        seen.append(updates.get_nowait())
    return PlayedRace(output, world, seen)


def test_a_scripted_race_writes_a_complete_replayable_match_directory(played):
    output, world, seen = played.output, played.world, played.updates
    assert world.winner == "builder-one" and world.finish_reason == "first durable deployment"
    match = load_match(output)
    assert match.shape == "directory"
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    assert [p.name for p in sorted(output.iterdir())] == [
        "agents",
        "arena.json",
        "events.jsonl",
        "evidence",
        "match.json",
        "territories",
        "world.json",
    ]
    assert (output / "evidence" / "builder-one" / "host-reboot.json").is_file()
    assert "builder-app.service" in (output / "agents" / "oracle" / "instruction.md").read_text()
    kinds = [e.kind for e in match.events]
    assert kinds[-7:] == [
        "durable_deployment_completed",
        "match_state_changed",
        "match_finished",
        "post_match_drain_started",
        "agent_outraced",
        "agent_outraced",
        "post_match_drain_finished",
    ]
    assert match.world.agents["oracle"].terminal_state == "completed"
    assert isinstance(seen[0], Progress) and seen[0].stage == "match"
    assert [u.kind for u in seen if not isinstance(u, Progress)] == kinds


def test_match_json_provenance_is_complete_and_stable(played):
    recorded = json.loads((played.output / "match.json").read_text())
    assert list(recorded) == PROVENANCE_KEYS
    manifest = load_manifest(ARENA)
    assert provenance(manifest, ARENA) == recorded == provenance(manifest, ARENA)
    assert set(recorded["adapter_sha256"]) == {"oracle", "amnesiac", "tmpfs-writer"}


def test_the_compatibility_key_follows_the_contest_not_the_labels(tmp_path):
    def key(data, name):
        (tmp_path / name).mkdir()
        path = write_arena(tmp_path / name, data)
        return provenance(load_manifest(path), path)["compatibility_key"]

    base = key(arena_data(), "base")
    relabelled = arena_data()
    relabelled["arena"]["category"] = "something-else"
    relabelled["agents"][0]["adapter"] = "amnesiac"
    assert key(relabelled, "relabelled") == base
    assert key(arena_data(duration_seconds=900), "longer") != base


async def test_a_directory_holding_a_match_is_refused(played, tmp_path):
    output = tmp_path / "match"
    shutil.copytree(played.output, output)
    before = (output / "events.jsonl").read_bytes()
    with pytest.raises(AoeError, match="already holds a match"):
        await runner(output).run()
    assert (output / "events.jsonl").read_bytes() == before


async def test_cancelling_the_run_ends_the_log_in_aborted_and_tears_down(tmp_path):
    output = tmp_path / "match"
    provider = ScriptedProvider({t: NEVER_READY for t in TERRITORIES})  # the match would run for 10 minutes
    race = MatchRunner(ARENA, output, provider, ScriptedLauncher({}), drain_seconds=1)
    task = asyncio.ensure_future(race.run())
    updates = race.queue()
    while True:
        update = await updates.get()
        if getattr(update, "kind", None) == "milestone_failed":
            break
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    match = load_match(output)
    assert match.events[-1].kind == "match_state_changed" and match.events[-1].to_json()["to"] == "aborted"
    assert match.world.match_state == "aborted"
    assert provider.hosts == {}
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
