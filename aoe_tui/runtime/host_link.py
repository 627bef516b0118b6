"""The coordinator's one SSH connection to a remote hypervisor, multiplexed for everything it needs there.

A remote host's guests forward their SSH and service ports to *that* host's
loopback, so the referee, the verifiers and the adapters reach them through
local forwards on this machine's 127.0.0.1 carried by this connection (nothing
listens anywhere else). The same connection runs the host-side commands
(`qemu-img create`, cleanup), mirrors the guests' console logs while they run
(the reboot proof and boot watchdog read them locally, as for a local guest),
uploads the guest image once per recipe hash (SFTP, sparse) and fetches the
console logs at the end. When it drops, `lost` is set with the reason: every
match on the host is then an infrastructure failure, never a player's.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import asyncssh

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.hosts import HostSpec
from aoe_tui.runtime.image import MANIFEST, ImageInfo
from aoe_tui.runtime.ports import LOOPBACK
from aoe_tui.runtime.ssh import close_gracefully

# The mirror of a remote console is bounded as virtlogd bounds a local one (`max_size` 2 MiB, `max_backups` 3):
# a guest flooding its serial console fills neither host's disk.
CONSOLE_FILE_MAX_BYTES = 2 * 1024 * 1024
CONSOLE_BACKUPS = 3

Progress = Callable[[str], None]
CONNECT_TIMEOUT_S = 20.0
KEEPALIVE_INTERVAL_S = 5
KEEPALIVE_COUNT = 3
PROGRESS_EVERY_S = 5.0
_IMAGE_FILES = ("base.raw", "vmlinuz", "initrd.img", MANIFEST)  # the manifest last: its presence means complete


class HostUnreachable(AoeError):
    """The host's SSH connection could not be made, or was lost."""


@dataclass
class Tunnel:
    """A local forward 127.0.0.1:`local_port` -> the host's 127.0.0.1:`remote_port`; counts what went through."""

    remote_port: int
    listener: asyncssh.SSHListener
    connections: int = 0

    @property
    def local_port(self) -> int:
        return self.listener.get_port()

    def _accept(self, _origin_host: str, _origin_port: int) -> bool:
        self.connections += 1
        return True

    def close(self) -> None:
        self.listener.close()


