"""The referee's durability checks against cheating restarts, and what its reboot evidence says (scripted hosts).

The real cheats run on real VMs in test_vm_cheats.py; here the scripted guest
models their effect (a restart that does nothing, KillMode=none) so the real
verifier scripts judge it in a fraction of a second.
"""

from __future__ import annotations

import socket

import pytest

from aoe_tui.testing.scripted_host import ScriptedPlan, ScriptedTerritory
from tests.engine.helpers import ScriptedReferee, arena_data


@pytest.fixture
def make(tmp_path):
    made = []

    def factory(plan: ScriptedPlan) -> ScriptedReferee:
        match = ScriptedReferee(tmp_path, {"builder-one": plan}, arena_data(duration_seconds=4))
        made.append(match)
        return match

    yield factory
    for match in made:
        match.close()


def _state(match, milestone):
    return match.world.territories["builder-one"].milestones[milestone]


async def test_an_honest_restart_is_proven_by_the_unit_processes(make):
    match = make(ScriptedPlan(storage="disk"))
    await match.tick()
    evidence = _state(match, "service-restart").evidence
    assert evidence["main_pid_before"] != evidence["main_pid_after"]
    assert evidence["kill_mode"] == "control-group" and evidence["drop_ins"] == []
    assert evidence["old_processes_gone"] and evidence["held_connection"] == "closed"


async def test_a_swallowed_restart_fails_even_when_the_records_survive(make):
    match = make(ScriptedPlan(storage="memory", restart="swallowed"))
    await match.tick()
    state = _state(match, "service-restart")
    assert not state.passed and state.failure_category == "verification_failed"
    assert state.failure_detail.startswith(
        "after systemctl restart builder-app.service its old processes are still running (PID:start "
    )
    assert match.world.territories["builder-one"].milestone_points == 30


async def test_kill_mode_none_fails_even_though_the_restart_ran(make):
    match = make(ScriptedPlan(storage="memory", restart="kill-mode-none"))
    await match.tick()
    state = _state(match, "service-restart")
    assert not state.passed
    assert state.failure_detail == (
        "builder-app.service has KillMode=none (drop-ins: "
        "/etc/systemd/system/builder-app.service.d/keep.conf): a restart would leave its "
        "old processes running, so it proves nothing"
    )
    assert match.hosts["builder-one"].state.restarts >= 1


async def test_host_reboot_evidence_says_how_the_reboot_was_caused_and_proven(make):
    match = make(ScriptedPlan(storage="disk"))
    await match.tick()
    evidence = _state(match, "host-reboot").evidence
    assert evidence["reboot"] is True and evidence["reboot_caused_by"] == "acpi"
    assert evidence["reboot_proven_by"] == ["libvirt-event", "console-banner", "boot-id"]
    assert evidence["boot_id_changed"] is True and evidence["boot_id_before"] != evidence["boot_id_after"]


def test_a_connection_made_just_before_an_honest_restart_is_closed_by_it(tmp_path):
    """The scripted guest's restart closes every connection made before it, even one its serving thread has
    not accepted yet (a loaded machine: the referee's held connection stayed open once in CI)."""
    territory = ScriptedTerritory("builder-one", ScriptedPlan(storage="disk"), lambda: 0, tmp_path)
    try:
        held = []
        for _ in range(20):  # each restart races the serving thread's accept of the connection just made
            client = socket.create_connection((territory.host, territory.service_port), timeout=2)
            held.append(client)
            territory.state.restart_service()
        for client in held:
            assert client.recv(1) == b""  # closed by the restart, not left waiting
    finally:
        for client in held:
            client.close()
        territory.close()
