"""Which aoe-* domains count as leftovers of crashed runs."""

from __future__ import annotations

import os
import socket
import subprocess

from aoe_tui.runtime.cleanup import is_leftover
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
