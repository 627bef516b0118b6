"""The hypervisors of one `--hosts` run: preflight once, then placement, providers and who was lost.

One coordinator, no daemon: each remote host gets one SSH link for the whole
run (every match placed there shares it) and the base image checked there by
its recipe hash, uploaded when missing. A host that fails preflight is skipped
with a line saying why; a host whose link drops later is lost for the rest of
the run, and its running match becomes an infrastructure failure (the series
plays the round again on another host).
"""

from __future__ import annotations

from collections.abc import Callable

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import Capacity, HostSpec, Inventory
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.libvirt_host import HostLost, LibvirtProvider
from aoe_tui.engine.placement import HostLoad, choose_host
from aoe_tui.runtime.host_link import HostLink
from aoe_tui.runtime.hypervisor import Hypervisor
from aoe_tui.runtime.image import require_image
from aoe_tui.runtime.image_layer import layer_for
from aoe_tui.runtime.kvm_probe import AccelChoice
from aoe_tui.runtime.match_runtime import RemoteHost

Report = Callable[[str], None]


class HostPool:
    def __init__(self, inventory: Inventory, report: Report = print) -> None:
        self.inventory = inventory
        self.report = report
        self.loads = {h.name: HostLoad(h.name, h.capacity) for h in inventory.hosts}
        self.remotes: dict[str, RemoteHost] = {}
        self._lost: dict[str, str] = {}

    @property
    def names(self) -> list[str]:
        return list(self.loads)

    async def open(self, manifest: Manifest) -> None:
        """Preflight every host (libvirt answers; a remote one: its link and the image there); skip the failures.

        An arena on an image layer with an arena segment (first-contact) runs on local hosts only."""
        local_only = layer_for({t.image for t in manifest.territories}) is not None
        self.loads = {h.name: HostLoad(h.name, h.capacity) for h in self.inventory.hosts}
        for host in self.inventory.hosts:
            try:
                if host.remote and local_only:
                    raise AoeError("the arena's segment (first-contact) runs on local hosts only")
                await self._preflight(host)
            except AoeError as error:
                del self.loads[host.name]
                self.report(f"host {host.name} skipped: {error}")
                continue
            self.report(
                f"host {host.name} ready: {host.uri}, {host.capacity.vcpus} vCPUs, {host.capacity.memory_mib} MiB"
            )
        if not self.loads:
            raise AoeError("no host of the inventory passed preflight; `aoe doctor --hosts FILE` says more")

    async def _preflight(self, host: HostSpec) -> None:
        if host.remote:
            link = HostLink(host)
            await link.connect()
            self.remotes[host.name] = RemoteHost(
                link,
                await link.ensure_image(require_image(), self.report),
                AccelChoice(host.accel, f"hosts file: host {host.name}"),
            )
        hypervisor = await Hypervisor.connect(host.uri)
        await hypervisor.close()

    def place(self, round_number: int, need: Capacity) -> str | None:
        """The host taking this round now (its capacity is held until `release`), or None while none has room."""
        up = [load for name, load in self.loads.items() if self.lost(name) is None]
        chosen = choose_host(up, need, round_number)
        if chosen is None:
            return None
        chosen.take(need)
        return chosen.name

    def release(self, name: str, need: Capacity) -> None:
        self.loads[name].give_back(need)

    def could_ever_fit(self, need: Capacity) -> bool:
        return any(load.fits(need, when_idle=True) for name, load in self.loads.items() if self.lost(name) is None)

    def lost(self, name: str) -> str | None:
        """Why the host is gone for this run, or None while it is up."""
        remote = self.remotes.get(name)
        if remote is not None and remote.link.lost.is_set():
            self._lost.setdefault(name, remote.link.lost_reason or f"host {name}: lost")
        return self._lost.get(name)

    def mark_lost(self, name: str, reason: str) -> None:
        self._lost.setdefault(name, reason)

    def provider(self, name: str, on_lost: HostLost | None = None) -> LibvirtProvider:
        return LibvirtProvider(
            self.inventory.host(name).uri, host_name=name, remote=self.remotes.get(name), on_lost=on_lost
        )

    async def close(self) -> None:
        remotes, self.remotes = self.remotes, {}
        for remote in remotes.values():
            await remote.link.close()
