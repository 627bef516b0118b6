"""Which aoe-* domains count as leftovers of crashed runs, and how a match reaps them before it boots."""

from __future__ import annotations

import os
import socket
import subprocess

from aoe_tui.runtime.cleanup import is_leftover, process_started, reap_leftovers
from aoe_tui.runtime.hypervisor import DomainRecord

HOST = socket.gethostname()


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_match_domain_of_a_dead_process_is_a_leftover() -> None:
    assert is_leftover(DomainRecord("aoe-m-a", "running", _dead_pid(), HOST, "match"))
    assert not is_leftover(DomainRecord("aoe-m-a", "running", os.getpid(), HOST, "match"))


def test_unstamped_domain_is_a_leftover_but_another_hosts_is_not() -> None:
    assert is_leftover(DomainRecord("aoe-old", "running", None, None, None))
    assert not is_leftover(DomainRecord("aoe-m-a", "running", _dead_pid(), "some-other-host", "match"))


def test_manual_vms_survive_unless_asked() -> None:
    record = DomainRecord("aoe-vm-box", "running", _dead_pid(), HOST, "manual")
    assert not is_leftover(record)
    assert is_leftover(record, include_manual=True)


def test_a_reused_pid_is_not_the_owner_its_start_time_tells() -> None:
    started = process_started(os.getpid())
    assert started is not None and process_started(_dead_pid()) is None
    mine = DomainRecord("aoe-m-a", "running", os.getpid(), HOST, "match", "m", started)
    reused = DomainRecord("aoe-m-b", "running", os.getpid(), HOST, "match", "old", started - 1)
    assert not is_leftover(mine) and is_leftover(reused)


class Leftovers:
    """A hypervisor's domains as `reap_leftovers` sees them, and what it destroyed."""

    def __init__(self, *records: DomainRecord) -> None:
        self.records, self.destroyed = list(records), []

    async def aoe_domains(self) -> list[DomainRecord]:
        return self.records

    async def destroy(self, name: str) -> bool:
        self.destroyed.append(name)
        return True


async def test_a_match_reaps_only_the_guests_of_gone_owners_and_says_so_in_one_line() -> None:
    dead = _dead_pid()
    live = DomainRecord("aoe-live-a", "running", os.getpid(), HOST, "match", "live", process_started(os.getpid()))
    manual = DomainRecord("aoe-vm-box", "running", dead, HOST, "manual", "box")
    gone = [DomainRecord(f"aoe-old-{t}", "running", dead, HOST, "match", "old-1a2b3c", 1) for t in "ab"]
    hypervisor = Leftovers(live, manual, *gone)
    line = await reap_leftovers(hypervisor)  # type: ignore[arg-type]
    assert hypervisor.destroyed == ["aoe-old-a", "aoe-old-b"]
    assert line == f"reaped 2 guests left by match old-1a2b3c (pid {dead}), gone: aoe-old-a, aoe-old-b"
    assert await reap_leftovers(Leftovers(live, manual)) is None  # type: ignore[arg-type]
