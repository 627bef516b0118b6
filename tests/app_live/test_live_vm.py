"""A full First Build race on real VMs (TCG), watched and steered from the app (Pilot).

The operator pauses and resumes the whole match, then retries a passed
milestone; the match directory must hold those operator events, load as a
replay, and reduce to its own world.json. Slow by nature: three guests boot
and the winner's guest reboots (several minutes on 2 cores).
"""

from __future__ import annotations

import json
import subprocess

import pytest
from textual.widgets import OptionList

from aoe_tui.app.screens.dialogs import ConfirmScreen, PickerScreen
from aoe_tui.app.live_app import LiveApp
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.ports import port_is_free
from aoe_tui.store.saved_match import load_match
from tests.app_live.live_match import until
from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena

pytestmark = pytest.mark.vm
BASE_PORT = 27500  # this suite's range: 27500-27539
BOOT_SECONDS = 600
RACE_SECONDS = 1800


def passed(app: LiveApp, territory: str, milestone: str) -> bool:
    state = app.runner.world.territories.get(territory)
    return state is not None and state.milestones.get(milestone) is not None and state.milestones[milestone].passed


async def test_a_real_match_from_the_app_paused_resumed_and_retried(tmp_path):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    assert all(port_is_free(port) for port in range(BASE_PORT, BASE_PORT + 6))
    manifest = write_arena(tmp_path, arena_data(duration_seconds=1500))
    output = tmp_path / "vm-app-match"
    runner = MatchRunner(manifest, output, LibvirtProvider(base_port=BASE_PORT), ProcessLauncher(), drain_seconds=5)
    app = LiveApp(runner)
    async with app.run_test(size=(160, 48)) as pilot:
        await until(
            pilot, lambda: isinstance(app.screen, LiveMatchScreen) or app.engine_error is not None, BOOT_SECONDS
        )
        assert app.engine_error is None
        await until(pilot, lambda: passed(app, "builder-one", "service-up"), RACE_SECONDS)
        await pilot.press("p", "y")
        await until(pilot, lambda: app.runner.world.paused, 120)
        screen = app.screen
        assert screen.check_action("resume_match", ()) is None or screen.pending_operation is None
        await until(pilot, lambda: screen.pending_operation is None, 600)  # a reboot check may be settling
        await pilot.pause(3)
        await pilot.press("r")
        await until(pilot, lambda: not app.runner.world.paused, 120)
        # builder-two keeps racing for 30 points until the oracle wins: its passed service-up is there to retry
        await until(pilot, lambda: passed(app, "builder-two", "service-up") or not app.engine_running, RACE_SECONDS)
        assert app.engine_running
        await pilot.press("2", "y")
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        picker.query_one(OptionList).highlighted = next(
            i for i, label in enumerate(picker.labels) if label.startswith("service-up")
        )
        await pilot.press("enter")
        assert isinstance(app.screen, ConfirmScreen)  # service-up has passed: re-checking may revoke it
        await pilot.press("y")
        await until(pilot, lambda: not app.engine_running, RACE_SECONDS)
        assert app.engine_error is None
        await pilot.press("q")
        await until(pilot, lambda: not app.is_running, 30)
    match = load_match(output)
    kinds = [event.kind for event in match.events]
    assert {"match_paused", "match_resumed", "milestone_retry_requested"} <= set(kinds)
    assert match.world.winner == "builder-one" and match.world.match_state == "finished"
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    assert match.tool_trace("oracle"), "the oracle's live tool trace was recorded"
