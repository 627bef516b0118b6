"""Real territories: the runtime's libvirt VMs behind the referee's `TerritoryHost` seam.

A thin adapter: the runtime (`MatchRuntime`, `TerritoryVM`) boots, reboots
and talks SSH; this module only translates its errors into the referee's
vocabulary — a guest that is gone is an arena fault (`TerritoryUnavailable`),
a reboot that does not come back is a failed milestone (`RebootFailed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
from collections.abc import Callable

from aoe_tui.agents import protocol as p
from aoe_tui.agents.harnesses import RECIPE
from aoe_tui.agents.harnesses.bundle import build_bundle
from aoe_tui.agents.registry import runs_in_guest
from aoe_tui.domain import events as ev
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.task_failures import failure_recorder
from aoe_tui.engine.territory import (
    STOPPED_DETAIL,
    CommandResult,
    RebootFailed,
    RebootProof,
    TerritoryHost,
    TerritoryUnavailable,
)
from aoe_tui.runtime.guest import TerritoryVM
from aoe_tui.runtime.hypervisor import DEFAULT_URI, Outage
from aoe_tui.runtime.image_layer import ensure_image, layer_for
from aoe_tui.runtime.match_runtime import MatchRuntime, RemoteHost, TerritorySpec
from aoe_tui.runtime.ports import LOOPBACK
from aoe_tui.runtime.ssh import GuestGone
from aoe_tui.store.event_log import LogWriteFailed
from aoe_tui.store.match_layout import MatchLayout


# A real harness runs inside its agent's guest, beside the agent's service: its guest gets this much memory on
# top of its class (measured in the guest by benchmarks/harness_start.py: the native harnesses peak at 180-420 MB,
# Gemini CLI's Node more), so the service the player builds has its class's memory whichever harness plays.
HARNESS_MEMORY_MIB = 1024


class LibvirtTerritory:
    host = LOOPBACK

    def __init__(self, vm: TerritoryVM) -> None:
        self.vm = vm
        self.territory_id = vm.territory_id
        self.ssh_port = vm.ssh_port
        self.service_port = vm.service_port

    def access_env(self) -> dict[str, str]:
        return {
            p.ENV_SSH_KEY: str(self.vm.keys.private_key_path),
            p.ENV_KNOWN_HOSTS: str(self.vm.keys.known_hosts_path),
            p.ENV_SSH_USER: "root",
        }

    def ssh_command(self) -> str:
        return self.vm.ssh_command()

    async def run(self, command: str, timeout: float) -> CommandResult:
        try:
            return await self.vm.run(command, timeout)
        except AoeError as error:
            raise TerritoryUnavailable(str(error)) from None

    async def reboot(self, timeout: float) -> RebootProof:
        try:
            return await self.vm.reboot(timeout)
        except GuestGone as error:
            raise TerritoryUnavailable(str(error)) from None
        except AoeError as error:
            raise RebootFailed(str(error)) from None

    async def suspend(self) -> None:
        await self.vm.suspend()

    async def resume(self) -> None:
        await self.vm.resume()

    async def alive(self) -> bool:
        return await self.vm.is_running()

    async def down_detail(self) -> str:
        state = await self.vm.hypervisor.state_reason(self.vm.name)
        if state == ("paused", "ioerror"):
            return "the VM was paused by a failing disk write (is the host's disk full?)"
        if state is None:
            return f"{STOPPED_DETAIL} (libvirt no longer has its domain)"
        return f"{STOPPED_DETAIL} (libvirt state {state[0]})"

    async def power_off(self) -> None:
        """Eliminated (conquest): the guest is switched off for good; teardown removes what is left."""
        await self.vm.destroy()

    def console_tail(self, lines: int = 40) -> str:
        return self.vm.console_tail(lines)


def match_id_for(match_dir: MatchDirectory) -> str:
    """Short and unique per run: libvirt domain names are `aoe-<match id>-<territory>`."""
    slug = re.sub(r"[^a-z0-9]+", "-", match_dir.root.resolve().name.lower()).strip("-")[:24] or "match"
    return f"{slug}-{secrets.token_hex(3)}"


def told_on_loop(recorder: MatchRecorder, stage: str) -> Callable[[str], None]:
    """Progress of a build running in a worker thread (the image, the harness bundle), told on the loop, where the
    recorder and its subscribers live."""
    loop = asyncio.get_running_loop()

    def tell(line: str) -> None:
        loop.call_soon_threadsafe(recorder.progress, stage, line)

    return tell


def _note_outage(recorder: MatchRecorder, line: str) -> None:
    """libvirtd came back: noted as the arena's failure, the match goes on. Told from the hypervisor's reconnect
    task, which must not raise: a log that refuses the note has told the runner already (it stops the match)."""
    with contextlib.suppress(LogWriteFailed):
        recorder.emit(ev.InfrastructureFailure(component="libvirt", detail=line))


HostLost = Callable[[str], None]
InfrastructureLost = Callable[[str, str], object]


class LibvirtProvider:
    """The guests of one match on one hypervisor: this machine's by default, or a named host of `--hosts`.

    `host_name` (a `--hosts` run) records the host and its CPU model in `match.json`; `remote` puts the guests
    on a remote host behind its link, and `on_lost(reason)` is told when that link drops mid-match.

    libvirtd restarting mid-match is noted in the log as the arena's `infrastructure_failure` (the match goes
    on: the hypervisor reconnects); libvirtd gone past its reconnect bound is `on_infrastructure_lost("libvirt",
    detail)`, which the runner sets (`MatchRunner`: the match is aborted, its guests destroyed all the same)."""

    def __init__(
        self,
        uri: str = DEFAULT_URI,
        base_port: int | None = None,
        host_name: str | None = None,
        remote: RemoteHost | None = None,
        on_lost: HostLost | None = None,
    ) -> None:
        self.uri = uri
        self.base_port = base_port
        self.host_name = host_name
        self.remote = remote
        self.on_lost = on_lost
        self.on_infrastructure_lost: InfrastructureLost | None = None
        self.runtime: MatchRuntime | None = None
        self._watch: asyncio.Task | None = None

    async def boot(
        self, manifest: Manifest, match_dir: MatchDirectory, recorder: MatchRecorder, clock: MatchClock
    ) -> tuple[dict[str, TerritoryHost], list[str]]:
        # The bundle first: a harness that cannot be installed stops the match before anything else is made.
        in_guest = {agent.territory for agent in manifest.agents if runs_in_guest(agent.adapter)}
        bundle = None
        if in_guest:
            recorder.progress("harnesses", "checking the harness bundle")
            bundle = (await asyncio.to_thread(build_bundle, RECIPE, False, told_on_loop(recorder, "harnesses"))).image
            recorder.progress("harnesses", f"harness bundle ready: {bundle}")
        recorder.progress("image", "checking the guest image")
        image_names = {t.image for t in manifest.territories}
        image = await asyncio.to_thread(ensure_image, image_names, told_on_loop(recorder, "image"))
        layer = layer_for(image_names)
        self._watch_remote(recorder)
        recorder.progress("image", f"guest image ready: {image.path}")
        segment = layer.segment if layer is not None else None
        specs = [
            TerritorySpec(
                t.id,
                manifest.territory_class(t.id).resources.vcpus,
                manifest.territory_class(t.id).resources.memory_mib + (HARNESS_MEMORY_MIB if t.id in in_guest else 0),
                self.uri,
                disk_mib=manifest.territory_class(t.id).resources.disk_mib,
                arena_octet=segment.octet(t.id) if segment is not None else None,
                harness_bundle=bundle if t.id in in_guest else None,
            )
            for t in manifest.territories
        ]
        self.runtime = MatchRuntime(
            match_dir.root,
            match_id_for(match_dir),
            specs,
            self.base_port,
            image,
            remote=self.remote,
            warm_start=True,
            on_progress=lambda line: recorder.progress("boot", line),
            outage=Outage(
                noted=lambda line: _note_outage(recorder, line),
                gone=self._libvirt_gone,
            ),
        )
        reservation = self.runtime.reserve_ports()
        match_dir.write_ports(reservation.to_json())
        last = reservation.base_port + 2 * len(specs) - 1
        recorder.progress(
            "ports",
            f"loopback ports {reservation.base_port}..{last} "
            f"({'chosen automatically' if reservation.automatic else 'from --base-port'})",
        )
        where = LOOPBACK if self.remote is None else self.remote.link.spec.guest_address
        through = "" if self.remote is None else f" on host {self.host_name}, reached through its SSH link"
        for spec in specs:
            ports = self.runtime.ports[spec.territory_id]
            recorder.progress(
                "boot",
                f"booting VM (ssh {where}:{ports.ssh}, service {where}:{ports.service}{through})",
                spec.territory_id,
            )
        await self.runtime.start()
        if self.host_name is not None:
            cpu = await self.runtime.cpu_model()
            match_dir.record_host({"name": self.host_name, "uri": self.uri, "cpu_model": cpu})
            recorder.progress("host", f"on host {self.host_name} ({self.uri}, CPU {cpu})")
        user = self.runtime.qemu_user
        assert user is not None, "MatchRuntime.start() chooses the QEMU user"
        recorder.progress(
            "boot",
            f"QEMU runs as uid {user.uid} ({user.reason})"
            if user.unprivileged
            else f"QEMU runs as root: {user.reason}",
        )
        order = sorted(self.runtime.boot_seconds, key=self.runtime.boot_seconds.__getitem__)
        for territory_id in order:
            recorder.progress(
                "ssh", f"SSH preflight passed after {self.runtime.boot_seconds[territory_id]:.1f} s", territory_id
            )
        return {tid: LibvirtTerritory(vm) for tid, vm in self.runtime.vms.items()}, order

    def _libvirt_gone(self, detail: str) -> None:
        if self.on_infrastructure_lost is not None:
            self.on_infrastructure_lost("libvirt", detail)

    def _watch_remote(self, recorder: MatchRecorder) -> None:
        """A remote host's link that drops while the match runs is reported once, as the host's failure; a
        watch that fails itself (its `on_lost` raised) is recorded as the arena's (engine.task_failures)."""
        remote, on_lost = self.remote, self.on_lost
        if remote is None or on_lost is None:
            return

        async def watch() -> None:
            await remote.link.lost.wait()
            on_lost(remote.link.lost_reason or f"host {remote.link.name} lost")

        self._watch = asyncio.create_task(watch())
        self._watch.add_done_callback(failure_recorder(recorder, None, f"host {remote.link.name} link watch"))

    async def teardown(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.cancel()
        if self.runtime is None:
            return
        runtime, self.runtime = self.runtime, None
        await runtime.close()
        for territory in MatchLayout(runtime.match_dir).territories():
            territory.overlay.unlink(missing_ok=True)  # gigabytes of scratch, not a record
