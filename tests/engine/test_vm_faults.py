"""Faults under a running match on real guests (issue 31): libvirtd restarted mid-race, libvirtd gone for longer
than the referee waits for it, and the referee killed with SIGKILL then a second match started.

Each test plays a short two-guest First Build (oracle against the in-memory builder) through `aoe run
--headless`, as a user would; a race takes two to three minutes under TCG.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.engine.vm_cli import assert_replayable, domains_of, only_match_in, short_arena, start_headless, wait_for_line
from tests.fixture_paths import PROJECT

pytestmark = pytest.mark.vm
MATCH_TIMEOUT_S = 900
SERVICES = str(PROJECT / "scripts" / "services")
DAEMON_DOWN_S = 5


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    subprocess.run([SERVICES], check=True)
    # Room for a slow oracle on a loaded machine (a guest command can take 30 s there): it ends when one is durable.
    return short_arena(tmp_path_factory.mktemp("arena"), duration_seconds=300)


def stop_libvirtd() -> None:
    """SIGTERM libvirtd and wait until it is gone (its guests' QEMU processes live on)."""
    pids = subprocess.run(["pgrep", "-x", "libvirtd"], capture_output=True, text=True, check=True).stdout.split()
    subprocess.run(["kill", "-TERM", *pids], check=True)
    deadline = time.monotonic() + 30
    while subprocess.run(["pgrep", "-x", "libvirtd"], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "libvirtd did not stop on SIGTERM"
        time.sleep(0.2)


def restart_libvirtd() -> None:
    """libvirtd stopped, then started again DAEMON_DOWN_S later as scripts/services does (no systemd here)."""
    stop_libvirtd()
    time.sleep(DAEMON_DOWN_S)
    subprocess.run([SERVICES], check=True)


def test_libvirtd_restarted_mid_race_the_oracle_still_wins_and_the_outage_is_noted(arena, tmp_path):
    process = start_headless(arena, tmp_path)
    try:
        seen = wait_for_line(process, "started adapter", timeout=MATCH_TIMEOUT_S)
        restart_libvirtd()
        output, _ = process.communicate(timeout=MATCH_TIMEOUT_S)
    finally:
        subprocess.run([SERVICES], check=True)  # never leave the machine without libvirtd
        process.kill()
    output = "".join(seen) + output
    assert process.returncode == 0, output[-3000:]
    assert "Traceback" not in output and "libvirtError" not in output, output[-3000:]
    match_dir = only_match_in(tmp_path)
    world = assert_replayable(match_dir)
    assert world["match_state"] == "finished" and world["winner"] == "builder-one", output[-3000:]
    assert world["territories"]["builder-one"]["milestone_points"] == 100
    events = [json.loads(line) for line in (match_dir / "events.jsonl").read_text().splitlines()]
    outages = [e for e in events if e["kind"] == "infrastructure_failure" and e["component"] == "libvirt"]
    assert len(outages) == 1 and "lost and opened again after" in outages[0]["detail"], outages
    assert domains_of(match_dir) == []


def test_libvirtd_gone_past_the_bound_aborts_naming_libvirt_and_kills_its_guests(arena, tmp_path, monkeypatch):
    monkeypatch.setenv("AOE_LIBVIRT_RECONNECT_SECONDS", "10")
    process = start_headless(arena, tmp_path)
    try:
        seen = wait_for_line(process, "started adapter", timeout=MATCH_TIMEOUT_S)
        match_dir = only_match_in(tmp_path)
        guests = domains_of(match_dir)
        stop_libvirtd()
        output, _ = process.communicate(timeout=120)  # the bound, then the teardown: no libvirtd is needed for it
        running = [g for g in guests if subprocess.run(["pgrep", "-f", f"guest={g},"]).returncode == 0]
    finally:
        subprocess.run([SERVICES], check=True)
        process.kill()
    output = "".join(seen) + output
    assert process.returncode == 2 and "Traceback" not in output, output[-3000:]
    assert output.splitlines()[-1].startswith("aoe: libvirtd at qemu:///system"), output[-2000:]
    assert "stayed unreachable for 10 s" in output.splitlines()[-1]
    assert len(guests) == 2 and running == [], f"{running} still running while libvirtd was away"
    world = assert_replayable(match_dir)
    assert world["match_state"] == "aborted" and world["winner"] is None
    events = [json.loads(line) for line in (match_dir / "events.jsonl").read_text().splitlines()]
    assert [e["component"] for e in events if e["kind"] == "infrastructure_failure"] == ["libvirt"]
    deadline = time.monotonic() + 30  # libvirtd, started again, finds the killed guests stopped and forgets them
    while domains_of(match_dir) and time.monotonic() < deadline:
        time.sleep(1)
    assert domains_of(match_dir) == []


def test_a_killed_referees_guests_are_reaped_by_the_next_run_which_says_so_and_finishes(arena, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    killed = start_headless(arena, first)
    wait_for_line(killed, "started adapter", timeout=MATCH_TIMEOUT_S)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=60)
    stranded = domains_of(only_match_in(first))
    assert len(stranded) == 2, stranded
    process = start_headless(arena, second)
    output, _ = process.communicate(timeout=MATCH_TIMEOUT_S)
    assert process.returncode == 0, output[-3000:]
    reaped = [line for line in output.splitlines() if "reaped" in line]
    assert len(reaped) == 1 and all(name in reaped[0] for name in stranded), output[-3000:]
    assert f"pid {killed.pid}" in reaped[0]
    lines = output.splitlines()
    assert lines.index(reaped[0]) < min(i for i, line in enumerate(lines) if "SSH preflight passed" in line)
    assert assert_replayable(only_match_in(second))["match_state"] == "finished"
    assert domains_of(only_match_in(first)) == [] and domains_of(only_match_in(second)) == []
