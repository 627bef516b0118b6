"""A real three-round series on VMs, killed with kill -9 during round 2 and resumed by the same command.

First Build with its three built-in builders (oracle, amnesiac, tmpfs-writer) and its three seats, so
the rotation puts the oracle in every seat once: round 1 is decided and checkpointed, `kill -9` lands
while round 2 boots, `aoe doctor --clean` removes the dead run's guests, and re-running the same
command keeps round 1, sets the killed attempt aside as `round-002.interrupted-1`, plays rounds 2 and 3
and ends with a complete `series.json` whose standings equal `aoe standings`: the oracle wins from
every seat. Four rounds of TCG guests: about a quarter of an hour.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pytest

from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena
from tests.engine.vm_cli import AOE, assert_replayable, domains_of, wait_for_line

pytestmark = pytest.mark.vm
ROUND_TIMEOUT_S = 600
DURATION_S = 300  # the oracle is durable in about three minutes; the round ends at the first durable
ROUNDS = 3


def start_series(arena, output, cwd) -> subprocess.Popen:
    return subprocess.Popen(
        [*AOE, "series", str(arena), "--headless", "--output", str(output)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )


def test_kill_9_during_round_2_then_the_same_command_resumes_and_completes(tmp_path):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    (tmp_path / "arena").mkdir()
    arena = write_arena(tmp_path / "arena", arena_data(duration_seconds=DURATION_S, post_match_drain_seconds=5))
    output = tmp_path / "series"
    killed = start_series(arena, output, tmp_path)
    wait_for_line(killed, "aoe series: round 2/3 started", timeout=ROUND_TIMEOUT_S)
    wait_for_line(killed, "[r2] [setup] booting", timeout=60)
    time.sleep(3)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    checkpoint = json.loads((output / "series.json").read_text())
    assert checkpoint["rounds_completed"] == 1 and len(checkpoint["rounds"]) == 1
    subprocess.run(
        [*AOE, "doctor", "--clean"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    assert domains_of(output / "round-002") == []
    round_one = (output / "round-001" / "events.jsonl").read_bytes()

    resumed = start_series(arena, output, tmp_path)
    out, _ = resumed.communicate(timeout=ROUNDS * ROUND_TIMEOUT_S)
    assert resumed.returncode == 0, out[-3000:]
    assert "1/3 rounds already decided (kept)" in out and "kept as round-002.interrupted-1" in out
    assert (output / "round-002.interrupted-1").is_dir()
    assert (output / "round-001" / "events.jsonl").read_bytes() == round_one
    final = json.loads((output / "series.json").read_text())
    assert final["rounds_completed"] == final["rounds_requested"] == ROUNDS
    assert [r["seats"]["oracle"] for r in final["rounds"]] == ["builder-one", "builder-two", "builder-three"]
    assert [r["winner_agent"] for r in final["rounds"]] == ["oracle"] * ROUNDS, out[-3000:]
    for number in range(1, ROUNDS + 1):
        assert assert_replayable(output / f"round-00{number}")["match_state"] == "finished"
        assert domains_of(output / f"round-00{number}") == []
    printed = subprocess.run(
        [*AOE, "standings", str(output), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )
    assert json.loads(printed.stdout)["standings"] == final["standings"]
    assert final["standings"][0]["agent"] == "oracle" and final["standings"][0]["wins"] == ROUNDS
