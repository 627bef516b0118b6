"""`aoe series` in the app in a real terminal: tmux runs the command at 160x48 on scripted rounds.

The child installs the round factory the headless tests use (`ScriptedRounds`) and calls the real
`aoe` entry point. Round 1 is held at one second of match time until the test, having seen its race
and opened the series view, touches a gate file; then the series runs to its end on its own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from aoe_tui.analysis.standings import standings_report
from tests.app.test_tmux import open_terminal, tmux, wait_for
from tests.fixture_paths import PROJECT
from tests.series.helpers import quick_arena

pytestmark = [pytest.mark.tmux, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

CHILD = """
import math
import sys
import threading
import time
from pathlib import Path

from aoe_tui.cli import series_commands
from aoe_tui.cli.main import main
from tests.series.helpers import ScriptedRounds

arena, output, gate = map(Path, sys.argv[1:])
rounds = ScriptedRounds(arena, held={1: 1.0})


def let_round_one_go_on() -> None:
    while not gate.exists():
        time.sleep(0.1)
    rounds.sources[1].limit = math.inf


threading.Thread(target=let_round_one_go_on, daemon=True).start()
series_commands.real_round_factory = lambda args, manifest, pool=None: rounds
sys.exit(main(["series", str(arena), "--output", str(output), "--rounds", "2"]))
"""


def test_aoe_series_runs_in_the_app_shows_the_series_view_and_finishes(tmp_path):
    arena, output, gate = quick_arena(tmp_path / "arena"), tmp_path / "series", tmp_path / "go"
    child = tmp_path / "child.py"
    child.write_text(CHILD)
    # The cache stays in tmp_path.
    command = (
        f"PYTHONPATH={PROJECT} XDG_CACHE_HOME={tmp_path / 'cache'} {sys.executable} {child} {arena} {output} {gate}"
    )
    session = open_terminal("aoe-series", command, PROJECT, linger=30)
    try:
        wait_for(session, "● LIVE", "round-001", "Pause match", "s Series", timeout=120)
        tmux(session, "send-keys", "-t", session, "s")
        screen = wait_for(session, "What comes next", "2 rounds to go", timeout=30)
        lines = screen.splitlines()
        assert any("playing" in line and "amnesiac@builder-two" in line for line in lines), screen
        assert any("next" in line and "amnesiac@builder-three" in line for line in lines), screen
        gate.touch()
        screen = wait_for(session, "series complete", "2/2 rounds decided", timeout=120)
        checkpoint = json.loads((output / "series.json").read_text())
        assert checkpoint["rounds_completed"] == 2
        assert checkpoint["standings"] == standings_report(output)["standings"]
        tmux(session, "send-keys", "-t", session, "q")
        wait_for(session, "exit status 0", f"series folder: {output}", timeout=30)
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True)
