"""Loopback ports for each territory's forwarded SSH and service.

Within a match, ports are a pure function of the base port and the territory's
position, so the referee, verifiers and a human all compute the same numbers.
The base port itself is found automatically (the first free block at or above
26000) unless the operator names one, and the block is reserved with lock
files so two matches started at once from two terminals never collide; the
reservation lasts until the match's runtime releases it (or its process dies,
which drops the locks with it).
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence

from aoe_tui.domain.errors import AoeError

DEFAULT_BASE_PORT = 26000
LOOPBACK = "127.0.0.1"
_LOCK_DIR = Path("/run/lock/aoe_tui-ports") if Path("/run/lock").is_dir() else Path("/tmp/aoe_tui-ports")


def host_lock_dir(host_name: str) -> Path:
    """The locks of a remote hypervisor's loopback ports, held here by the coordinator that places its matches."""
    return _LOCK_DIR / "hosts" / host_name


_MAX_PORT = 65535


@dataclass(frozen=True)
class TerritoryPorts:
    ssh: int
    service: int


def assign_ports(territory_ids: Sequence[str], base_port: int = DEFAULT_BASE_PORT) -> dict[str, TerritoryPorts]:
    """Two consecutive ports per territory, in order: base + 2*i (ssh), base + 2*i + 1 (service)."""
    last = base_port + 2 * len(territory_ids) - 1
    if base_port < 1024 or last > _MAX_PORT:
        raise AoeError(f"base port {base_port}: ports {base_port}..{last} must lie within 1024..65535")
    return {tid: TerritoryPorts(base_port + 2 * i, base_port + 2 * i + 1) for i, tid in enumerate(territory_ids)}


def port_is_free(port: int) -> bool:
    """Whether QEMU could listen here now.

    SO_REUSEADDR as QEMU's own bind uses it: connections in TIME_WAIT (left by
    the referee's HTTP checks of the match that just ended) do not make a port
    "in use"; only a live listener or connection does.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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


@dataclass
class PortReservation:
    """A block of ports held for one match; `release()` (idempotent) lets the next match have it."""

    base_port: int
    ports: dict[str, TerritoryPorts]
    automatic: bool
    _locks: list[int] = field(default_factory=list, repr=False)

    def release(self) -> None:
        locks, self._locks = self._locks, []
        for fd in locks:
            os.close(fd)  # closing drops the flock

    def to_json(self) -> dict:
        return {
            "base_port": self.base_port,
            "chosen": "automatically" if self.automatic else "--base-port",
            "territories": {tid: {"ssh": p.ssh, "service": p.service} for tid, p in self.ports.items()},
        }


def reserve_ports(
    territory_ids: Sequence[str],
    base_port: int | None = None,
    lock_dir: Path = _LOCK_DIR,
    first_port: int = DEFAULT_BASE_PORT,
) -> PortReservation:
    """The ports of one match: the block at `base_port`, or the first free block at or above `first_port`."""
    if base_port is not None:
        ports = assign_ports(territory_ids, base_port)
        locks = _lock_all(ports, lock_dir)
        if locks is None:
            raise AoeError(
                f"base port {base_port}: another aoe match on this machine holds ports "
                f"{base_port}..{base_port + 2 * len(territory_ids) - 1}; omit --base-port to pick a free block"
            )
        try:
            check_ports_free(ports)
        except AoeError:
            _close(locks)
            raise
        return PortReservation(base_port, ports, automatic=False, _locks=locks)
    width = 2 * len(territory_ids)
    for candidate in range(first_port, _MAX_PORT - width + 2, width):
        ports = assign_ports(territory_ids, candidate)
        locks = _lock_all(ports, lock_dir)
        if locks is None:
            continue
        if all(port_is_free(p) for pair in ports.values() for p in (pair.ssh, pair.service)):
            return PortReservation(candidate, ports, automatic=True, _locks=locks)
        _close(locks)
    raise AoeError(f"no block of {width} free loopback ports at or above {first_port}")


def _lock_all(ports: dict[str, TerritoryPorts], lock_dir: Path) -> list[int] | None:
    """Take every port's lock without waiting; None (and nothing held) when another match has one."""
    lock_dir.mkdir(parents=True, exist_ok=True)
    held: list[int] = []
    for pair in ports.values():
        for port in (pair.ssh, pair.service):
            fd = os.open(lock_dir / f"{port}.lock", os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                _close(held)
                return None
            held.append(fd)
    return held


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
