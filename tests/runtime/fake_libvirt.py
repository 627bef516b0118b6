"""A libvirt connection in memory that can lose its daemon: for the hypervisor's reconnection tests.

Its guests live in a set shared by every connection to the same fake daemon,
as real QEMU processes outlive a restarted libvirtd.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import libvirt


def libvirt_error(message: str, code: int = libvirt.VIR_ERR_INTERNAL_ERROR) -> libvirt.libvirtError:
    error = libvirt.libvirtError(message)
    error.err = (code, 0, message, 0, "", "", "", 0, 0)
    return error


class FakeDomain:
    def __init__(self, connection: FakeConnection, name: str) -> None:
        self.connection, self._name = connection, name

    def name(self) -> str:
        return self._name

    def state(self) -> tuple[int, int]:
        self.connection.check()
        return libvirt.VIR_DOMAIN_RUNNING, 1

    def destroy(self) -> None:
        self.connection.check()
        self.connection.guests.discard(self._name)


class FakeConnection:
    def __init__(self, guests: set[str]) -> None:
        self.guests = guests
        self.alive = True
        self.closed = False
        self.subscriptions = 0
        self._on_close: Callable[..., None] | None = None

    def check(self) -> None:
        if not self.alive:
            raise libvirt_error("internal error: client socket is closed")

    def die(self, tell: bool = True) -> None:
        """libvirtd stops: every later call fails; `tell`: the close callback fires, as libvirtaio's would."""
        self.alive = False
        if tell and self._on_close is not None:
            self._on_close(self, libvirt.VIR_CONNECT_CLOSE_REASON_EOF, None)

    def isAlive(self) -> bool:
        return self.alive

    def setKeepAlive(self, _interval: int, _count: int) -> None:
        self.check()

    def registerCloseCallback(self, callback: Callable[..., None], _opaque: Any) -> None:
        self.check()
        self._on_close = callback

    def unregisterCloseCallback(self) -> None:
        self._on_close = None

    def domainEventRegisterAny(self, _domain: Any, _event: int, _callback: Any, _opaque: Any) -> int:
        self.check()
        self.subscriptions += 1
        return self.subscriptions

    def domainEventDeregisterAny(self, _callback_id: int) -> None:
        self.check()

    def lookupByName(self, name: str) -> FakeDomain:
        self.check()
        if name not in self.guests:
            raise libvirt_error(f"no domain {name}", libvirt.VIR_ERR_NO_DOMAIN)
        return FakeDomain(self, name)

    def close(self) -> None:
        self.closed = True


class FakeDaemon:
    """What `libvirt.open` reaches: up (a new connection per open) or down (every open refused)."""

    def __init__(self, *guests: str) -> None:
        self.guests = set(guests)
        self.up = True
        self.connections: list[FakeConnection] = []

    def open(self, _uri: str) -> FakeConnection:
        if not self.up:
            raise libvirt_error("Failed to connect socket to '/var/run/libvirt/libvirt-sock': Connection refused")
        self.connections.append(FakeConnection(self.guests))
        return self.connections[-1]

    def stop(self) -> None:
        self.up = False
        self.connections[-1].die()
