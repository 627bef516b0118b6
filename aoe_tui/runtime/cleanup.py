"""Find and remove `aoe-*` domains left behind by crashed runs.

Every domain we start is stamped with the pid and host of the process that
owns it. A match domain whose owner process is gone on this host is a
leftover; `aoe vm` domains are meant to outlive their command and are only
removed when asked for explicitly.
"""

from __future__ import annotations

import os
import socket

from aoe_tui.runtime.domain_xml import OWNER_KIND_MANUAL
from aoe_tui.runtime.hypervisor import DomainRecord, Hypervisor


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
    return record.owner_pid is None or not pid_alive(record.owner_pid)


async def leftover_domains(hypervisor: Hypervisor, include_manual: bool = False) -> list[DomainRecord]:
    return [r for r in await hypervisor.aoe_domains() if is_leftover(r, include_manual)]


async def destroy_leftovers(hypervisor: Hypervisor, include_manual: bool = False) -> list[str]:
    """Destroy every leftover domain; returns the names destroyed."""
    destroyed = []
    for record in await leftover_domains(hypervisor, include_manual):
        if await hypervisor.destroy(record.name):
            destroyed.append(record.name)
    return destroyed
