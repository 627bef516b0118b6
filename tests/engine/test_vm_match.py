"""Real matches on real VMs (TCG): one shared full race with operator actions, plus Ctrl-C and kill -9.

Slow by nature (every guest boots, the oracle's guest reboots), so the full
race runs once per module and every assertion reads its match directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena
from tests.engine.vm_cli import failure_details
from tests.engine.vm_race import operated_race, race_events

pytestmark = pytest.mark.vm
BASE_PORT = 27110  # 27100+ is this suite's range (see tests/runtime/free_ports.py)
PAUSE_SECONDS = 3


@pytest.fixture(scope="module")
def services() -> None:
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)


async def _operate(runner: MatchRunner, updates: asyncio.Queue) -> None:
    """The operator of the shared race: hold the oracle's reboot until the tmpfs-writer has failed its own
    (so both outcomes are observed), pause the whole match once, and retry a passed milestone."""
    done: set[str] = set()
    async for kind, where, _f in race_events(updates):
        if kind == "agent_started" and "hold" not in done:
            done.add("hold")
            runner.pause_milestone("host-reboot", "builder-one")
        elif kind == "milestone_passed" and where == ("builder-one", "service-up") and "pause" not in done:
            done.add("pause")
            await runner.pause_match("vm test pause")
            await asyncio.sleep(PAUSE_SECONDS)
            await runner.resume_match()
        elif kind == "milestone_passed" and where == ("builder-one", "write-read") and "retry" not in done:
            done.add("retry")
            runner.retry_milestone("builder-one", "service-up")
        elif kind == "milestone_failed" and where == ("builder-three", "host-reboot") and "release" not in done:
            done.add("release")
            runner.resume_milestone("host-reboot", "builder-one")


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    manifest = write_arena(tmp_path_factory.mktemp("vm-race"), arena_data(duration_seconds=1500))
    output, wall = operated_race(
        tmp_path_factory, "vm", manifest, BASE_PORT, _operate, drain_seconds=20, limit_seconds=2400
    )
    print(f"\nreal 3-territory match: {wall:.0f} s wall")
    return manifest, output, load_match(output)


async def _our_domains(fragment: str) -> list[str]:
    hypervisor = await Hypervisor.connect()
    try:
        return [d.name for d in await hypervisor.aoe_domains() if fragment in d.name]
    finally:
        await hypervisor.close()


def test_the_oracle_wins_durable_with_100_points(race):
    _, _, match = race
    world = match.world
    assert world.winner == "builder-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["builder-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    evidence = oracle.milestones["host-reboot"].evidence
    assert evidence["reboot"] is True and evidence["boot_id_before"] != evidence["boot_id_after"]


def test_each_flawed_builder_stops_at_the_milestone_its_mistake_breaks(race):
    world = race[2].world
    amnesiac = world.territories["builder-two"]
    assert amnesiac.milestone_points == 30 and not amnesiac.milestones["service-restart"].passed
    details = failure_details(race[2], "builder-two", "service-restart")  # the last check may be cut short by the end
    assert any("after systemctl restart builder-app.service" in d for d in details)
    tmpfs = world.territories["builder-three"]
    assert tmpfs.milestones["service-restart"].passed and tmpfs.milestone_points == 60
    failures = [
        e.to_json()
        for e in race[2].events
        if e.kind == "milestone_failed"
        and e.to_json()["territory"] == "builder-three"
        and e.to_json()["milestone"] == "host-reboot"
    ]
    assert any("returned 404 after the host reboot" in f["detail"] for f in failures)


def test_the_log_reduces_to_world_json_and_records_the_drain(race):
    _, output, match = race
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    kinds = [e.kind for e in match.events]
    assert (
        kinds.index("match_finished")
        < kinds.index("post_match_drain_started")
        < kinds.index("post_match_drain_finished")
        == len(kinds) - 1
    )
    assert all(state.terminal_state for state in match.world.agents.values())


def test_operator_pause_resume_and_retry_are_in_the_log(race):
    events = [e.to_json() for e in race[2].events]
    kinds = [e["kind"] for e in events]
    resumed = next(e for e in events if e["kind"] == "match_resumed")
    assert resumed["paused_ms"] >= PAUSE_SECONDS * 1000
    paused = next(e for e in events if e["kind"] == "match_paused")
    assert resumed["elapsed_ms"] - paused["elapsed_ms"] < 1000  # paused time is not match time
    assert {"milestone_paused", "milestone_resumed"} <= set(kinds)
    retry = kinds.index("milestone_retry_requested")
    rest = [e for e in events[retry:] if e.get("territory") == "builder-one" and e.get("milestone") == "service-up"]
    assert [e["kind"] for e in rest[:3]] == [
        "milestone_retry_requested",
        "milestone_evaluation_started",
        "milestone_passed",
    ]


def test_agents_hand_in_real_tool_traces_and_results(race):
    _, output, match = race
    for agent in ("oracle", "amnesiac", "tmpfs-writer"):
        trace = match.tool_trace(agent)
        assert trace and trace[0].name == "Bash" and trace[0].input["command"]
        assert (output / "agents" / agent / "usage.json").is_file()
    assert match.world.agents["oracle"].resource_units_used >= 5
    assert (output / "territories" / "builder-one" / "console.log").stat().st_size > 0


def test_provenance_is_stable_and_no_domain_is_left(race):
    manifest_path, output, _ = race
    manifest = load_manifest(manifest_path)
    recorded = json.loads((output / "match.json").read_text())
    again = provenance(manifest, manifest_path)
    moving = "source_revision"  # other work may be committed while a match runs
    assert {k: v for k, v in again.items() if k != moving} == {k: v for k, v in recorded.items() if k != moving}
    assert len(recorded[moving]) == 40
    assert asyncio.run(_our_domains(output.name)) == []


def _two_territory_manifest(directory: Path) -> Path:
    data = arena_data(duration_seconds=1500)
    data["territories"] = data["territories"][:2]
    data["agents"] = data["agents"][:2]
    return write_arena(directory, data)


def _start_headless(manifest: Path, output: Path, base_port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "aoe_tui.cli.main",
            "run",
            str(manifest),
            "--headless",
            "--output",
            str(output),
            "--base-port",
            str(base_port),
            "--drain-seconds",
            "5",
        ],
        cwd=PROJECT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen, needle: str, seconds: float = 600) -> list[str]:
    seen, deadline = [], time.monotonic() + seconds
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"never saw {needle!r}; output:\n{''.join(seen)}")


def test_ctrl_c_aborts_cleanly_and_leaves_no_domain(services, tmp_path):
    output = tmp_path / "sigint-match"
    process = _start_headless(_two_territory_manifest(tmp_path), output, BASE_PORT + 10)
    _wait_for_line(process, "milestone_failed: service-up")
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=180)
    assert process.returncode == 130, rest
    match = load_match(output)
    last = match.events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert asyncio.run(_our_domains("sigint-match")) == []


def test_kill_9_leaves_a_log_that_still_loads(services, tmp_path):
    output = tmp_path / "killed-match"
    process = _start_headless(_two_territory_manifest(tmp_path), output, BASE_PORT + 20)
    try:
        _wait_for_line(process, "service-up")
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        match = load_match(output)
        assert match.events and match.events[0].kind == "match_state_changed"
        assert match.world.match_state == "running"
    finally:
        asyncio.run(_destroy("killed-match"))


async def _destroy(fragment: str) -> None:
    hypervisor = await Hypervisor.connect()
    try:
        for record in await hypervisor.aoe_domains():
            if fragment in record.name:
                await hypervisor.destroy(record.name)
    finally:
        await hypervisor.close()
