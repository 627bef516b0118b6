"""One libvirt connection, used from asyncio without blocking it.

Every blocking libvirt call runs in a worker thread; lifecycle events arrive on
the running loop through libvirtaio. A local `qemu:///system` and a remote
`qemu+ssh://host/system` or `qemu+unix:///system?socket=...` take exactly the
same path: only the URI differs.
"""

from __future__ import annotations

import asyncio
import functools
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import libvirt

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.domain_xml import OWNER_NS
from aoe_tui.runtime.event_loop import ensure_libvirt_event_loop

DEFAULT_URI = "qemu:///system"
DEFAULT_SOCKET = "/var/run/libvirt/libvirt-sock"
DOMAIN_PREFIX = "aoe-"
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3

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

# libvirt's default error handler prints every error (even an expected "no such
# domain") to stderr, which would scribble over the TUI; errors reach us as
# exceptions anyway.
libvirt.registerErrorHandler(lambda _context, _error: None, None)


@dataclass(frozen=True)
class DomainRecord:
    """An `aoe-*` domain as found on a hypervisor, with the owner we stamped on it."""

    name: str
    state: str
    owner_pid: int | None
    owner_host: str | None
    owner_kind: str | None


def socket_hint(uri: str) -> str:
    """Where this URI's libvirtd is expected, for error messages a human can act on."""
    parts = urlsplit(uri)
    if socket := parse_qs(parts.query).get("socket"):
        return f"socket {socket[0]}"
    if parts.hostname:
        return f"host {parts.hostname}"
    return f"socket {DEFAULT_SOCKET}"


