"""Find and remove `aoe-*` domains left behind by crashed runs.

Every domain we start is stamped with the match, host, pid and start time of
the process that owns it. A match domain whose owner process is gone on this
host is a leftover: its pid no longer runs, or runs a process started at
another time (pids get reused, a start time never). `aoe vm` domains are meant
to outlive their command and are only removed when asked for explicitly.
Every match that boots guests reaps the leftovers first (`reap_leftovers`).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from aoe_tui.runtime.domain_xml import OWNER_KIND_MANUAL
from aoe_tui.runtime.hypervisor import DomainRecord, Hypervisor


def process_started(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat's 22nd field); None: no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[19])  # the fields after the command name, which may hold spaces


def owner_alive(pid: int, started: int | None) -> bool:
    """Whether the process that stamped a guest still runs: its pid, and (when stamped) its very start time."""
    if not pid_alive(pid):
        return False
    return started is None or process_started(pid) in (started, None)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_leftover(record: DomainRecord, include_manual: bool = False) -> bool:
    if record.owner_kind == OWNER_KIND_MANUAL:
        return include_manual
    if record.owner_host not in (None, socket.gethostname()):
        return False  # owned by a process on another machine; we cannot tell if it lives
    return record.owner_pid is None or not owner_alive(record.owner_pid, record.owner_started)


async def leftover_domains(hypervisor: Hypervisor, include_manual: bool = False) -> list[DomainRecord]:
    return [r for r in await hypervisor.aoe_domains() if is_leftover(r, include_manual)]


async def destroy_leftovers(hypervisor: Hypervisor, include_manual: bool = False) -> list[str]:
    """Destroy every leftover domain; returns the names destroyed."""
    destroyed = []
    for record in await leftover_domains(hypervisor, include_manual):
        if await hypervisor.destroy(record.name):
            destroyed.append(record.name)
    return destroyed


async def reap_leftovers(hypervisor: Hypervisor) -> str | None:
    """Destroy the match guests whose owners are gone (never a live match's, never `aoe vm`'s) before a match
    boots its own; returns the one line that says so, or None when there were none."""
    leftovers = await leftover_domains(hypervisor)
    destroyed = [r for r in leftovers if await hypervisor.destroy(r.name)]
    if not destroyed:
        return None
    owners = sorted({f"match {r.owner_match or '?'} (pid {r.owner_pid or '?'})" for r in destroyed})
    return (
        f"reaped {len(destroyed)} guest{'s' if len(destroyed) != 1 else ''} left by "
        f"{', '.join(owners)}, gone: {', '.join(r.name for r in destroyed)}"
    )
