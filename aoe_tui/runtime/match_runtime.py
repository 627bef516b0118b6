"""The runtime as the engine sees it: all territories of one match, up and down together.

Everything is checked before the first VM starts (image, ports, libvirt, room
for every disk on the match directory's filesystem, who runs QEMU), guests
left by matches whose processes are gone are reaped (runtime.cleanup), all
guests boot in parallel, and teardown is idempotent and tolerant, so the engine
can call `close()` from any error path, even twice, even after a failed start.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from collections.abc import Awaitable, Callable, Iterable, Sequence

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.arena_segment import SegmentHub
from aoe_tui.runtime.domain_xml import ArenaNic, arena_mac
from aoe_tui.runtime.guest import GUEST_SERVICE_PORT, TerritoryConfig, TerritoryVM
from aoe_tui.runtime.guest_site import RemoteSite
from aoe_tui.runtime.host_link import HostLink
from aoe_tui.runtime.cleanup import reap_leftovers
from aoe_tui.runtime.hypervisor import DEFAULT_URI, Hypervisor, Outage
from aoe_tui.runtime.image import ImageInfo, image_mib, require_image
from aoe_tui.runtime.keys import MatchKeys
from aoe_tui.runtime.overlay import check_disk_room
from aoe_tui.runtime.qemu_user import STAGE_DIR, QemuUser, choose_for, stage_image, stage_read_only
from aoe_tui.runtime.kvm_probe import AccelChoice, choose_accel
from aoe_tui.runtime.ports import PortReservation, TerritoryPorts, host_lock_dir, reserve_ports
from aoe_tui.runtime.ssh import GuestGone
from aoe_tui.runtime.warm_start import TemplateClass, WarmRestoreFailed, WarmSource, image_stamp
from aoe_tui.runtime.warm_template import ensure_template
from aoe_tui.store.match_layout import MatchLayout

DEFAULT_SSH_TIMEOUT_S = 240.0


@dataclass(frozen=True)
class TerritorySpec:
    territory_id: str
    vcpus: int
    memory_mib: int
    uri: str = DEFAULT_URI
    guest_service_port: int = GUEST_SERVICE_PORT
    disk_mib: int | None = None  # the class's resources.disk_mib; never below the image's size
    arena_octet: int | None = None  # on the match's arena segment as <cidr>.<octet>, MAC 52:54:00:77:00:<octet>
    harness_bundle: Path | None = None  # a real harness runs in this guest: its bundle's disk, attached read-only


@dataclass(frozen=True)
class RemoteHost:
    """A remote hypervisor ready for matches: its link, the base image as it lives there, its accelerator."""

    link: HostLink
    image: ImageInfo
    accel: AccelChoice


class MatchRuntime:
    """VMs of one match. Layout in `match_dir`: `ssh/<id>/` (that territory's key, known_hosts), `territories/<id>/`."""

    def __init__(
        self,
        match_dir: Path,
        match_id: str,
        territories: Sequence[TerritorySpec],
        base_port: int | None = None,
        image: ImageInfo | None = None,
        ssh_timeout: float = DEFAULT_SSH_TIMEOUT_S,
        remote: RemoteHost | None = None,
        warm_start: bool = False,
        on_progress: Callable[[str], None] | None = None,
        outage: Outage | None = None,
    ) -> None:
        ids = [t.territory_id for t in territories]
        if len(set(ids)) != len(ids):
            raise AoeError(f"match {match_id}: territory ids must be unique, got {', '.join(ids)}")
        self.match_dir = Path(match_dir).absolute()  # libvirtd resolves relative paths in its own cwd
        self.match_id = match_id
        self.territories = list(territories)
        self.requested_base_port = base_port  # None: the first free block, found and locked on reserve
        self.ssh_timeout = ssh_timeout
        self._image = image
        self.remote = remote  # None: the guests run on this machine
        self.warm_start = warm_start  # restore eligible guests from a saved template (runtime.warm_start)
        self._progress = on_progress or (lambda _line: None)
        self.outage = outage or Outage()  # a libvirtd that went away mid-match: back again, or gone for good
        self._templates: dict[TemplateClass, WarmSource | None] = {}
        self.reservation: PortReservation | None = None
        self.keys: dict[str, MatchKeys] = {}
        self.vms: dict[str, TerritoryVM] = {}
        self.boot_seconds: dict[str, float] = {}
        self._hypervisors: dict[str, Hypervisor] = {}
        self.qemu_user: QemuUser | None = None
        self.segment: SegmentHub | None = None

    async def __aenter__(self) -> MatchRuntime:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """Boot every territory in parallel and wait until each answers SSH."""
        try:
            await self._prepare()
            await self._start_segment()
            started = time.monotonic()
            await _all_or_first_error(self._start_one(vm, started) for vm in self.vms.values())
        except BaseException:
            await self.close()
            raise

    async def _prepare(self) -> None:
        image = built = self._image or require_image()
        if self.remote is not None and any(t.arena_octet is not None for t in self.territories):
            raise AoeError(
                f"match {self.match_id}: its arena segment (conquest arenas such as first-contact) runs on a local "
                f"host only; host {self.remote.link.name} is remote"
            )
        accel = self.remote.accel if self.remote else await asyncio.to_thread(choose_accel, image.kernel)
        for uri in dict.fromkeys(t.uri for t in self.territories):
            hypervisor = self._hypervisors[uri] = await Hypervisor.connect(uri)
            hypervisor.outage = self.outage
            if self.remote is None and (reaped := await reap_leftovers(hypervisor)) is not None:
                self._progress(reaped)
        self.reserve_ports()  # after the reaping: a dead match's guests may hold the ports asked for
        if self.remote is not None:
            self.qemu_user = QemuUser(False, f"host {self.remote.link.name} is remote (its guests are not staged)")
        else:
            self.qemu_user = await asyncio.to_thread(choose_for, self.match_dir)
        if self.qemu_user.unprivileged:
            image = await asyncio.to_thread(stage_image, image, self.match_dir / STAGE_DIR, self.qemu_user)
        layout = MatchLayout(self.match_dir)
        for spec in self.territories:
            config = TerritoryConfig(
                match_id=self.match_id,
                territory_id=spec.territory_id,
                vcpus=spec.vcpus,
                memory_mib=spec.memory_mib,
                directory=layout.territory_directory(spec.territory_id),
                ports=self.ports[spec.territory_id],
                uri=spec.uri,
                guest_service_port=spec.guest_service_port,
                disk_mib=spec.disk_mib,
                unprivileged_qemu=self.qemu_user.unprivileged,
                arena_nic=self._arena_nic(spec),
                harness_bundle=spec.harness_bundle,
            )
            keys = self.keys[spec.territory_id] = MatchKeys.for_territory(
                layout.ssh_directory(spec.territory_id), self.match_id, spec.territory_id
            )
            site = await self._remote_site(spec.territory_id) if self.remote is not None else None
            warm = await self._warm_source(spec, config, built, accel)
            self.vms[spec.territory_id] = TerritoryVM(
                config, self._hypervisors[spec.uri], keys, image, accel, site, warm
            )
        if self.remote is None:
            check_disk_room(
                self.match_dir, {tid: vm.disk_mib for tid, vm in self.vms.items() if not vm.overlay_path.exists()}
            )

    async def _warm_source(
        self, spec: TerritorySpec, config: TerritoryConfig, image: ImageInfo, accel: AccelChoice
    ) -> WarmSource | None:
        """The template this guest is restored from (made on first use), or None for a cold boot: not asked for,
        not eligible (another host or URI, an arena NIC), or the template could not be made. `image` is the built
        image in the cache, not a match's staged link to it: the template outlives the match."""
        if not self.warm_start or self.remote is not None or spec.uri != DEFAULT_URI or spec.arena_octet is not None:
            return None
        hypervisor = self._hypervisors[spec.uri]
        disk_mib = max(config.disk_mib or 0, image_mib(image))
        template_class = TemplateClass(
            image.recipe_hash,
            image_stamp(image.path),
            accel.domain_type,
            spec.vcpus,
            spec.memory_mib,
            disk_mib,
            await hypervisor.version(),
            str(spec.harness_bundle or ""),
        )
        if template_class not in self._templates:
            self._templates[template_class] = await self._make_warm_source(template_class, hypervisor, image, accel)
        return self._templates[template_class]

    async def _make_warm_source(
        self, template_class: TemplateClass, hypervisor: Hypervisor, image: ImageInfo, accel: AccelChoice
    ) -> WarmSource | None:
        def building() -> None:
            self._progress(
                f"making the warm-start template for {template_class.describe()}: one cold boot, saved "
                "(once per image and class; later guests are restored from it)"
            )

        lease = None
        try:
            lease = await ensure_template(template_class, hypervisor, image, accel, building)
            template = lease.template
            disk = template.disk
            assert self.qemu_user is not None
            if self.qemu_user.unprivileged:
                disk = await asyncio.to_thread(
                    stage_read_only,
                    template.disk,
                    self.match_dir / STAGE_DIR / f"warm-{template_class.digest}.qcow2",
                    self.qemu_user,
                    "warm-start template disk",
                )
        except AoeError as error:
            if lease is not None:
                lease.release()
            self._progress(f"warm start unavailable ({error}); guests boot cold")
            return None
        self._progress(
            f"warm start: guests of {template_class.describe()} are restored from template {template_class.digest} "
            f"(its cold boot took {template.cold_boot_seconds:.0f} s)"
        )
        return WarmSource(lease, disk)

    async def _start_one(self, vm: TerritoryVM, started: float) -> None:
        """Boot (or restore) one guest and wait for its SSH; a warm start that fails is tried once cold."""
        try:
            await vm.boot()
            await self._wait(vm, started)
        except AoeError as error:
            if vm.warm is None or isinstance(error, GuestGone):
                raise
            self._progress(f"{vm.territory_id}: warm start failed ({error}); booting it cold")
            if isinstance(error, WarmRestoreFailed):
                vm.warm.lease.spoiled = True  # removed when this match lets go of it, if no other match holds it
            await vm.destroy()
            vm.overlay_path.unlink(missing_ok=True)
            vm.warm = None
            await vm.boot()
            await self._wait(vm, started)

    async def _remote_site(self, territory_id: str) -> RemoteSite:
        """The territory's files in the host's work directory, its two forwards reached through the link."""
        assert self.remote is not None
        link, ports = self.remote.link, self.ports[territory_id]
        tunnels = (await link.forward(ports.ssh), await link.forward(ports.service))
        return RemoteSite(link, self.remote.image, self.remote_directory / territory_id, tunnels)

    @property
    def remote_directory(self) -> PurePosixPath:
        """This match's folder in a remote host's work directory."""
        assert self.remote is not None
        return self.remote.link.work_dir / "matches" / self.match_id

    async def cpu_model(self) -> str:
        return await next(iter(self._hypervisors.values())).cpu_model()

    def _segment_ports(self) -> dict[str, int]:
        """UDP ports of the segment's members: the hub has the match's first port number, guests the next ones."""
        base = self.reserve_ports().base_port
        members = [t.territory_id for t in self.territories if t.arena_octet is not None]
        return {territory_id: base + 1 + index for index, territory_id in enumerate(members)}

    def _arena_nic(self, spec: TerritorySpec) -> ArenaNic | None:
        if spec.arena_octet is None:
            return None
        return ArenaNic(
            arena_mac(spec.arena_octet), self._segment_ports()[spec.territory_id], self.reserve_ports().base_port
        )

    async def _start_segment(self) -> None:
        members = self._segment_ports()
        if members:
            self.segment = SegmentHub(self.reserve_ports().base_port, {p: t for t, p in members.items()})
            await self.segment.start()

    def reserve_ports(self) -> PortReservation:
        """Find (or check) and lock this match's ports; idempotent until `close()` releases them."""
        if self.reservation is None:
            ids = [t.territory_id for t in self.territories]
            if self.remote is None:
                self.reservation = reserve_ports(ids, self.requested_base_port)
            else:
                spec = self.remote.link.spec
                self.reservation = reserve_ports(
                    ids, self.requested_base_port, host_lock_dir(spec.name), first_port=spec.guest_base_port
                )
        return self.reservation

    @property
    def ports(self) -> dict[str, TerritoryPorts]:
        return self.reserve_ports().ports

    async def _wait(self, vm: TerritoryVM, started: float) -> None:
        await vm.wait_for_ssh(self.ssh_timeout)
        self.boot_seconds[vm.territory_id] = time.monotonic() - started
        await vm.grow_root_fs()

    def vm(self, territory_id: str) -> TerritoryVM:
        try:
            return self.vms[territory_id]
        except KeyError:
            raise AoeError(f"match {self.match_id}: no running territory {territory_id}") from None

    async def close(self) -> None:
        """Destroy every VM and close libvirt connections; safe to call repeatedly."""
        vms, self.vms = self.vms, {}
        await asyncio.gather(*(vm.destroy() for vm in vms.values()), return_exceptions=True)
        if self.remote is not None and not self.remote.link.lost.is_set():
            try:
                await self.remote.link.run(f"rm -rf {shlex.quote(str(self.remote_directory))}", check=False)
            except AoeError:
                pass  # the host went away meanwhile; its work directory is scratch
        hypervisors, self._hypervisors = self._hypervisors, {}
        await asyncio.gather(*(h.close() for h in hypervisors.values()), return_exceptions=True)
        segment, self.segment = self.segment, None
        if segment is not None:
            segment.close()
        reservation, self.reservation = self.reservation, None
        if reservation is not None:
            reservation.release()
        sources, self._templates = self._templates, {}
        for source in sources.values():
            if source is not None and source.lease.release():
                self._progress(f"warm-start template {source.template.directory.name} would not restore: removed")
        shutil.rmtree(self.match_dir / STAGE_DIR, ignore_errors=True)  # links and copies, not a record


async def _all_or_first_error(operations: Iterable[Awaitable[object]]) -> None:
    """Run all operations to completion (none left dangling), then raise the first failure."""
    results = await asyncio.gather(*operations, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
