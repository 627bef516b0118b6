"""One libvirt connection, used from asyncio without blocking it.

Every blocking libvirt call runs in a worker thread; lifecycle events arrive on
the running loop through libvirtaio. A local `qemu:///system` and a remote
`qemu+ssh://host/system` or `qemu+unix:///system?socket=...` take exactly the
same path: only the URI differs.

libvirtd may restart under a running match (an upgrade, an operator); the
guests' QEMU processes live on, so a lost connection is opened again within a
bound (`RECONNECT_SECONDS`; `AOE_LIBVIRT_RECONNECT_SECONDS` sets another), its
event subscriptions renewed, and the call that
met the outage made again on the new connection: domains are always found by
name, never through a handle of the old connection. Past the bound the
hypervisor is `gone` and says so once (`Outage.gone`); its local guests can
then still be destroyed, by their QEMU pid (`runtime.qemu_pid`).
"""

from __future__ import annotations

import asyncio
import os
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import libvirt

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.domain_xml import OWNER_NS
from aoe_tui.runtime.event_loop import ensure_libvirt_event_loop
from aoe_tui.runtime.qemu_pid import kill_qemu

DEFAULT_URI = "qemu:///system"
DEFAULT_SOCKET = "/var/run/libvirt/libvirt-sock"
DOMAIN_PREFIX = "aoe-"
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3
RECONNECT_SECONDS = 60.0  # how long a restarting libvirtd may take before the match is given up as lost
RECONNECT_ENV = "AOE_LIBVIRT_RECONNECT_SECONDS"
RECONNECT_POLL_S = 0.5

_STATE_NAMES = {
    libvirt.VIR_DOMAIN_RUNNING: "running",
    libvirt.VIR_DOMAIN_PAUSED: "paused",
    libvirt.VIR_DOMAIN_SHUTOFF: "shutoff",
    libvirt.VIR_DOMAIN_SHUTDOWN: "shutting-down",
    libvirt.VIR_DOMAIN_CRASHED: "crashed",
    libvirt.VIR_DOMAIN_BLOCKED: "running",
    libvirt.VIR_DOMAIN_PMSUSPENDED: "pmsuspended",
    libvirt.VIR_DOMAIN_NOSTATE: "nostate",
}
_PAUSED_REASONS = {
    libvirt.VIR_DOMAIN_PAUSED_USER: "user",
    libvirt.VIR_DOMAIN_PAUSED_IOERROR: "ioerror",
    libvirt.VIR_DOMAIN_PAUSED_WATCHDOG: "watchdog",
    libvirt.VIR_DOMAIN_PAUSED_CRASHED: "crashed",
    libvirt.VIR_DOMAIN_PAUSED_STARTING_UP: "starting-up",
    libvirt.VIR_DOMAIN_PAUSED_UNKNOWN: "unknown",
}
_LIFECYCLE_NAMES = {
    libvirt.VIR_DOMAIN_EVENT_STARTED: "started",
    libvirt.VIR_DOMAIN_EVENT_SUSPENDED: "suspended",
    libvirt.VIR_DOMAIN_EVENT_RESUMED: "resumed",
    libvirt.VIR_DOMAIN_EVENT_STOPPED: "stopped",
    libvirt.VIR_DOMAIN_EVENT_SHUTDOWN: "shutdown",
    libvirt.VIR_DOMAIN_EVENT_CRASHED: "crashed",
    libvirt.VIR_DOMAIN_EVENT_DEFINED: "defined",
    libvirt.VIR_DOMAIN_EVENT_UNDEFINED: "undefined",
}

_CONNECTION_LOST = (
    libvirt.VIR_ERR_SYSTEM_ERROR,
    libvirt.VIR_ERR_RPC,
    libvirt.VIR_ERR_NO_CONNECT,
    libvirt.VIR_ERR_INVALID_CONN,
)

EventListener = Callable[[str], None]
Opener = Callable[[str], libvirt.virConnect]
T = TypeVar("T")

# libvirt's default error handler prints every error (even an expected "no such
# domain") to stderr, which would scribble over the TUI; errors reach us as
# exceptions anyway.
libvirt.registerErrorHandler(lambda _context, _error: None, None)


class LibvirtGone(AoeError):
    """libvirtd stayed away past the reconnect bound: this hypervisor's guests can no longer be watched."""


@dataclass
class Outage:
    """Who hears of a lost connection: `noted(line)` once it is back (how long it was away), `gone(detail)` once
    when it stays away past the bound. Both run on the loop."""

    noted: Callable[[str], object] = field(default=lambda _line: None)
    gone: Callable[[str], object] = field(default=lambda _detail: None)


