"""Where one guest's files live and how the coordinator reaches its forwards: this machine, or a remote host.

A `TerritoryVM` is the same on either; only this differs. On this machine the
overlay and console log are in the match directory and the guest's loopback
forwards are used as they are. On a remote hypervisor the overlay and console
log are in the host's work directory (made and removed over its SSH link), the
console log is mirrored live into the match directory (so the reboot proof and
the boot watchdog read a local file either way) and fetched whole at the end,
and the forwards are reached through the link's tunnels.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path, PurePath, PurePosixPath
from typing import Protocol

from aoe_tui.domain.errors import AoeError
from aoe_tui.runtime.host_link import HostLink, Tunnel
from aoe_tui.runtime.image import ImageInfo
from aoe_tui.runtime.overlay import create_overlay, overlay_argv
from aoe_tui.runtime.ports import LOOPBACK, TerritoryPorts
from aoe_tui.runtime.side_task import stop_task
from aoe_tui.store.match_layout import CONSOLE_LOG_NAME, OVERLAY_NAME, TerritoryPaths


class GuestSite(Protocol):
    @property
    def image(self) -> ImageInfo:
        """The base image as the hypervisor sees it (its paths on that host)."""

    @property
    def disk(self) -> PurePath:
        """The overlay, on the hypervisor's filesystem."""

    @property
    def console_log(self) -> PurePath:
        """Where the hypervisor writes the serial console."""

    @property
    def access(self) -> TerritoryPorts:
        """Where the coordinator reaches the guest's SSH and service (on 127.0.0.1)."""

    @property
    def autodestroy(self) -> bool:
        """The domain dies with the libvirt connection that made it."""

    @property
    def forward_address(self) -> str:
        """The hypervisor's loopback address the guest's forwards bind to."""

    def has_disk(self) -> bool: ...

    async def make_disk(self, size_mib: int) -> None: ...

    async def console_opened(self, local_console: Path) -> None: ...

    async def close(self, local_console: Path) -> None: ...


class LocalSite:
    """A guest on this machine: everything in the match directory, forwards used directly."""

    autodestroy = False
    forward_address = LOOPBACK

    def __init__(self, paths: TerritoryPaths, image: ImageInfo, ports: TerritoryPorts) -> None:
        self.image = image
        self.disk = paths.overlay
        self.console_log = paths.console_log
        self.access = ports

    def has_disk(self) -> bool:
        return self.disk.exists()

    async def make_disk(self, size_mib: int) -> None:
        await asyncio.to_thread(create_overlay, self.image.path, self.disk, size_mib)

    async def console_opened(self, local_console: Path) -> None:
        return None  # the hypervisor writes the match directory's file itself

    async def close(self, local_console: Path) -> None:
        return None


class RemoteSite:
    """A guest on a remote hypervisor, its files in `directory` there, reached through `tunnels` (ssh, service)."""

    autodestroy = True

    def __init__(
        self, link: HostLink, image: ImageInfo, directory: PurePosixPath, tunnels: tuple[Tunnel, Tunnel]
    ) -> None:
        self.link = link
        self.image = image
        self.directory = directory
        self.disk = directory / OVERLAY_NAME
        self.console_log = directory / CONSOLE_LOG_NAME
        self.tunnels = tunnels
        self.forward_address = link.spec.guest_address
        self.access = TerritoryPorts(tunnels[0].local_port, tunnels[1].local_port)
        self._made = False
        self._mirror: asyncio.Task | None = None

    def has_disk(self) -> bool:
        return self._made

    async def make_disk(self, size_mib: int) -> None:
        temporary = f"{self.disk}.tmp"
        await self.link.run(
            f"mkdir -p {shlex.quote(str(self.directory))} && "
            f"{shlex.join(overlay_argv(str(self.image.path), temporary, size_mib))} && "
            f"mv -f {shlex.quote(temporary)} {shlex.quote(str(self.disk))} && : > {shlex.quote(str(self.console_log))}"
        )
        self._made = True

    async def console_opened(self, local_console: Path) -> None:
        self._mirror = await self.link.mirror(self.console_log, local_console)

    async def close(self, local_console: Path) -> None:
        """Stop mirroring, fetch the whole console log (when the host is still there), close the tunnels."""
        mirror, self._mirror = self._mirror, None
        if mirror is not None:
            mirror.cancel()
        try:
            if self._made and not self.link.lost.is_set():
                await self.link.fetch(self.console_log, local_console)
        except AoeError:
            pass  # the mirrored copy stays; the host's own file goes with its work directory
        finally:
            for tunnel in self.tunnels:
                tunnel.close()
        await stop_task(mirror, f"host {self.link.name}: the console mirror")
