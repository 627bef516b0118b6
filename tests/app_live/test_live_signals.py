"""The live app stopped from outside: SIGTERM/SIGHUP, and a crash of the UI itself.

Real signals to this process while the app (pilot) runs a scripted match:
the log ends in `aborted` naming the cause, every territory is torn down
before the app leaves, and a crashing widget is recorded as a crash, not as
an operator's abort.
"""

from __future__ import annotations

import os
import signal

import pytest

from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from tests.app_live.live_match import hold_at, live_app, until

SIZE = (120, 36)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_aborts_naming_it_tears_down_and_leaves(tmp_path, signum):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    provider = app.runner.provider
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 12)
        os.kill(os.getpid(), signum)
        os.kill(os.getpid(), signum)  # a second one must not cut the teardown short
        await until(pilot, lambda: not app.is_running)
    assert app.stopped_by_signal == signum
    assert provider.hosts == {}
    last = load_match(output).events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert signal.Signals(signum).name in last["reason"]


async def test_a_crash_of_the_ui_is_recorded_as_the_crash(tmp_path):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    provider = app.runner.provider
    with pytest.raises(RuntimeError, match="widget exploded"):
        async with app.run_test(size=SIZE) as pilot:
            await hold_at(pilot, source, 12)

            def explode() -> None:
                raise RuntimeError("widget exploded")

            app.call_later(explode)
            await until(pilot, lambda: not app.is_running)
    assert provider.hosts == {}
    last = load_match(output).events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert "the app crashed: widget exploded" in last["reason"]