@dataclass
class HostLink:
    spec: HostSpec
    lost: asyncio.Event = field(default_factory=asyncio.Event)
    lost_reason: str | None = None
    _connection: asyncssh.SSHClientConnection | None = None
    _closing: bool = False
    _watch: asyncio.Task | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def work_dir(self) -> PurePosixPath:
        return PurePosixPath(self.spec.work_dir)

    async def connect(self) -> None:
        ssh = self.spec.ssh
        assert ssh is not None, "only a remote host has a link"
        try:
            self._connection = await asyncssh.connect(
                ssh.host,
                ssh.port,
                username=ssh.user,
                client_keys=[ssh.key_file],
                known_hosts=ssh.known_hosts,
                connect_timeout=CONNECT_TIMEOUT_S,
                login_timeout=CONNECT_TIMEOUT_S,
                keepalive_interval=KEEPALIVE_INTERVAL_S,
                keepalive_count_max=KEEPALIVE_COUNT,
                agent_path=None,
                config=[],
                preferred_auth="publickey",
            )
        except (TimeoutError, OSError, asyncssh.Error) as error:
            raise HostUnreachable(
                f"host {self.name}: SSH to {ssh.user}@{ssh.host}:{ssh.port} failed: {_say(error)}"
            ) from None
        self._watch = asyncio.create_task(self._watch_connection(self._connection))

    async def _watch_connection(self, connection: asyncssh.SSHClientConnection) -> None:
        """However the wait for the connection's end ends (closed, or raising), the link is lost, with the reason."""
        reason = "its SSH connection was lost"
        try:
            await connection.wait_closed()
        except Exception as error:  # noqa: BLE001 - any end of this wait is the link's loss, told through `lost`
            reason = f"its SSH connection failed: {_say(error)}"
        if not self._closing:
            self.lost_reason = f"host {self.name}: {reason}"
            self.lost.set()

    def _live(self) -> asyncssh.SSHClientConnection:
        if self._connection is None or self.lost.is_set():
            raise HostUnreachable(self.lost_reason or f"host {self.name}: not connected")
        return self._connection

    async def forward(self, remote_port: int) -> Tunnel:
        """A new local port on 127.0.0.1 reaching `remote_port` on the host's loopback (its `guest_address`)."""
        tunnel = Tunnel(remote_port, None)  # type: ignore[arg-type]  # the listener needs the tunnel's counter
        try:
            tunnel.listener = await self._live().forward_local_port(
                LOOPBACK, 0, self.spec.guest_address, remote_port, accept_handler=tunnel._accept
            )
        except (OSError, asyncssh.Error) as error:
            raise HostUnreachable(
                f"host {self.name}: cannot forward to its port {remote_port}: {_say(error)}"
            ) from None
        return tunnel

    async def run(self, command: str, timeout: float = 120.0, check: bool = True) -> asyncssh.SSHCompletedProcess:
        """A shell command on the host; a non-zero exit raises AoeError with its stderr when `check`."""
        try:
            result = await asyncio.wait_for(self._live().run(command, check=False), timeout)
        except (TimeoutError, OSError, asyncssh.Error) as error:
            raise HostUnreachable(f"host {self.name}: `{command[:60]}` failed: {_say(error)}") from None
        if check and result.exit_status != 0:
            raise AoeError(
                f"host {self.name}: `{command[:60]}` exited {result.exit_status}: {str(result.stderr).strip()[:300]}"
            )
        return result

    async def mirror(self, remote: PurePosixPath, local: Path) -> asyncio.Task:
        """Copy `remote` into `local` as it grows (a console log): `tail -F` over the connection, until cancelled."""
        local.parent.mkdir(parents=True, exist_ok=True)
        # tail lives until our end of the channel closes (cat sees EOF), not until it next writes to a closed
        # pipe: a log that stopped growing would otherwise keep it running on the host for good.
        command = f"tail -c +1 -F {shlex.quote(str(remote))} 2>/dev/null & cat > /dev/null; kill $!"
        process = await self._live().create_process(command, encoding=None)

        async def pump() -> None:
            try:
                out = open(local, "ab")  # noqa: SIM115  (reopened on rotation below; closed in the finally)
                try:
                    while chunk := await process.stdout.read(65536):
                        if out.tell() + len(chunk) > CONSOLE_FILE_MAX_BYTES:
                            out.close()
                            _rotate(local)
                            out = open(local, "ab")  # noqa: SIM115  (the same handle, rotated)
                        out.write(chunk)
                        out.flush()
                finally:
                    out.close()
            except (OSError, asyncssh.Error):
                pass  # the connection went: what arrived stays, `lost` tells the match
            finally:
                process.close()

        return asyncio.create_task(pump())

    async def fetch(self, remote: PurePosixPath, local: Path) -> None:
        """Replace `local` with the host's `remote` file (SFTP)."""
        try:
            async with self._live().start_sftp_client() as sftp:
                await sftp.get(str(remote), str(local))
        except (OSError, asyncssh.Error) as error:
            raise AoeError(f"host {self.name}: cannot fetch {remote}: {_say(error)}") from None

    def image_dir(self, recipe_hash: str) -> PurePosixPath:
        return self.work_dir / "images" / recipe_hash

    async def has_image(self, image: ImageInfo) -> bool:
        result = await self.run(f"cat {shlex.quote(str(self.image_dir(image.recipe_hash) / MANIFEST))}", check=False)
        try:
            return result.exit_status == 0 and json.loads(str(result.stdout)).get("recipe_hash") == image.recipe_hash
        except ValueError:
            return False

    async def ensure_image(self, image: ImageInfo, progress: Progress) -> ImageInfo:
        """The image as it lives on the host (paths there), uploaded first when the host lacks this recipe."""
        final = self.image_dir(image.recipe_hash)
        # The host's own paths (PurePosixPath), where ImageInfo declares this machine's Path: only passed on to it.
        remote = ImageInfo(final / "base.raw", final / "vmlinuz", final / "initrd.img", image.recipe_hash)  # type: ignore[arg-type]
        if await self.has_image(image):
            progress(f"host {self.name}: image {image.recipe_hash} present")
            return remote
        staging = final.with_name(f".upload-{image.recipe_hash}")
        await self.run(f"rm -rf {shlex.quote(str(staging))} && mkdir -p {shlex.quote(str(staging))}")
        sources = [image.path.parent / name for name in _IMAGE_FILES]
        total = sum(s.stat().st_size for s in sources)
        done_before = 0
        last_said = [time.monotonic()]

        def report(_source: bytes, _target: bytes, done: int, _size: int) -> None:
            if time.monotonic() - last_said[0] >= PROGRESS_EVERY_S:
                last_said[0] = time.monotonic()
                progress(
                    f"host {self.name}: uploading image {image.recipe_hash}: {(done_before + done) * 100 // total}%"
                )

        progress(f"host {self.name}: uploading image {image.recipe_hash} ({total // (1024 * 1024)} MiB, sparse)")
        try:
            async with self._live().start_sftp_client() as sftp:
                for source in sources:
                    target, size = str(staging / source.name), source.stat().st_size
                    await sftp.put(str(source), target, sparse=True, progress_handler=report)
                    await sftp.truncate(target, size)  # a sparse copy stops at the last data: the tail hole too
                    done_before += size
        except (OSError, asyncssh.Error) as error:
            raise HostUnreachable(f"host {self.name}: image upload failed: {_say(error)}") from None
        await self.run(f"rm -rf {shlex.quote(str(final))} && mv {shlex.quote(str(staging))} {shlex.quote(str(final))}")
        progress(f"host {self.name}: image {image.recipe_hash} uploaded")
        return remote

    async def close(self) -> None:
        self._closing = True
        connection, self._connection = self._connection, None
        if connection is not None:
            await close_gracefully(connection)
        if self._watch is not None:
            self._watch.cancel()


def _rotate(log: Path) -> None:
    """`log` becomes `log.0`, `log.0` becomes `log.1` and so on, the oldest dropped: virtlogd's own scheme, which
    `TerritoryVM.console_tail` reads."""
    for index in range(CONSOLE_BACKUPS - 1, 0, -1):
        older = log.with_name(f"{log.name}.{index - 1}")
        if older.exists():
            older.replace(log.with_name(f"{log.name}.{index}"))
    log.replace(log.with_name(f"{log.name}.0"))


def _say(error: BaseException) -> str:
    return " ".join((str(error) or type(error).__name__).split())
