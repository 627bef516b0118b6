"""One territory's VM: its disk, domain, console and SSH, as async operations.

Power operations go through libvirt, and so does the referee's reboot: an ACPI
request the image's acpid answers, a reset when it does not, proven from
outside (see `runtime.reboot`). SSH is for acting in the guest and for the
boot id, which is only secondary evidence.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shlex
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.boot_watchdog import STALL_SECONDS, rescue_stalled_boot
from aoe_tui.runtime.cleanup import process_started
from aoe_tui.runtime.side_task import beside
from aoe_tui.runtime.domain_xml import OWNER_KIND_MATCH, ArenaNic, DomainSpec, domain_name, render_domain_xml
from aoe_tui.runtime.hypervisor import DEFAULT_URI, Hypervisor
from aoe_tui.runtime.guest_site import GuestSite, LocalSite
from aoe_tui.runtime.image import ImageInfo, image_mib
from aoe_tui.runtime.overlay import create_overlay
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.kvm_probe import AccelChoice
from aoe_tui.runtime.ports import LOOPBACK, TerritoryPorts
from aoe_tui.runtime.reboot import (
    ACPI_GRACE_SECONDS,
    LOGIN_PROMPT,
    RESTART_STALL_SECONDS,
    Cause,
    ConsoleWatch,
    RebootProof,
    valid_boot_id,
)
from aoe_tui.runtime.save_image import copy_with_definition
from aoe_tui.runtime.ssh import CommandResult, GuestGone, GuestSSH, SSHUnavailable
from aoe_tui.runtime.ssh_greeting import always
from aoe_tui.runtime.warm_start import WarmRestoreFailed, WarmSource, give_identity
from aoe_tui.store.match_layout import TerritoryPaths

GUEST_SERVICE_PORT = 8080
_CONSOLE_TAIL_BYTES = 64 * 1024
_ALIVE_STATES = ("running", "paused", "nostate", "shutting-down", "pmsuspended")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class TerritoryConfig:
    match_id: str
    territory_id: str
    vcpus: int
    memory_mib: int
    directory: Path  # territories/<id> inside the match dir: overlay + console log
    ports: TerritoryPorts
    uri: str = DEFAULT_URI
    guest_service_port: int = GUEST_SERVICE_PORT
    owner_kind: str = OWNER_KIND_MATCH
    disk_mib: int | None = None  # the guest's disk; never smaller than the image (None: the image's size)
    unprivileged_qemu: bool = False  # see runtime.qemu_user: the image must then be staged where it can reach it
    arena_nic: ArenaNic | None = None  # a second NIC on the match's arena segment (domain_xml)
    harness_bundle: Path | None = None  # the real harnesses' read-only disk, for a harness agent's guest

    @property
    def name(self) -> str:
        return domain_name(self.match_id, self.territory_id)


class TerritoryVM:
    def __init__(
        self,
        config: TerritoryConfig,
        hypervisor: Hypervisor,
        keys: MatchKeys,
        image: ImageInfo,
        accel: AccelChoice,
        site: GuestSite | None = None,
        warm: WarmSource | None = None,
    ) -> None:
        self.config = config
        self.warm = warm  # restore from this warm-start template instead of booting cold (runtime.warm_start)
        self._identity_given = False
        self.site = site or LocalSite(TerritoryPaths(config.directory), image, config.ports)
        self.hypervisor = hypervisor
        self.keys = keys
        self.image = image
        self.accel = accel
        self.lifecycle_events: list[tuple[float, str]] = []
        self.ssh = GuestSSH(config.territory_id, LOOPBACK, self.site.access.ssh, keys, is_alive=self.is_running)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def territory_id(self) -> str:
        return self.config.territory_id

    @property
    def ssh_port(self) -> int:
        """Where the coordinator reaches the guest's SSH on 127.0.0.1 (its forward, or a tunnel to it)."""
        return self.site.access.ssh

    @property
    def service_port(self) -> int:
        return self.site.access.service

    @property
    def overlay_path(self) -> Path:
        return TerritoryPaths(self.config.directory).overlay

    @property
    def console_path(self) -> Path:
        return TerritoryPaths(self.config.directory).console_log

    def domain_spec(self) -> DomainSpec:
        c = self.config
        return DomainSpec(
            name=self.name,
            territory_id=c.territory_id,
            domain_type=self.accel.domain_type,
            vcpus=c.vcpus,
            memory_mib=c.memory_mib,
            kernel=self.site.image.kernel,
            initrd=self.site.image.initrd,
            disk=self.site.disk,
            console_log=self.site.console_log,
            ssh_port=c.ports.ssh,
            service_port=c.ports.service,
            guest_service_port=c.guest_service_port,
            authorized_key=self.keys.public_key_openssh(),
            owner_pid=os.getpid(),
            owner_host=socket.gethostname(),
            owner_kind=c.owner_kind,
            owner_match=c.match_id,
            owner_started=process_started(os.getpid()),
            base_image=self.site.image.path,
            warm_disk=self.warm.disk if self.warm is not None else None,
            forward_address=self.site.forward_address,
            unprivileged_qemu=c.unprivileged_qemu,
            arena_nic=c.arena_nic,
            harness_bundle=c.harness_bundle,
        )

    async def boot(self) -> None:
        """Start the domain (creating the overlay on first boot); does not wait for SSH."""
        if await self.hypervisor.state(self.name) is not None:
            raise AoeError(
                f"territory {self.territory_id}: domain {self.name} already exists on "
                f"{self.hypervisor.uri}; remove leftovers with `aoe doctor --clean`"
            )
        if self.warm is not None:
            await asyncio.to_thread(create_overlay, self.warm.disk, self.overlay_path, self.disk_mib, "qcow2")
            self.keys.forget(LOOPBACK, self.ssh_port)
        elif not self.site.has_disk():
            await self.site.make_disk(self.disk_mib)
            self.keys.forget(LOOPBACK, self.ssh_port)  # a new disk means new host keys
        self.config.directory.mkdir(parents=True, exist_ok=True)
        self.console_path.write_bytes(b"")
        self.hypervisor.watch(self.name, self._record_event)
        if self.warm is not None:
            await self._restore(self.warm)
        else:
            await self.hypervisor.create(render_domain_xml(self.domain_spec()), autodestroy=self.site.autodestroy)
        await self.site.console_opened(self.console_path)

    async def _restore(self, warm: WarmSource) -> None:
        """Start from the template's saved state, under this guest's own definition (runtime.save_image)."""
        clone = TerritoryPaths(self.config.directory).warm_state
        try:
            await asyncio.to_thread(
                copy_with_definition, warm.template.saved_state, clone, render_domain_xml(self.domain_spec())
            )
            await self.hypervisor.restore(clone)
        except AoeError as error:
            raise WarmRestoreFailed(f"territory {self.territory_id}: {error}") from None
        finally:
            clone.unlink(missing_ok=True)  # the size of the guest's memory; the restored guest no longer needs it

    def _record_event(self, event: str) -> None:
        self.lifecycle_events.append((time.time(), event))

    async def state(self) -> str | None:
        return await self.hypervisor.state(self.name)

    @property
    def disk_mib(self) -> int:
        """The guest's disk size: the class's, but never below the image it copies on write."""
        return max(self.config.disk_mib or 0, image_mib(self.image))

    async def is_running(self) -> bool:
        """Whether the guest can still play; one paused by a disk error (full host disk) cannot."""
        state = await self.state()
        if state == "paused":  # by the operator, or by qemu when a write failed (werror=enospc/stop)
            return await self.hypervisor.state_reason(self.name) != ("paused", "ioerror")
        return state in _ALIVE_STATES

    async def grow_root_fs(self) -> None:
        """Let the root filesystem use a disk bigger than the image (online ext4 grow; a no-op otherwise, and for
        a warm start, whose template grew it)."""
        if self.disk_mib <= image_mib(self.image) or self.warm is not None:
            return
        result = await self.ssh.run("resize2fs /dev/vda", timeout=120)
        if result.exit_status != 0:
            raise AoeError(
                f"territory {self.territory_id}: could not grow the root filesystem to {self.disk_mib} MiB: "
                f"{(result.stderr or result.stdout).strip().splitlines()[-1:]}"
            )

    async def wait_for_ssh(self, timeout: float, stall_seconds: float = STALL_SECONDS) -> float:
        """Wait until SSH answers; returns the seconds it took. The error carries the console tail.

        Meanwhile a boot whose console stays silent for `stall_seconds` short of
        its login prompt is reset once (recorded as the event "boot-stall-reset").
        A warm start is not booting (its console stays silent): it is first given
        its own identity with the template's key.
        """
        started = time.monotonic()
        if self.warm is not None and not self._identity_given:
            await give_identity(
                self.warm.template, self.ssh_port, self.territory_id, self.keys.public_key_openssh(), timeout
            )
            self._identity_given = True
            await self.ssh.connect(max(timeout - (time.monotonic() - started), 1))
            return time.monotonic() - started
        watchdog = rescue_stalled_boot(self.console_path, self._reset_stalled_boot, stall_seconds)
        try:
            async with beside(watchdog, f"territory {self.territory_id}: the boot watchdog"):
                await self._connect_once_up(0, timeout)
        except SSHUnavailable as error:
            raise SSHUnavailable(f"{error}; console tail: {self.console_tail(6, separator=' | ')}") from None
        return time.monotonic() - started

    async def _connect_once_up(self, console_offset: int, timeout: float) -> None:
        """SSH to a guest that is booting: told by its console's login prompt past `console_offset` when it is up
        (runtime.ssh_greeting: a connection opened before is lost in the forward and would only be found late)."""
        self.ssh.reachable = ConsoleWatch(self.console_path, console_offset, pattern=LOGIN_PROMPT).saw_banner
        try:
            await self.ssh.connect(timeout)
        finally:
            self.ssh.reachable = always

    async def _reset_stalled_boot(self, event: str = "boot-stall-reset") -> None:
        self._record_event(event)
        try:
            await self.hypervisor.reset(self.name)
        except AoeError:
            pass  # the domain is gone; the SSH wait reports that itself

    async def run(self, command: str, timeout: float) -> CommandResult:
        return await self.ssh.run(command, timeout)

    async def boot_id(self) -> str | None:
        """The guest's boot id as it reports it (secondary evidence: root can forge it); None if not a UUID."""
        result = await self.ssh.run("/usr/bin/cat /proc/sys/kernel/random/boot_id", timeout=15)
        if result.exit_status != 0:
            raise AoeError(f"territory {self.territory_id}: cannot read boot id: {result.stderr.strip()[:200]}")
        return valid_boot_id(result.stdout)

    async def reboot(
        self, timeout: float, acpi_grace: float = ACPI_GRACE_SECONDS, restart_stall: float = RESTART_STALL_SECONDS
    ) -> RebootProof:
        """Reboot through libvirt and prove it from outside the guest; then wait until SSH answers again.

        ACPI power button first; a reset when libvirt has not seen the guest reset within
        `acpi_grace` seconds (or refused the request). A machine that restarted but shows no
        fresh kernel within `restart_stall` seconds is reset once more (see RESTART_STALL_SECONDS).
        Raises AoeError with a readable detail (and the console tail) when the guest does not
        come back within `timeout`.
        """
        started = time.monotonic()
        deadline = started + timeout
        phases: list[tuple[str, float]] = []

        def done(phase: str) -> None:
            phases.append((phase, time.monotonic() - started))

        before = await self._boot_id_or_none()
        done("boot-id-before")
        events_seen = len(self.lifecycle_events)
        console = ConsoleWatch.from_now(self.console_path)
        booted_from = console.offset
        caused: Cause = "acpi"
        try:
            await self.hypervisor.reboot_acpi(self.name)
            rebooted = await self._wait_until(
                lambda: self._rebooted_since(events_seen), min(acpi_grace, deadline - time.monotonic())
            )
        except GuestGone:
            raise
        except AoeError:
            rebooted = False  # libvirt refused the ACPI request: cut the power instead
        if not rebooted:
            if not await self.is_running():
                raise GuestGone(f"territory {self.territory_id}: the guest is gone (its VM stopped during the reboot)")
            caused = "reset-fallback"
            console = ConsoleWatch.from_now(self.console_path)
            booted_from = console.offset
            self._record_event("referee-reset")
            await self.hypervisor.reset(self.name)
        done("guest-reset")
        self.ssh.drop()
        if not await self._wait_until(console.saw_banner, min(restart_stall, deadline - time.monotonic())):
            await self._reset_stalled_restart(deadline)
        if not await self._wait_until(console.saw_banner, deadline - time.monotonic()):
            raise AoeError(
                f"territory {self.territory_id}: the guest did not come back within {timeout:g} s of the "
                f"{caused} reboot (no fresh kernel boot on the serial console); "
                f"console tail: {self.console_tail(6, separator=' | ')}"
            )
        done("kernel")
        await self._connect_before(deadline, caused, booted_from)
        done("ssh")
        after = await self._boot_id_or_none()
        done("boot-id-after")
        proven = (
            (("libvirt-event",) if self._rebooted_since(events_seen) else ())
            + (("referee-reset",) if caused == "reset-fallback" else ())
            + ("console-banner",)
        )
        proof = RebootProof(caused, proven, before, after, time.monotonic() - started, console.banner, tuple(phases))
        return dataclasses.replace(proof, proven_by=proven + ("boot-id",)) if proof.boot_id_changed else proof

    async def _reset_stalled_restart(self, deadline: float) -> None:
        """The machine restarted but its firmware never started the kernel: power-cycle it, once.

        Nothing of the player's runs between the reset and the kernel (the host supplies
        firmware and kernel), so the stall is the arena's fault; the guest had finished its
        shutdown, so the reset loses nothing of its disk.
        """
        if time.monotonic() >= deadline or not await self.is_running():
            return  # no time left, or the VM is gone: the banner wait reports that itself
        await self._reset_stalled_boot("restart-stall-reset")

    def _rebooted_since(self, index: int) -> bool:
        return any(event == "rebooted" for _, event in self.lifecycle_events[index:])

    async def _boot_id_or_none(self) -> str | None:
        try:
            return await self.boot_id()
        except GuestGone:
            raise
        except AoeError:
            return None  # a guest whose cat is broken still gets rebooted; its boot id just proves nothing

    @staticmethod
    async def _wait_until(condition: Callable[[], bool], seconds: float, poll: float = 0.25) -> bool:
        deadline = time.monotonic() + max(seconds, 0)
        while not condition():
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(poll)
        return True

    async def _connect_before(self, deadline: float, what: str, console_offset: int) -> None:
        """SSH back after a reboot; a boot that freezes silently on the way is reset once, as at first boot
        (a frozen guest is the arena's fault, and without this every later check would blame the player)."""
        watchdog = rescue_stalled_boot(self.console_path, self._reset_stalled_boot)
        try:
            async with beside(watchdog, f"territory {self.territory_id}: the boot watchdog"):
                await self._connect_once_up(console_offset, max(deadline - time.monotonic(), 1))
        except SSHUnavailable as error:
            raise AoeError(
                f"territory {self.territory_id}: the guest booted a fresh kernel after the {what} reboot "
                f"but SSH did not answer ({error}); console tail: {self.console_tail(6, separator=' | ')}"
            ) from None

    async def suspend(self) -> None:
        await self.hypervisor.suspend(self.name)

    async def resume(self) -> None:
        await self.hypervisor.resume(self.name)

    async def destroy(self) -> None:
        """Power off and remove the domain; safe to call twice or on a domain that never started."""
        await self.ssh.close()
        try:
            await self.hypervisor.destroy(self.name)
        finally:
            self.hypervisor.unwatch(self.name)
            await self.site.close(self.console_path)

    def console_tail(self, lines: int = 20, separator: str = "\n") -> str:
        """The last lines of the console; virtlogd may just have rotated it, so its last backup counts too."""
        raw = b""
        for path in (self.console_path, self.console_path.with_name(self.console_path.name + ".0")):
            try:
                with open(path, "rb") as log:
                    log.seek(max(0, log.seek(0, os.SEEK_END) - (_CONSOLE_TAIL_BYTES - len(raw))))
                    raw = log.read() + raw
            except OSError:
                if path == self.console_path:
                    return "(no console log)"
            if len(raw) >= _CONSOLE_TAIL_BYTES:
                break
        cleaned = [_ANSI.sub("", line).strip() for line in raw.decode("utf-8", errors="replace").splitlines()]
        kept = [line for line in cleaned if line][-lines:]
        return separator.join(kept) if kept else "(console log empty)"

    def ssh_command(self) -> str:
        """The exact command a human can paste to get a root shell in this guest."""
        return shlex.join(self.keys.openssh_argv(LOOPBACK, self.ssh_port))