class Hypervisor:
    def __init__(self, uri: str, connection: libvirt.virConnect) -> None:
        self.uri = uri
        self._connection = connection
        self._listeners: dict[str, list[EventListener]] = {}
        self._callback_ids: list[int] = []

    @classmethod
    async def connect(cls, uri: str = DEFAULT_URI) -> Hypervisor:
        ensure_libvirt_event_loop()
        try:
            connection = await asyncio.to_thread(libvirt.open, uri)
        except libvirt.libvirtError as error:
            raise AoeError(
                f"cannot connect to libvirtd at {uri} ({socket_hint(uri)}): {error.get_error_message()}; "
                "start the daemons with scripts/services (virtlogd -d; libvirtd -d)"
            ) from None
        hypervisor = cls(uri, connection)
        await hypervisor._subscribe_events()
        return hypervisor

    async def _subscribe_events(self) -> None:
        await self.call(self._connection.setKeepAlive, KEEPALIVE_INTERVAL_S, KEEPALIVE_COUNT)
        for event_id, callback in (
            (libvirt.VIR_DOMAIN_EVENT_ID_LIFECYCLE, self._on_lifecycle),
            (libvirt.VIR_DOMAIN_EVENT_ID_REBOOT, self._on_reboot),
        ):
            self._callback_ids.append(
                await self.call(self._connection.domainEventRegisterAny, None, event_id, callback, None)
            )

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

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        """Run one blocking libvirt call in a worker thread; a dead daemon becomes an AoeError."""
        try:
            return await asyncio.to_thread(functools.partial(function, *args))
        except libvirt.libvirtError as error:
            if error.get_error_code() not in _CONNECTION_LOST:
                raise
            if await self._still_connected():
                raise AoeError(f"libvirt at {self.uri}: {error.get_error_message()}") from None
            raise AoeError(
                f"lost the connection to libvirtd at {self.uri} ({socket_hint(self.uri)}): "
                f"{error.get_error_message()}; is it still running? (scripts/services)"
            ) from None

    async def _still_connected(self) -> bool:
        """A system error (say, a file libvirtd cannot open) is not a lost daemon: ask the connection."""
        try:
            return bool(await asyncio.to_thread(self._connection.isAlive))
        except libvirt.libvirtError:
            return False

    async def create(self, xml: str, autodestroy: bool = False) -> None:
        """Start a transient domain from XML; `autodestroy`: libvirtd destroys it when this connection closes
        (a remote host's guests do not outlive a coordinator that lost them)."""
        try:
            await self.call(self._connection.createXML, xml, libvirt.VIR_DOMAIN_START_AUTODESTROY if autodestroy else 0)
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
            await self.call(self._connection.restore, str(path))
        except libvirt.libvirtError as error:
            raise AoeError(f"libvirt could not restore {path} on {self.uri}: {error.get_error_message()}") from None

    async def version(self) -> int:
        """The hypervisor's version (QEMU's, as major * 1,000,000 + minor * 1,000 + release)."""
        return int(await self.call(self._connection.getVersion))

    async def _lookup(self, name: str) -> libvirt.virDomain | None:
        try:
            return await self.call(self._connection.lookupByName, name)
        except libvirt.libvirtError as error:
            if error.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                return None
            raise

    async def state(self, name: str) -> str | None:
        """`running`, `paused`, `shutoff`, ... or None when no such domain exists."""
        state = await self.state_reason(name)
        return state[0] if state is not None else None

    async def state_reason(self, name: str) -> tuple[str, str] | None:
        """(state, reason), e.g. ("paused", "ioerror") for a guest stopped by a failing disk; None: no domain."""
        domain = await self._lookup(name)
        if domain is None:
            return None
        try:
            state, reason = await self.call(domain.state)
        except libvirt.libvirtError as error:
            if error.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
                return None
            raise
        reason_name = _PAUSED_REASONS.get(reason, f"reason-{reason}") if state == libvirt.VIR_DOMAIN_PAUSED else ""
        return _STATE_NAMES.get(state, f"state-{state}"), reason_name

    async def _act(self, name: str, verb: str, action: Callable[[libvirt.virDomain], Any]) -> None:
        domain = await self._lookup(name)
        if domain is None:
            raise AoeError(f"domain {name} does not exist on {self.uri}; cannot {verb} it")
        try:
            await self.call(action, domain)
        except libvirt.libvirtError as error:
            raise AoeError(f"libvirt could not {verb} {name}: {error.get_error_message()}") from None

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
        """Power off and forget a transient domain; False when it was already gone."""
        domain = await self._lookup(name)
        if domain is None:
            return False
        try:
            await self.call(domain.destroy)
        except libvirt.libvirtError as error:
            if error.get_error_code() in (libvirt.VIR_ERR_NO_DOMAIN, libvirt.VIR_ERR_OPERATION_INVALID):
                return False
            raise AoeError(f"libvirt could not destroy {name}: {error.get_error_message()}") from None
        return True

    async def cpu_model(self) -> str:
        """The host CPU as libvirt describes it (vendor and model), for the match's provenance."""
        host_cpu = ET.fromstring(await self.call(self._connection.getCapabilities)).find("host/cpu")
        if host_cpu is None:
            return "unknown"
        return " ".join(filter(None, (host_cpu.findtext("vendor"), host_cpu.findtext("model")))) or "unknown"

    async def resources(self) -> tuple[int, int, bool]:
        """(CPUs, memory MiB, whether libvirt offers KVM) of the host, for `aoe doctor --hosts`."""
        info = await self.call(self._connection.getInfo)
        capabilities = ET.fromstring(await self.call(self._connection.getCapabilities))
        return int(info[2]), int(info[1]), capabilities.find(".//guest/arch/domain[@type='kvm']") is not None

    async def aoe_domains(self) -> list[DomainRecord]:
        domains = await self.call(self._connection.listAllDomains, 0)
        records = []
        for domain in domains:
            name = await self.call(domain.name)
            if not name.startswith(DOMAIN_PREFIX):
                continue
            records.append(await self._record(name, domain))
        return records

    async def _record(self, name: str, domain: libvirt.virDomain) -> DomainRecord:
        try:
            state, _reason = await self.call(domain.state)
            owner = ET.fromstring(await self.call(domain.metadata, libvirt.VIR_DOMAIN_METADATA_ELEMENT, OWNER_NS, 0))
        except libvirt.libvirtError:
            return DomainRecord(name, "unknown", None, None, None)
        pid = owner.get("pid")
        return DomainRecord(
            name,
            _STATE_NAMES.get(state, f"state-{state}"),
            int(pid) if pid and pid.isdigit() else None,
            owner.get("host"),
            owner.get("kind"),
        )

    async def close(self) -> None:
        callback_ids, self._callback_ids = self._callback_ids, []
        for callback_id in callback_ids:
            try:
                await self.call(self._connection.domainEventDeregisterAny, callback_id)
            except libvirt.libvirtError:
                pass  # the connection already died; nothing left to deregister
        self._listeners.clear()
        try:
            await self.call(self._connection.close)
        except libvirt.libvirtError:
            pass
