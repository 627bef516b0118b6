"""The Primary Failover arena on real VMs: one 3-territory race, the oracle against two flawed builders.

One race per module (every TCG boot is ~20-35 s): the referee provisions the
guests (the seed, the replica on 8082, the proxy on 8080 aimed at the dead
8081, the immutable arena programs) before any agent starts; the oracle must
be durable with full points, the builder that switches before promoting must
stop at reads-restored (its replica still says `replica`) and the one that
never fences at old-primary-fenced. The operator holds the oracle's host
reboot until both have failed with those details, so both outcomes are
observed; meanwhile it checks on a booted guest that the arena's proxy cannot
be edited. The saved match then opens in the app with its service map.
"""

from __future__ import annotations

import asyncio
import json

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
ARENA = PROJECT / "arenas" / "primary-failover" / "arena.toml"
BASE_PORT = 30900  # this module's loopback range: 30900-30905
UNPROMOTED = "GET /role through the proxy returned body 'replica', expected 'primary'"
UNFENCED = "/var/lib/failover/primary.fenced is missing in the guest (the old primary was never fenced)"
TERRITORIES = ("failover-one", "failover-two", "failover-three")
EDIT_PROXY = "echo '# edited' >> /usr/local/lib/aoe/failover-proxy.py"


async def _operate(runner: MatchRunner, updates: asyncio.Queue, seen: dict) -> None:
    """Hold the oracle's reboot until both flawed builders failed where their mistakes show."""
    async for kind, where, f in race_events(updates):
        if kind == "agent_started" and "hold" not in seen:
            seen["hold"] = runner.pause_milestone("host-reboot", "failover-one")
        elif kind == "milestone_failed" and where == ("failover-two", "reads-restored"):
            if UNPROMOTED in f["detail"] and "unpromoted" not in seen:
                seen["unpromoted"] = f["detail"]
                seen["edit"] = await runner.referee.hosts["failover-two"].run(EDIT_PROXY, 30)
        elif kind == "milestone_failed" and where == ("failover-three", "old-primary-fenced"):
            seen.setdefault("unfenced", f["detail"])
        if "unpromoted" in seen and "unfenced" in seen and "released" not in seen:
            seen["released"] = runner.resume_milestone("host-reboot", "failover-one")


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    seen: dict = {}
    output, wall = operated_race(
        tmp_path_factory, "failover", ARENA, BASE_PORT, lambda runner, updates: _operate(runner, updates, seen)
    )
    print(f"\nreal primary-failover race: {wall:.0f} s wall")
    return output, load_match(output), seen


def test_the_oracle_is_durable_with_full_points(race):
    _, match, seen = race
    assert seen["hold"] and seen["released"]
    world = match.world
    assert world.winner == "failover-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["failover-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    assert oracle.milestones["failed-primary-preserved"].evidence == {
        "failed_primary": 8081,
        "listening": False,
        "preserved": True,
    }
    assert oracle.milestones["old-primary-fenced"].evidence == {
        "old_port": 8081,
        "old_primary": "fenced",
        "promoted_port": 8082,
    }
    reboot = oracle.milestones["host-reboot"].evidence
    assert reboot["reboot"] is True and reboot["role"] == "primary" and reboot["old_primary"] == "fenced"
    assert reboot["record"] == oracle.milestones["writes-restored"].evidence["record"]
    assert world.infrastructure_failures == 0


def test_switching_before_promoting_stops_at_reads_restored(race):
    _, match, _ = race
    hasty = match.world.territories["failover-two"]
    assert hasty.milestones["failed-primary-preserved"].passed and not hasty.milestones["reads-restored"].passed
    assert hasty.milestone_points == 5
    details = failure_details(match, "failover-two", "reads-restored")  # 502 until it switched, then the role
    assert details[-1] == f"existing reads are not restored through a promoted primary: {UNPROMOTED}"
    assert all(d.startswith("existing reads are not restored through a promoted primary: GET /") for d in details)


def test_never_fencing_stops_at_old_primary_fenced(race):
    _, match, _ = race
    unfenced = match.world.territories["failover-three"]
    assert unfenced.milestones["reads-restored"].passed and not unfenced.milestones["old-primary-fenced"].passed
    assert unfenced.milestone_points == 25
    assert set(failure_details(match, "failover-three", "old-primary-fenced")) == {
        f"the old primary is not durably fenced behind the promoted replica: {UNFENCED}"
    }


def test_the_arenas_proxy_cannot_be_edited_in_the_guest(race):
    _, _, seen = race
    edit = seen["edit"]
    assert edit.exit_status != 0 and "Operation not permitted" in edit.stderr


def test_the_log_reduces_to_world_json_and_agents_read_the_contract(race):
    output, match, _ = race
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    kinds = [e.kind for e in match.events]
    assert kinds.index("match_state_changed") < kinds.index("agent_started")
    instruction = (output / "agents" / "failover-one-agent" / "instruction.md").read_text()
    assert instruction.startswith("Recover the stateful primary failure in the contract appended below.")
    assert (ARENA.parent / "CONTRACT.md").read_text().strip() in instruction and "900 seconds" in instruction
    recorded = json.loads((output / "match.json").read_text())
    again = provenance(load_manifest(ARENA), ARENA)
    assert recorded["compatibility_key"] == again["compatibility_key"]
    assert recorded["provisioning_sha256"] == again["provisioning_sha256"]


async def test_the_match_opens_in_the_app_with_its_service_map(race):
    output, _, _ = race
    app = replay_app(output)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        maps = {t: rendered(app.screen.query_one(f"#pane-{t} ServiceMap", ServiceMap)) for t in TERRITORIES}
    assert "Client" in maps["failover-one"] and "Replica" in maps["failover-one"]
    # Passed milestones' nodes: all six for the oracle; the flawed builders' stuck node is failed (or, if the
    # race ended mid-check, evaluating), and nothing after it is coloured at all.
    assert {t: text.count("✓") for t, text in maps.items()} == {
        "failover-one": 6,
        "failover-two": 1,
        "failover-three": 2,
    }
    assert "✗" not in maps["failover-one"] and all(maps[t].count("✗") <= 1 for t in TERRITORIES[1:])
