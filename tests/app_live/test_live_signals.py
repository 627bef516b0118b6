"""The live app stopped from outside: SIGTERM/SIGHUP, and a crash of the UI itself.

Real signals to this process while the app (pilot) runs a scripted match:
the log ends in `aborted` naming the cause, every territory is torn down
before the app leaves, and a crashing widget is recorded as a crash, not as
an operator's abort.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

import pytest

from aoe_tui.engine.stop_signals import exit_status
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from tests.app_live.live_match import hold_at, live_app, until
from tests.fixture_paths import PROJECT

SIZE = (120, 36)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_aborts_naming_it_tears_down_and_leaves(tmp_path, signum):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    provider = app.runner.provider
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
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
            await hold_at(pilot, source, 2)

            def explode() -> None:
                raise RuntimeError("widget exploded")

            app.call_later(explode)
            await until(pilot, lambda: not app.is_running)
    assert provider.hosts == {}
    last = load_match(output).events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert "the app crashed: widget exploded" in last["reason"]


# The child's grace before it ends itself is cut from 10 s to 1 s: after SIGHUP Textual's exit blocks on the
# closed terminal, so every run of this test waited out the whole grace; how long it is is not the point here.
CHILD = """
import sys
from pathlib import Path
from aoe_tui.app import live_app as live_app_module
from aoe_tui.cli.app_launch import run_live
live_app_module.EXIT_GRACE_SECONDS = 1
from aoe_tui.testing.clock import ManualSource
from tests.app_live.live_match import live_app
sys.exit(run_live(live_app(Path(sys.argv[1]), ManualSource(limit=2)).runner))
"""


def test_closing_the_terminal_ends_the_process_once_the_guests_are_gone(tmp_path):
    """A real pty closed under the live app (the kernel's SIGHUP): aborted, torn down, and the process
    itself gone, although the terminal it would restore no longer exists."""
    output = tmp_path / "m"
    pid, master = pty.fork()
    if pid == 0:  # the child: the live app on this pty, as `aoe run` starts it
        env = {**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(PROJECT)}
        env.pop("COLUMNS", None), env.pop("LINES", None)
        os.chdir(PROJECT)
        os.execve(sys.executable, [sys.executable, "-c", CHILD, str(output)], env)
    try:
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 36, 120, 0, 0))
        screen = b""
        deadline = time.monotonic() + 90
        while b"Pause match" not in screen and time.monotonic() < deadline:
            if select.select([master], [], [], 1)[0]:
                screen = (screen + os.read(master, 65536))[-200_000:]
        assert b"Pause match" in screen, screen[-2000:]
        os.close(master)  # the terminal closes: SIGHUP to the app
        deadline = time.monotonic() + 60
        status = None
        while status is None and time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            status = raw if done else None
            time.sleep(0.2)
        assert status is not None, "the app's process outlived its closed terminal"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    assert os.waitstatus_to_exitcode(status) == exit_status(signal.SIGHUP)
    last = load_match(output).events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted" and "SIGHUP" in last["reason"]