@dataclass(frozen=True)
class DomainRecord:
    """An `aoe-*` domain as found on a hypervisor, with the owner we stamped on it."""

    name: str
    state: str
    owner_pid: int | None
    owner_host: str | None
    owner_kind: str | None
    owner_match: str | None = None
    owner_started: int | None = None  # the owner process's start time (runtime.cleanup), None on older guests


def reconnect_bound() -> float:
    """How long a lost libvirtd is waited for: `AOE_LIBVIRT_RECONNECT_SECONDS`, else `RECONNECT_SECONDS`."""
    text = os.environ.get(RECONNECT_ENV)
    try:
        seconds = float(text) if text else RECONNECT_SECONDS
    except ValueError:
        raise AoeError(f"{RECONNECT_ENV}={text!r}: give the seconds as a number") from None
    if not 0 < seconds < float("inf"):
        raise AoeError(f"{RECONNECT_ENV}={text!r}: give a positive number of seconds")
    return seconds


def socket_hint(uri: str) -> str:
    """Where this URI's libvirtd is expected, for error messages a human can act on."""
    parts = urlsplit(uri)
    if socket := parse_qs(parts.query).get("socket"):
        return f"socket {socket[0]}"
    if parts.hostname:
        return f"host {parts.hostname}"
    return f"socket {DEFAULT_SOCKET}"


