"""The Traffic Surge arena on real VMs: one 3-territory race, the oracle against two flawed builders.

One race per module (every TCG boot is ~20-35 s): the referee provisions the
guests (the seed, the serial app on 8080), audits them for leaks (fog) before
any agent starts, and the verifiers put their load on each guest's forwarded
port from the host (aoe_tui.runtime.load_generator). The oracle must be
durable with full points, the builder that keeps the serial server must stop
at priority-first-surge with curl's 1.5 s timeout, and the one that keeps its
database under /run at host-reboot. The operator holds the oracle's host
reboot until both have failed with those details, so both outcomes are
observed. The saved match then replays exactly and opens in the app.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from aoe_tui.app.widgets.service_map_view import ServiceMap
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.app.app_under_test import SIZE, rendered, replay_app
from tests.engine.vm_cli import failure_details
from tests.fixture_paths import PROJECT
from tests.engine.vm_race import operated_race, race_events

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "traffic-surge" / "arena.toml"
BASE_PORT = 30100  # this module's loopback range: 30100-30199
TIMED_OUT = re.compile(r"curl: \(28\) Operation timed out after 15\d\d milliseconds with 0 bytes received")
LOST = re.compile(
    r"priority state or traffic service did not survive reboot: "
    r"GET /priority/restart-[0-9a-f]{16} returned 404, expected 200"
)
NOTHING_LISTENING = ("curl: (52) Empty reply from server", "curl: (56) Recv failure: Connection reset by peer")
SURGE_DROPPED = "the optional surge did not hold"  # the builder restarted its app during an attempt
TERRITORIES = ("surge-one", "surge-two", "surge-three")


async def _operate(runner: MatchRunner, updates: asyncio.Queue, seen: dict) -> None:
    """Hold the oracle's reboot until both flawed builders failed where their mistakes show."""
    async for kind, where, f in race_events(updates):
        if kind == "agent_started" and "hold" not in seen:
            seen["hold"] = runner.pause_milestone("host-reboot", "surge-one")
        elif kind == "milestone_failed" and where == ("surge-two", "priority-first-surge"):
            seen.setdefault("serial", f["detail"])  # whatever it says: the tests below judge the wording
        elif kind == "milestone_failed" and where == ("surge-three", "host-reboot"):
            seen.setdefault("volatile", f["detail"])
        if "serial" in seen and "volatile" in seen and "released" not in seen:
            seen["released"] = runner.resume_milestone("host-reboot", "surge-one")


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    seen: dict = {}
    output, wall = operated_race(
        tmp_path_factory, "surge", ARENA, BASE_PORT, lambda runner, updates: _operate(runner, updates, seen)
    )
    print(f"\nreal traffic-surge race: {wall:.0f} s wall")
    return output, load_match(output), seen


def test_the_oracle_is_durable_with_full_points(race):
    _, match, seen = race
    assert seen["hold"] and seen["released"]
    world = match.world
    assert world.winner == "surge-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["surge-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    milestones = oracle.milestones
    assert milestones["baseline-ready"].evidence == {"health": "ready", "historical_records": 3}
    first = milestones["priority-first-surge"].evidence
    assert first["optional_pressure"] == 8 and re.fullmatch(r"surge-[0-9a-f]{16}", first["record"])
    assert first["burst_connected_at_release"] == 8  # the priority write queued behind all of them
    bounded = milestones["bounded-optional"].evidence
    assert bounded["requests"] == 16 and bounded["served"] + bounded["shed"] == 16
    print(
        f"oracle: {bounded['served']} of 16 served, {bounded['shed']} shed; burst start spreads (ms): "
        f"{first['start_spread_ms']}, {bounded['start_spread_ms']}, "
        f"{milestones['recover-peak'].evidence['start_spread_ms']}"
    )
    assert milestones["recover-peak"].evidence["recoverable"] is True
    reboot = milestones["host-reboot"].evidence
    assert reboot["reboot"] is True and reboot["historical_records"] == 3
    assert reboot["record"] == milestones["restart-under-load"].evidence["record"]
    assert world.infrastructure_failures == 0


def test_a_serial_server_stops_at_priority_first_surge_with_curls_timeout(race):
    _, match, _ = race
    serial = match.world.territories["surge-two"]
    assert serial.milestones["baseline-ready"].passed and not serial.milestones["priority-first-surge"].passed
    assert serial.milestone_points == 5
    details = failure_details(match, "surge-two", "priority-first-surge")
    # While the builder restarts its app nothing listens for a moment: the forward then closes the connection.
    assert details and TIMED_OUT.fullmatch(details[-1]), details
    assert all(TIMED_OUT.fullmatch(d) or d in NOTHING_LISTENING or d.startswith(SURGE_DROPPED) for d in details), (
        details
    )


def test_state_under_run_survives_the_restart_not_the_reboot(race):
    _, match, _ = race
    volatile = match.world.territories["surge-three"]
    assert volatile.milestones["restart-under-load"].passed and not volatile.milestones["host-reboot"].passed
    assert volatile.milestone_points == 80
    details = failure_details(match, "surge-three", "host-reboot")
    # The first reboot lost the record; each later try finds it gone before its reboot already.
    assert details and LOST.fullmatch(details[0]), details
    gone = re.compile(r"before the host reboot: GET /priority/restart-[0-9a-f]{16} returned 404, expected 200")
    assert all(LOST.fullmatch(d) or gone.fullmatch(d) for d in details[1:]), details


def test_the_log_reduces_to_world_json_and_agents_read_the_brief_only(race):
    output, match, _ = race
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    kinds = [e.kind for e in match.events]
    assert kinds.index("match_state_changed") < kinds.index("agent_started")
    instruction = (output / "agents" / "surge-one-agent" / "instruction.md").read_text()
    assert instruction.startswith((ARENA.parent / "BRIEF.md").read_text().splitlines()[0])
    assert "900 seconds" in instruction and "priority-first-surge" not in instruction
    recorded = json.loads((output / "match.json").read_text())
    again = provenance(load_manifest(ARENA), ARENA)
    assert recorded["compatibility_key"] == again["compatibility_key"]
    assert recorded["player_brief_sha256"] == again["player_brief_sha256"]


async def test_the_match_opens_in_the_app_with_its_service_map(race):
    output, _, _ = race
    app = replay_app(output)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        maps = {t: rendered(app.screen.query_one(f"#pane-{t} ServiceMap", ServiceMap)) for t in TERRITORIES}
    assert "Surge Service" in maps["surge-one"] and "Priority Ledger" in maps["surge-one"]
    assert maps["surge-one"].count("✓") == 6 and "✗" not in maps["surge-one"]
    assert "Priority Ledger" not in maps["surge-two"]  # fog: never evaluated there, still unmapped
