"""The README's main command as a newcomer runs it, in a real terminal on real VMs.

A fresh clone of this repository; `./scripts/demo` from its root with no
options (bootstrap, default output folder `./matches`, ports chosen
automatically). The race starts, a winner appears, quitting leaves a
replayable match. Then the ways a live app is stopped from outside: the same
command again right away, its terminal closed mid-race (SIGHUP), and
`aoe run` in the app sent SIGTERM: each ends in `aborted` naming the signal,
with no guest left, within a minute.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest

from tests.app.test_tmux import open_terminal, tmux, wait_for
from tests.fixture_paths import PROJECT
from tests.engine.vm_cli import assert_replayable, domains_of, short_arena

pytestmark = [
    pytest.mark.tmux,
    pytest.mark.vm,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
BOOT_SECONDS = 900  # includes the clone's bootstrap (a fresh .venv)
RACE_SECONDS = 1200  # the demo's clock is 10 minutes; a finished match without a winner fails at once
STOP_SECONDS = 60


SESSIONS: list[str] = []  # the terminals this module opened


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone of what is committed, as a newcomer gets it."""
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    root = tmp_path_factory.mktemp("newcomer") / "aoe_tui"
    subprocess.run(["git", "clone", "--quiet", str(PROJECT), str(root)], check=True)
    yield root
    for session in SESSIONS:  # each terminal has its own tmux server
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)


def in_terminal(cwd, command: str) -> str:
    session = open_terminal("aoe-demo", command, cwd, linger=120)
    SESSIONS.append(session)
    return session


def demo_processes(clone_root) -> list[str]:
    """`aoe demo` processes of this clone still alive."""
    found = subprocess.run(["pgrep", "-f", f"{clone_root}/.venv/bin/aoe demo"], capture_output=True, text=True)
    return found.stdout.split()


def newest_match(clone_root):
    return max((clone_root / "matches").iterdir(), key=lambda p: p.stat().st_mtime)


def wait_until_stopped(match_dir, signum: int) -> dict:
    """Within STOP_SECONDS: the log ends `aborted` naming the signal and no guest of the match is left."""
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline:
        if (match_dir / "world.json").exists() and not domains_of(match_dir):
            break
        time.sleep(1)
    last = json.loads((match_dir / "events.jsonl").read_text().splitlines()[-1])
    assert last.get("to") == "aborted" and signal.Signals(signum).name in last.get("reason", ""), last
    assert domains_of(match_dir) == []
    return assert_replayable(match_dir)


def test_the_demo_from_a_fresh_clone_races_real_guests_and_quits_leaving_a_replayable_match(clone):
    session = in_terminal(clone, "./scripts/demo")
    try:
        started = time.monotonic()
        wait_for(session, "PREPARING", timeout=BOOT_SECONDS)
        screen = wait_for(session, "LIVE", "builder-one", "builder-three", "Pause match", timeout=BOOT_SECONDS)
        assert "First Build" in screen and "oracle" in screen
        racing = time.monotonic()
        wait_for(session, "winner builder-one", "· finished ·", timeout=RACE_SECONDS, needs=any)
        time.sleep(2)  # the terminal is drawn in pieces
        screen = tmux(session, "capture-pane", "-p", "-t", session)
        assert "winner builder-one" in screen, f"the demo finished without the oracle winning:\n{screen}"
        print(
            f"\ndemo from a fresh clone: race on screen after {racing - started:.0f} s, "
            f"winner after {time.monotonic() - started:.0f} s"
        )
        match_dir = newest_match(clone)
        deadline = time.monotonic() + 120  # the post-match drain ends on its own
        while (
            "post_match_drain_finished" not in (match_dir / "events.jsonl").read_text() and time.monotonic() < deadline
        ):
            time.sleep(1)
        tmux(session, "send-keys", "-t", session, "q")
        screen = wait_for(session, "match directory:", timeout=120)
        assert "finished, winner: builder-one" in screen.replace("\n", "")  # a long path wraps the line
        assert match_dir.parent == clone / "matches"
        assert assert_replayable(match_dir)["winner"] == "builder-one"
        assert not list(match_dir.glob("territories/*/overlay.qcow2"))  # the guests' disks went with the guests
        assert domains_of(match_dir) == []
    except BaseException:
        tmux(session, "kill-session", "-t", session)  # a failed demo must not race on into the next test
        raise


def test_the_demo_again_right_away_then_its_terminal_closed_mid_race(clone):
    before = set((clone / "matches").iterdir())
    already = set(demo_processes(clone))  # an earlier test's demo that failed mid-way is not this one
    session = in_terminal(clone, "./scripts/demo")
    wait_for(session, "LIVE", "Pause match", timeout=BOOT_SECONDS)
    (match_dir,) = set((clone / "matches").iterdir()) - before
    time.sleep(12)
    tmux(session, "kill-session", "-t", session)  # the terminal goes away: SIGHUP
    assert wait_until_stopped(match_dir, signal.SIGHUP)["match_state"] == "aborted"
    deadline = time.monotonic() + STOP_SECONDS
    while set(demo_processes(clone)) - already and time.monotonic() < deadline:
        time.sleep(1)
    assert set(demo_processes(clone)) - already == set(), "the demo's process outlived its closed terminal"


def test_sigterm_to_the_live_app_aborts_naming_it(clone, tmp_path):
    arena = short_arena(tmp_path, duration_seconds=600)
    session = in_terminal(tmp_path, f"{clone}/.venv/bin/aoe run {arena}")
    wait_for(session, "LIVE", "Pause match", timeout=BOOT_SECONDS)
    match_dir = next((tmp_path / "matches").iterdir())
    shell = tmux(session, "display-message", "-p", "-t", session, "#{pane_pid}").strip()
    aoe = subprocess.run(["pgrep", "-P", shell], capture_output=True, text=True, check=True).stdout.split()[0]
    subprocess.run(["kill", "-TERM", aoe], check=True)
    assert wait_until_stopped(match_dir, signal.SIGTERM)["match_state"] == "aborted"
    wait_for(session, "aborted", timeout=STOP_SECONDS)  # the app left and said so on the terminal