class Hypervisor:
    def __init__(
        self,
        uri: str,
        connection: libvirt.virConnect,
        opener: Opener = libvirt.open,
        reconnect_seconds: float = RECONNECT_SECONDS,
    ) -> None:
        self.uri = uri
        self._connection = connection
        self._opener = opener
        self.reconnect_seconds = reconnect_seconds
        self.outage = Outage()
        self.gone: str | None = None  # why, once libvirtd stayed away past the bound
        self._reconnecting: asyncio.Task[None] | None = None
        self._closed = False
        self._listeners: dict[str, list[EventListener]] = {}
        self._callback_ids: list[int] = []

    @classmethod
    async def connect(
        cls, uri: str = DEFAULT_URI, opener: Opener = libvirt.open, reconnect_seconds: float | None = None
    ) -> Hypervisor:
        """Open `uri`; a connection lost later is opened again for up to `reconnect_seconds` (default: the
        environment's `AOE_LIBVIRT_RECONNECT_SECONDS`, else `RECONNECT_SECONDS`)."""
        ensure_libvirt_event_loop()
        if reconnect_seconds is None:
            reconnect_seconds = reconnect_bound()
        try:
            connection = await asyncio.to_thread(opener, uri)
        except libvirt.libvirtError as error:
            raise AoeError(
                f"cannot connect to libvirtd at {uri} ({socket_hint(uri)}): {error.get_error_message()}; "
                "start the daemons with scripts/services (virtlogd -d; libvirtd -d)"
            ) from None
        hypervisor = cls(uri, connection, opener, reconnect_seconds)
        await hypervisor._subscribe_events()
        return hypervisor

    async def _subscribe_events(self) -> None:
        connection = self._connection
        await asyncio.to_thread(connection.setKeepAlive, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT)
        await asyncio.to_thread(connection.registerCloseCallback, self._on_close, None)
        for event_id, callback in (
            (libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, self._on_lifecycle),
            (libvirt.VIR_DOMAIN_EVENT_ID_REBOOT, self._on_reboot),
        ):
            self._callback_ids.append(
                await asyncio.to_thread(connection.domainEventRegisterAny, None, event_id, callback, None)
            )

    def _on_close(self, connection: libvirt.virConnect, _reason: int, _opaque: Any) -> None:
        """libvirtd closed the connection (it stopped, or keepalive gave up): reconnect now, not at the next call,
        so an outage is noticed while nothing asks libvirt anything."""
        if not self._closed and connection is self._connection:
            self._start_reconnect(connection)

    def _on_lifecycle(self, _conn: Any, domain: libvirt.virDomain, event: int, _detail: int, _opaque: Any) -> None:
        self._notify(domain.name(), _LIFECYCLE_NAMES.get(event, f"event-{event}"))

    def _on_reboot(self, _conn: Any, domain: libvirt.virDomain, _opaque: Any) -> None:
        self._notify(domain.name(), "rebooted")

    def _notify(self, name: str, event: str) -> None:
        for listener in list(self._listeners.get(name, ())):
            listener(event)

    def watch(self, name: str, listener: EventListener) -> None:
        """Call `listener(event_name)` on the loop for each lifecycle event of domain `name`."""
        self._listeners.setdefault(name, []).append(listener)

    def unwatch(self, name: str) -> None:
        self._listeners.pop(name, None)

    async def call(self, operation: Callable[[libvirt.virConnect], T]) -> T:
        """Run `operation(connection)` in a worker thread. A connection lost meanwhile is opened again (within
        the bound) and the operation run again on the new one; past the bound, `LibvirtGone`."""
        while True:
            if self.gone is not None:
                raise LibvirtGone(self.gone)
            connection = self._connection
            try:
                return await asyncio.to_thread(operation, connection)
            except libvirt.libvirtError as error:
                if await self._still_connected(connection):
                    if error.get_error_code() in _CONNECTION_LOST:
                        raise AoeError(f"libvirt at {self.uri}: {error.get_error_message()}") from None
                    raise
            if self._closed:
                raise AoeError(f"the connection to libvirtd at {self.uri} is closed")
            await asyncio.shield(self._start_reconnect(connection))

    @staticmethod
    async def _still_connected(connection: libvirt.virConnect) -> bool:
        """A system error (say, a file libvirtd cannot open) is not a lost daemon: ask the connection."""
        try:
            return bool(await asyncio.to_thread(connection.isAlive))
        except libvirt.libvirtError:
            return False

    def _start_reconnect(self, lost: libvirt.virConnect) -> asyncio.Task[None]:
        """The one reconnection for connection `lost` (already done when another caller got there first)."""
        if self._reconnecting is None or (self._reconnecting.done() and self._connection is lost):
            self._reconnecting = asyncio.ensure_future(self._reconnect(lost))
        return self._reconnecting

    async def _reconnect(self, lost: libvirt.virConnect) -> None:
        """Open the connection again, polling until the bound; never raises (nobody may await it: a close
        callback starts it), a caller finds `gone` set instead."""
        started = time.monotonic()
        while not self._closed:
            try:
                self._connection, self._callback_ids = await asyncio.to_thread(self._opener, self.uri), []
                await self._subscribe_events()
            except libvirt.libvirtError as error:
                if self._connection is not lost:  # opened, then lost again before its events were renewed
                    await asyncio.to_thread(_close_quietly, self._connection)
                    self._connection = lost
                if time.monotonic() - started >= self.reconnect_seconds:
                    self.gone = (
                        f"libvirtd at {self.uri} ({socket_hint(self.uri)}) stayed unreachable for "
                        f"{self.reconnect_seconds:g} s: {error.get_error_message()}; is it running? (scripts/services)"
                    )
                    self.outage.gone(self.gone)
                    return
                await asyncio.sleep(RECONNECT_POLL_S)
                continue
            await asyncio.to_thread(_close_quietly, lost)
            self.outage.noted(
                f"the connection to libvirtd at {self.uri} was lost and opened again after "
                f"{time.monotonic() - started:.1f} s; its guests were found again by name"
            )
            return

    async def create(self, xml: str, autodestroy: bool = False) -> None:
        """Start a transient domain from XML; `autodestroy`: libvirtd destroys it when this connection closes
        (a remote host's guests do not outlive a coordinator that lost them)."""
        try:
            flags = libvirt.VIR_DOMAIN_START_AUTODESTROY if autodestroy else 0
            await self.call(lambda connection: connection.createXML(xml, flags))
        except libvirt.libvirtError as error:
            name = ET.fromstring(xml).findtext("name")
            message = error.get_error_message()
            fix = "; start the daemons with scripts/services" if "virtlogd" in message else ""
            raise AoeError(f"libvirt could not start domain {name} on {self.uri}: {message}{fix}") from None

    async def save(self, name: str, path: Path) -> None:
        """Save a running domain's memory and device state to `path` (libvirt's save: the domain stops)."""
        await self._act(name, "save", lambda domain: domain.save(str(path)))

    async def restore(self, path: Path) -> None:
        """Start the domain a save image describes, from the state it holds (`runtime.save_image`)."""
        try:
            await self.call(lambda connection: connection.restore(str(path)))
        except libvirt.libvirtError as error:
            raise AoeError(f"libvirt could not restore {path} on {self.uri}: {error.get_error_message()}") from None

    async def version(self) -> int:
        """The hypervisor's version (QEMU's, as major * 1,000,000 + minor * 1,000 + release)."""
        return int(await self.call(lambda connection: connection.getVersion()))

    async def _on_domain(self, name: str, action: Callable[[libvirt.virDomain], T]) -> T | None:
        """`action(domain)` on domain `name`, looked up in the same call (so on whichever connection is current);
        None when no such domain exists."""

        def on_domain(connection: libvirt.virConnect) -> T | None:
            try:
                return action(connection.lookupByName(name))
            except libvirt.libvirtError as error:
                if error.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                    return None
                raise

        return await self.call(on_domain)

    async def state(self, name: str) -> str | None:
        """`running`, `paused`, `shutoff`, ... or None when no such domain exists."""
        state = await self.state_reason(name)
        return state[0] if state is not None else None

    async def state_reason(self, name: str) -> tuple[str, str] | None:
        """(state, reason), e.g. ("paused", "ioerror") for a guest stopped by a failing disk; None: no domain."""
        found = await self._on_domain(name, lambda domain: domain.state())
        if found is None:
            return None
        state, reason = found
        reason_name = _PAUSED_REASONS.get(reason, f"reason-{reason}") if state == libvirt.VIR_DOMAIN_PAUSED else ""
        return _STATE_NAMES.get(state, f"state-{state}"), reason_name

    async def _act(self, name: str, verb: str, action: Callable[[libvirt.virDomain], Any]) -> None:
        def act(domain: libvirt.virDomain) -> bool:
            action(domain)
            return True

        try:
            done = await self._on_domain(name, act)
        except libvirt.libvirtError as error:
            raise AoeError(f"libvirt could not {verb} {name}: {error.get_error_message()}") from None
        if done is None:
            raise AoeError(f"domain {name} does not exist on {self.uri}; cannot {verb} it")

    async def reboot_acpi(self, name: str) -> None:
        """Press the guest's ACPI power button for a reboot (the guest acts on it, or not: see runtime.reboot)."""
        await self._act(name, "reboot", lambda domain: domain.reboot(libvirt.VIR_DOMAIN_REBOOT_ACPI_POWER_BTN))

    async def reset(self, name: str) -> None:
        await self._act(name, "reset", lambda domain: domain.reset(0))

    async def suspend(self, name: str) -> None:
        await self._act(name, "suspend", lambda domain: domain.suspend())

    async def resume(self, name: str) -> None:
        await self._act(name, "resume", lambda domain: domain.resume())

    async def destroy(self, name: str) -> bool:
        """Power off and forget a transient domain; False when it was already gone. With libvirtd gone for good,
        a local guest's QEMU process is killed instead (libvirtd, should it come back, finds it stopped)."""

        def destroy(domain: libvirt.virDomain) -> bool:
            try:
                domain.destroy()
            except libvirt.libvirtError as error:
                if error.get_error_code() in (libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_OPERATION_INVALID):
                    return False
                raise
            return True

        try:
            return bool(await self._on_domain(name, destroy))
        except LibvirtGone:
            if urlsplit(self.uri).hostname is not None:
                raise
            return await asyncio.to_thread(kill_qemu, name)
        except libvirt.libvirtError as error:
            raise AoeError(f"libvirt could not destroy {name}: {error.get_error_message()}") from None

    async def cpu_model(self) -> str:
        """The host CPU as libvirt describes it (vendor and model), for the match's provenance."""
        host_cpu = ET.fromstring(await self.call(lambda connection: connection.getCapabilities())).find("host/cpu")
        if host_cpu is None:
            return "unknown"
        return " ".join(filter(None, (host_cpu.findtext("vendor"), host_cpu.findtext("model")))) or "unknown"

    async def resources(self) -> tuple[int, int, bool]:
        """(CPUs, memory MiB, whether libvirt offers KVM) of the host, for `aoe doctor --hosts`."""
        info = await self.call(lambda connection: connection.getInfo())
        capabilities = ET.fromstring(await self.call(lambda connection: connection.getCapabilities()))
        return int(info[2]), int(info[1]), capabilities.find(".//guest/arch/domain[@type='kvm']") is not None

    async def aoe_domains(self) -> list[DomainRecord]:
        """Every `aoe-*` domain with the owner stamped on it (domain_xml), read in one call."""

        def records(connection: libvirt.virConnect) -> list[DomainRecord]:
            return [_record(d) for d in connection.listAllDomains(0) if d.name().startswith(DOMAIN_PREFIX)]

        return await self.call(records)

    async def close(self) -> None:
        self._closed = True
        reconnecting, self._reconnecting = self._reconnecting, None
        if reconnecting is not None:
            await reconnecting  # never raises; stops at its next turn
        callback_ids, self._callback_ids = self._callback_ids, []
        connection = self._connection
        for callback_id in callback_ids:
            try:
                await asyncio.to_thread(connection.domainEventDeregisterAny, callback_id)
            except libvirt.libvirtError:
                pass  # the connection already died; nothing left to deregister
        self._listeners.clear()
        await asyncio.to_thread(_close_quietly, connection)


def _record(domain: libvirt.virDomain) -> DomainRecord:
    name = domain.name()
    try:
        state, _reason = domain.state()
        owner = ET.fromstring(domain.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, OWNER_NS, 0))
    except libvirt.libvirtError:
        return DomainRecord(name, "unknown", None, None, None)
    return DomainRecord(
        name,
        _STATE_NAMES.get(state, f"state-{state}"),
        _number(owner.get("pid")),
        owner.get("host"),
        owner.get("kind"),
        owner.get("match"),
        _number(owner.get("started")),
    )


def _number(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


def _close_quietly(connection: libvirt.virConnect) -> None:
    try:
        connection.unregisterCloseCallback()
    except libvirt.libvirtError:
        pass  # never registered, or the connection already died
    try:
        connection.close()
    except libvirt.libvirtError:
        pass
