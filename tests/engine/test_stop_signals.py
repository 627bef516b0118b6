"""SIGTERM and SIGHUP end a match as Ctrl-C does: `aborted` naming the signal, teardown, 128 + signum.

Real signals, sent to this very process while a scripted match runs through
the same coroutine the headless CLI uses.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from aoe_tui.cli.run_commands import run_until_signalled
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
from aoe_tui.engine.stop_signals import exit_status
from aoe_tui.store.saved_match import load_match
from tests.engine.helpers import ARENA, NEVER_READY, TERRITORIES


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
async def test_a_signal_mid_match_records_aborted_with_its_name_and_tears_down(tmp_path, signum):
    provider = ScriptedProvider({t: NEVER_READY for t in TERRITORIES})  # the match would run for ten minutes
    runner = MatchRunner(ARENA, tmp_path / "match", provider, ScriptedLauncher({}), drain_seconds=1)
    updates = runner.queue()
    match = asyncio.ensure_future(run_until_signalled(runner))
    while getattr(await updates.get(), "kind", None) != "milestone_failed":
        pass
    os.kill(os.getpid(), signum)
    os.kill(os.getpid(), signum)  # a second one must not cut the teardown short
    world, received = await asyncio.wait_for(match, 30)
    assert received == signum and exit_status(signum) == 128 + signum
    assert world.match_state == "aborted"
    assert provider.hosts == {}  # torn down
    saved = load_match(tmp_path / "match")
    last = saved.events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert signal.Signals(signum).name in last["reason"]
    assert saved.world.match_state == "aborted"
    # the handlers are gone again: the loop no longer owns the signal
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.default_int_handler) or signum != signal.SIGTERM
