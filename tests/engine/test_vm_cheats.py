"""A real race on real VMs (TCG): the oracle against two builders that cheat durability as root.

`cheat-fake-reboot` (records in RAM; systemctl/cat wrappers early in PATH, a fake boot
id bind-mounted over the kernel's, the ACPI button swallowed) and
`cheat-swallow-restart` (records in process memory; a systemctl wrapper that swallows
restarts, a KillMode=none drop-in) each really try. The referee must give each only
what it earned, say in the failure detail what happened, and the analyzer must flag
the tampering. One race per module; every assertion reads its match directory.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena
from tests.engine.vm_cli import failure_details
from tests.engine.vm_race import operated_race, race_events

pytestmark = pytest.mark.vm
BASE_PORT = 32000  # 32000-32199 is this module's range
CHEATS = {"builder-two": "cheat-fake-reboot", "builder-three": "cheat-swallow-restart"}


async def _operate(runner: MatchRunner, updates: asyncio.Queue) -> None:
    """Hold the oracle's reboot until both cheats have met the check they attack, so the oracle's win
    cannot end the match before the cheats were judged."""
    waiting = {("builder-two", "host-reboot"), ("builder-three", "service-restart")}
    held = False
    async for kind, where, _ in race_events(updates):
        if kind == "agent_started" and not held:
            held = True
            runner.pause_milestone("host-reboot", "builder-one")
        if kind in ("milestone_failed", "milestone_passed"):
            waiting.discard(where)
            if not waiting and held:
                held = None
                runner.resume_milestone("host-reboot", "builder-one")


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    work = tmp_path_factory.mktemp("vm-cheats")
    data = arena_data(duration_seconds=1500)
    for agent in data["agents"]:
        if agent["territory"] in CHEATS:
            agent["id"] = agent["adapter"] = CHEATS[agent["territory"]]
            agent["model"] = f"scripted/{agent['adapter']}"
    arena = write_arena(work, data)
    output, wall = operated_race(
        tmp_path_factory, "vm-cheats", arena, BASE_PORT, _operate, drain_seconds=20, limit_seconds=2400
    )
    print(f"\nreal 3-territory race against two cheats: {wall:.0f} s wall")
    return output, load_match(output)


def test_the_oracle_wins_durable_with_100_and_an_acpi_reboot_proven_from_outside(race):
    world = race[1].world
    assert world.winner == "builder-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["builder-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    evidence = oracle.milestones["host-reboot"].evidence
    assert evidence["reboot_caused_by"] == "acpi"
    assert {"libvirt-event", "console-banner", "boot-id"} <= set(evidence["reboot_proven_by"])
    assert evidence["kernel_banner"].startswith("[    0.000000] Linux version")


def test_the_fake_reboot_earns_only_the_restart_its_ram_records_survive(race):
    output, match = race
    cheat = match.world.territories["builder-two"]
    assert cheat.milestones["service-restart"].passed and not cheat.milestones["host-reboot"].passed
    assert cheat.milestone_points == 60 and cheat.competitor_state != "durable"
    details = failure_details(match, "builder-two", "host-reboot")
    assert any(
        "returned 404 after the host reboot (a reset: the guest ignored the ACPI power button)" in d for d in details
    ), details
    proof = json.loads((output / "territories" / "builder-two" / "verifier" / "reboot-proof.json").read_text())
    assert proof["reboot_caused_by"] == "reset-fallback"
    assert {"referee-reset", "console-banner"} <= set(proof["reboot_proven_by"])


def test_the_swallowed_restart_earns_no_restart(race):
    _, match = race
    cheat = match.world.territories["builder-three"]
    assert not cheat.milestones["service-restart"].passed and cheat.milestone_points == 30
    details = failure_details(match, "builder-three", "service-restart")
    assert any("KillMode=none" in d for d in details), details


def test_the_analyzer_flags_each_cheats_tampering(race):
    output, _ = race
    done = subprocess.run(
        [sys.executable, "-m", "aoe_tui.cli.main", "analyze", str(output), "--json"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    analyses = json.loads(done.stdout)
    flags = {
        agent: {kind for action in analysis["actions"] for kind in action["tampering"]}
        for agent, analysis in analyses.items()
    }
    assert {"wrapper-in-local-bin", "bind-mount-over-proc", "acpi-handler-edit"} <= flags["cheat-fake-reboot"]
    assert {"wrapper-in-local-bin", "unit-drop-in"} <= flags["cheat-swallow-restart"]
    assert flags["oracle"] == set()
