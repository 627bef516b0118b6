"""Loopback ports for each territory's forwarded SSH and service.

Ports are a pure function of the base port and the territory's position, so
the referee, verifiers and a human all compute the same numbers; they are
checked up front so a taken port fails before any VM boots, naming who wanted it.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass
from typing import Sequence

from aoe_tui.domain.errors import AoeError

DEFAULT_BASE_PORT = 26000
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class TerritoryPorts:
    ssh: int
    service: int


def assign_ports(territory_ids: Sequence[str], base_port: int = DEFAULT_BASE_PORT) -> dict[str, TerritoryPorts]:
    """Two consecutive ports per territory, in order: base + 2*i (ssh), base + 2*i + 1 (service)."""
    last = base_port + 2 * len(territory_ids) - 1
    if base_port < 1024 or last > 65535:
        raise AoeError(f"base port {base_port}: ports {base_port}..{last} must lie within 1024..65535")
    return {tid: TerritoryPorts(base_port + 2 * i, base_port + 2 * i + 1) for i, tid in enumerate(territory_ids)}


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError as error:
            if error.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def check_ports_free(assignment: dict[str, TerritoryPorts]) -> None:
    for territory, ports in assignment.items():
        for role, port in (("ssh", ports.ssh), ("service", ports.service)):
            if not port_is_free(port):
                raise AoeError(
                    f"port {port} on {LOOPBACK} ({role} of territory {territory}) is already in use; "
                    "stop what holds it (`aoe doctor --clean` removes leftover VMs) or choose another base port"
                )
