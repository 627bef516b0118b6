"""`aoe demo` in a real terminal: tmux runs it at 160x48 on real VMs; the race starts, a winner
appears, quitting leaves a replayable match directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import uuid

import pytest

from aoe_tui.domain.reducer import reduce
from aoe_tui.runtime.ports import port_is_free
from aoe_tui.store.saved_match import load_match
from tests.app.test_tmux import AOE, SOCKET, tmux, wait_for
from tests.conftest import PROJECT

pytestmark = [pytest.mark.tmux, pytest.mark.vm,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]
BASE_PORT = 27520  # this suite's range: 27500-27539
BOOT_SECONDS = 600
RACE_SECONDS = 1800


def test_the_demo_races_three_real_guests_and_quits_leaving_a_replayable_match(tmp_path):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    assert all(port_is_free(port) for port in range(BASE_PORT, BASE_PORT + 6))
    output = tmp_path / "demo-match"
    session = f"aoe-demo-{uuid.uuid4().hex[:8]}"
    tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "48",
         f"cd {tmp_path} && env -u COLUMNS -u LINES {AOE} demo --output {output} --base-port {BASE_PORT} "
         f"--drain-seconds 5; sleep 60")
    started = time.monotonic()
    try:
        wait_for(session, "PREPARING", "SSH preflight", timeout=60)
        screen = wait_for(session, "LIVE", "builder-one", "builder-three", "Pause match", timeout=BOOT_SECONDS)
        assert "First Build" in screen and "oracle" in screen
        racing = time.monotonic()
        wait_for(session, "winner builder-one", timeout=RACE_SECONDS)
        print(f"\ndemo (warm image): race on screen after {racing - started:.0f} s, "
              f"winner after {time.monotonic() - started:.0f} s")
        deadline = time.monotonic() + 120  # the post-match drain ends on its own within seconds
        while "post_match_drain_finished" not in (output / "events.jsonl").read_text() and time.monotonic() < deadline:
            time.sleep(1)
        tmux("send-keys", "-t", session, "q")
        screen = wait_for(session, "match directory:", timeout=120)
        assert "finished, winner: builder-one" in screen.replace("\n", "")  # a long path wraps the line
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    match = load_match(output)
    assert match.world.winner == "builder-one"
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    assert not list(output.glob("territories/*/overlay.qcow2"))  # the guests' disks are gone with the guests
