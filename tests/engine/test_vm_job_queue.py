"""The Durable Job Queue arena on real VMs: one 3-territory race, oracle against two flawed builders.

One race per module (every TCG boot is ~20-35 s): the referee provisions the
guests (spool seed, dormant slots, nothing on 8080) and audits them for
fog-of-war leaks before any agent starts; the oracle must be durable with full
points, the rerunner (a claim lease shorter than a job) must stop at
recover-accepted and the volatile builder (database under /run) at host-reboot.
The operator holds the oracle's host reboot until the volatile one has failed
its own, so both outcomes are observed. While the race runs, the leak audit is
also run against a booted guest with a planted forbidden string.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.fog import audit_one
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.provisioning import ArenaSetupFailed
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.engine.vm_cli import failure_details
from tests.fixture_paths import PROJECT
from tests.engine.vm_race import operated_race, race_events

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "durable-job-queue" / "arena.toml"
BASE_PORT = 30800  # this module's loopback range: 30800-30805
PLANTED = "/root/notes/referee.txt"


async def _operate(runner: MatchRunner, updates: asyncio.Queue, audit: dict) -> None:
    done: set[str] = set()
    async for kind, where, _f in race_events(updates):
        if kind == "agent_started" and "hold" not in done:
            done.add("hold")
            runner.pause_milestone("host-reboot", "queue-one")
        elif kind == "milestone_failed" and where == ("queue-two", "recover-accepted") and "audit" not in done:
            done.add("audit")
            host = runner.referee.hosts["queue-two"]
            leak = runner.manifest.fog_of_war.guest_leak_audit
            audit["clean"] = await _audit_detail(host, leak)
            await host.run(f"mkdir -p /root/notes && echo 'see the controller-owned referee evidence' > {PLANTED}", 30)
            audit["planted"] = await _audit_detail(host, leak)
        elif kind == "milestone_failed" and where == ("queue-three", "host-reboot") and "release" not in done:
            done.add("release")
            runner.resume_milestone("host-reboot", "queue-one")


async def _audit_detail(host, leak) -> str | None:
    try:
        await audit_one(host, leak)
    except ArenaSetupFailed as error:
        return error.detail
    return None


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    audit: dict = {}
    output, wall = operated_race(
        tmp_path_factory, "queue", ARENA, BASE_PORT, lambda runner, updates: _operate(runner, updates, audit)
    )
    print(f"\nreal durable-job-queue race: {wall:.0f} s wall")
    return output, load_match(output), audit


def test_the_oracle_is_durable_with_full_points(race):
    _, match, _ = race
    world = match.world
    assert world.winner == "queue-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["queue-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    assert oracle.milestones["recover-accepted"].evidence["accepted_jobs"] == [
        "accepted-alpha-7d3",
        "accepted-beta-91e",
        "accepted-gamma-c42",
    ]
    assert oracle.milestones["host-reboot"].evidence["reboot"] is True
    assert world.infrastructure_failures == 0


def test_the_rerunner_stops_at_recover_accepted_with_a_readable_detail(race):
    _, match, _ = race
    rerunner = match.world.territories["queue-two"]
    assert rerunner.milestones["service-up"].passed and not rerunner.milestones["recover-accepted"].passed
    assert rerunner.milestone_points == 10
    details = failure_details(match, "queue-two", "recover-accepted")
    assert details and all(
        d.startswith("pre-existing accepted jobs were not recovered exactly once: job accepted-") for d in details
    )
    assert any("has attempts" in d and "not 1" in d for d in details)


def test_the_volatile_builder_stops_at_host_reboot(race):
    _, match, _ = race
    volatile = match.world.territories["queue-three"]
    assert volatile.milestones["worker-restart"].passed and volatile.milestone_points == 75
    assert not volatile.milestones["host-reboot"].passed
    details = failure_details(match, "queue-three", "host-reboot")
    # The job it completed before the reboot is gone: said by the check after that reboot, or (when a loaded
    # guest's SSH came back too late for it) by the next attempt's check before its own reboot.
    assert any("GET /jobs/fresh-" in d and "returned 404" in d for d in details), details


def test_the_log_reduces_to_world_json_and_agents_read_the_brief_alone(race):
    output, match, _ = race
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    kinds = [e.kind for e in match.events]
    assert kinds.index("match_state_changed") < kinds.index("agent_started")
    instruction = (output / "agents" / "queue-one-agent" / "instruction.md").read_text()
    assert instruction.startswith((ARENA.parent / "BRIEF.md").read_text().rstrip("\n"))
    assert "The hard deadline is\n900 seconds" in instruction and "recover-accepted" not in instruction
    recorded = json.loads((output / "match.json").read_text())
    again = provenance(load_manifest(ARENA), ARENA)
    assert recorded["compatibility_key"] == again["compatibility_key"]
    assert recorded["provisioning_sha256"] == again["provisioning_sha256"]


def test_the_leak_audit_finds_a_planted_string_on_a_real_guest(race):
    _, _, audit = race
    assert audit["clean"] is None
    assert audit["planted"] == (
        f'fog-of-war guest leak in queue-two: "controller-owned referee evidence" found at {PLANTED}'
    )
