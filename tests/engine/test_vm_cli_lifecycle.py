"""Whole headless matches on real guests as a user runs them: side by side, then one right after,
and stopped by SIGTERM or SIGHUP (systemd, CI runners, a closed SSH session).

Every run uses the defaults: output under ./matches of its working folder, ports chosen
automatically. Guests take ~35 s to boot under TCG; each match here lasts 45 s on its clock.
"""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from aoe_tui.engine.stop_signals import exit_status
from tests.fixture_paths import PROJECT
from tests.engine.vm_cli import assert_replayable, domains_of, only_match_in, short_arena, start_headless, wait_for_line

pytestmark = pytest.mark.vm
MATCH_TIMEOUT_S = 900


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    return short_arena(tmp_path_factory.mktemp("arena"))


def finished_match(process: subprocess.Popen, folder) -> dict:
    output, _ = process.communicate(timeout=MATCH_TIMEOUT_S)
    assert process.returncode == 0, output[-3000:]
    match_dir = only_match_in(folder)
    world = assert_replayable(match_dir)
    assert world["match_state"] == "finished", output[-2000:]
    assert domains_of(match_dir) == []
    return json.loads((match_dir / "ports.json").read_text())


def test_two_matches_at_once_then_one_right_after_all_finish_on_their_own_ports(arena, tmp_path):
    folders = [tmp_path / name for name in ("left", "right", "after")]
    for folder in folders:
        folder.mkdir()
    processes = [start_headless(arena, folder) for folder in folders[:2]]
    ports = [finished_match(process, folder) for process, folder in zip(processes, folders)]
    assert ports[0]["chosen"] == ports[1]["chosen"] == "automatically"
    taken = [set(p.values()) for r in ports for p in r["territories"].values()]
    assert not (taken[0] | taken[1]) & (taken[2] | taken[3])
    # Right after: the ports the referee's HTTP checks left in TIME_WAIT are free again.
    again = finished_match(start_headless(arena, folders[2]), folders[2])
    assert again["base_port"] in {p["base_port"] for p in ports}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_match_aborts_naming_it_and_strands_nothing(arena, tmp_path, signum):
    process = start_headless(arena, tmp_path)
    wait_for_line(process, "started adapter", timeout=MATCH_TIMEOUT_S)
    process.send_signal(signum)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == exit_status(signum), output[-2000:]
    assert signal.Signals(signum).name in output
    match_dir = only_match_in(tmp_path)
    world = assert_replayable(match_dir)
    assert world["match_state"] == "aborted"
    last = json.loads((match_dir / "events.jsonl").read_text().splitlines()[-1])
    assert last["to"] == "aborted" and signal.Signals(signum).name in last["reason"]
    assert domains_of(match_dir) == []
