"""libvirtd gone for good mid-race (past the hypervisor's reconnect bound), through the runner on scripted
territories: the match is aborted as the arena's infrastructure failure naming libvirt, and torn down."""

from __future__ import annotations

import pytest

from aoe_tui.engine.runner import InfrastructureLost, MatchRunner
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_provider import ScriptedLauncher
from tests.engine.helpers import ARENA, RACE
from tests.engine.watched_provider import WatchedProvider

GONE = "libvirtd at qemu:///system (socket /var/run/libvirt/libvirt-sock) stayed unreachable for 60 s"


async def test_libvirt_gone_past_the_bound_aborts_the_match_naming_libvirt(tmp_path) -> None:
    provider = WatchedProvider(dict(RACE))  # its libvirt lost (as LibvirtProvider reports it) once agents run
    runner = MatchRunner(ARENA, tmp_path / "match", provider, ScriptedLauncher(), source=ManualSource())
    assert provider.on_infrastructure_lost == runner.infrastructure_lost

    def lose(update) -> None:
        if getattr(update, "kind", None) == "agent_started" and provider.on_infrastructure_lost is not None:
            provider.on_infrastructure_lost("libvirt", GONE)

    runner.subscribe(lose)
    with pytest.raises(InfrastructureLost, match="stayed unreachable"):
        await runner.run()
    assert provider.torn_down
    match = load_match(tmp_path / "match")
    assert match.world.match_state == "aborted" and match.world.winner is None
    failures = [(e.component, e.source, e.detail) for e in match.events if e.kind == "infrastructure_failure"]
    assert failures == [("libvirt", "arena", GONE)]
    assert match.events[-1].kind == "match_state_changed" and GONE in match.events[-1].to_json()["reason"]
