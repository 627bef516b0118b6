"""Scale out on real guests: a second hypervisor made real on this machine, and a host that drops mid-round.

The second host is this machine behind an OpenSSH server of its own on a loopback port (its own host key, one
authorized key): libvirt is reached as `qemu+ssh://root@127.0.0.1:PORT/system`, and its guests' forwards bind
to 127.0.0.2, where nothing of the coordinator ever dials: the referee, the verifiers and the agents only know
127.0.0.1, so every check of the remote round that passes went through the link's tunnels (the sshd log names
each forwarded target). `aoe series --hosts` runs the starter arena of `aoe arena init` (2 guests):

- two rounds at once, one per host, both decided;
- a fresh two-round series in which that sshd is killed once the remote round's first milestone passed: the
  round is set aside as the host's infrastructure failure, played again on the local host, and the series
  completes.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.loopback_sshd import SSHD, loopback_sshd
from tests.fixture_paths import PROJECT

pytestmark = [pytest.mark.vm, pytest.mark.skipif(not SSHD.exists(), reason="needs OpenSSH's sshd")]

AOE = [sys.executable, "-m", "aoe_tui.cli.main"]
ENV = {**os.environ, "PYTHONPATH": str(PROJECT)}
ARENA = "arenas/scale-out/arena.toml"
REMOTE_ADDRESS = "127.0.0.2"
REMOTE_BASE_PORT = 29600
SERIES_TIMEOUT_S = 1500
CAPACITY = (2, 1536)  # one starter match (2 guests of 1 vCPU, 768 MiB) per host at a time


@pytest.fixture(scope="module")
def second_host(tmp_path_factory):
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    root = tmp_path_factory.mktemp("scale-out")
    init = subprocess.run([*AOE, "arena", "init", "scale-out"], cwd=root, env=ENV, capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    with loopback_sshd(root / "sshd") as sshd:
        vcpus, memory = CAPACITY
        (root / "hosts.toml").write_text(
            f'[[hosts]]\nname = "local"\nuri = "qemu:///system"\ncapacity = {{ vcpus = {vcpus}, memory_mib = {memory} }}\n\n'
            + sshd.hosts_entry("second", vcpus, memory, root / "second-host", REMOTE_BASE_PORT, REMOTE_ADDRESS)
        )
        yield root, sshd
    shutil.rmtree(root / "second-host", ignore_errors=True)  # its copy of the image: half a GiB


def series(root, output: str, on_line=None) -> tuple[int, list[str], float]:
    """`aoe series ARENA --headless --hosts hosts.toml --rounds 2`; `on_line(line)` sees each line as it comes."""
    started = time.monotonic()
    process = subprocess.Popen(
        [*AOE, "series", ARENA, "--headless", "--rounds", "2", "--hosts", "hosts.toml", "--output", output],
        cwd=root,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if on_line is not None:
            on_line(lines[-1])
    code = process.wait(timeout=SERIES_TIMEOUT_S)
    print(f"\n{output}: {time.monotonic() - started:.0f} s wall")
    _destroy_leftovers(process.pid)
    return code, lines, time.monotonic() - started


def _destroy_leftovers(pid: int) -> None:
    """Guests the series left running (none expected): found by the owner pid stamped on them, destroyed."""

    async def sweep() -> list[str]:
        hypervisor = await Hypervisor.connect()
        try:
            ours = [r.name for r in await hypervisor.aoe_domains() if r.owner_pid == pid]
            for name in ours:
                await hypervisor.destroy(name)
            return ours
        finally:
            await hypervisor.close()

    assert asyncio.run(sweep()) == []


def round_hosts(folder) -> list[tuple[int, str]]:
    return [(r["round"], r["host"]) for r in json.loads((folder / "series.json").read_text())["rounds"]]


@pytest.fixture(scope="module")
def concurrent(second_host):
    root, sshd = second_host
    code, lines, wall = series(root, "series-both")
    return root, sshd, code, lines, wall


def remote_round(folder) -> int:
    return next(number for number, host in round_hosts(folder) if host == "second")


def test_two_rounds_run_at_once_one_per_host_and_both_are_decided(concurrent):
    root, _, code, lines, _ = concurrent
    assert code == 0, "\n".join(lines[-60:])
    folder = root / "series-both"
    assert sorted(host for _, host in round_hosts(folder)) == ["local", "second"]
    started = [i for i, line in enumerate(lines) if " started on host " in line]
    decided = [i for i, line in enumerate(lines) if " decided in " in line]
    assert len(started) == 2 and started[1] < decided[0]  # the second round began before the first was decided
    assert any(line.startswith("aoe series: host second: uploading image") for line in lines) or any(
        "image" in line and "present" in line for line in lines
    )
    keys = set()
    for number, host in round_hosts(folder):
        match = load_match(folder / f"round-{number:03d}")
        assert match.world.match_state == "finished"
        assert match.provenance["host"]["name"] == host and match.provenance["host"]["cpu_model"]
        keys.add(match.provenance["compatibility_key"])
    assert len(keys) == 1  # where a round ran is provenance, not the contest


def test_every_check_and_agent_session_of_the_remote_round_went_through_the_tunnel(concurrent):
    root, sshd, code, lines, _ = concurrent
    assert code == 0
    folder = root / "series-both" / f"round-{remote_round(root / 'series-both'):03d}"
    guest_ports = json.loads((folder / "ports.json").read_text())["territories"]
    forwarded = sshd.forwarded()
    world = load_match(folder).world
    for territory, ports in guest_ports.items():
        assert forwarded.count((REMOTE_ADDRESS, ports["ssh"])) >= 2, territory  # the referee's and the agent's
        assert forwarded.count((REMOTE_ADDRESS, ports["service"])) >= 1, territory  # the verifiers' HTTP checks
        passed = [m for m, state in world.territories[territory].milestones.items() if state.passed]
        assert "service-up" in passed, territory  # checked through 127.0.0.1:<tunnel>, nothing else listens
    for agent in world.agents:
        instruction = (folder / "agents" / agent / "instruction.md").read_text()
        told = guest_ports[world.agents[agent].territory]["ssh"]
        assert "127.0.0.1" in instruction and f"{REMOTE_ADDRESS}" not in instruction and f" {told}" not in instruction
    consoles = [folder / "territories" / t / "console.log" for t in guest_ports]
    assert all(b"Linux version" in c.read_bytes() for c in consoles)  # fetched from the host at the end
    assert not list((root / "second-host" / "matches").iterdir())  # overlays and logs gone from the host


@pytest.fixture(scope="module")
def host_dropped(concurrent):
    root, sshd, *_ = concurrent
    remote: list[int] = []

    def watch(line: str) -> None:
        if " started on host second" in line:
            remote.append(int(line.split("round ")[1].split("/")[0]))
        if remote and line.startswith(f"[r{remote[0]}]") and "milestone_passed" in line and sshd.process.poll() is None:
            sshd.kill()  # the host drops: its link and libvirt's connection die at once, mid-round

    code, lines, wall = series(root, "series-drop", on_line=watch)
    return root, remote, code, lines


def test_a_host_killed_mid_round_is_an_infrastructure_failure_replayed_on_the_local_host(host_dropped):
    (
        root,
        remote,
        code,
        lines,
    ) = host_dropped
    assert code == 0, "\n".join(lines[-60:])
    folder = root / "series-drop"
    number = remote[0]
    assert round_hosts(folder) == [(1, "local"), (2, "local")]
    entry = next(r for r in json.loads((folder / "series.json").read_text())["rounds"] if r["round"] == number)
    assert entry["attempts"] == 1 and entry["forfeits"] == []
    assert [f["host"] for f in entry["host_failures"]] == ["second"]
    lost = load_match(folder / entry["host_failures"][0]["kept_as"])
    assert lost.world.match_state == "aborted"
    failures = [e for e in lost.events if e.kind == "infrastructure_failure"]
    assert failures and failures[0].component == "host" and failures[0].source == "arena"
    assert not any(a.failure_source == "player" for a in lost.world.agents.values())
    assert any(
        line.startswith(f"aoe series: round {number}: infrastructure failure, host second lost") for line in lines
    )
    assert load_match(folder / f"round-{number:03d}").world.match_state == "finished"
