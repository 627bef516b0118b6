"""A Zero-Downtime Rollout "guest" on this host, for fast tests (tests.engine.namespaced_guest).

The seed fills /var/lib/rollout, v1 (8081) and the proxy (8080) run in the
namespace, and v2's slot runs /opt/rollout/v2.py once a builder wrote it.
`GuestTerritory` makes a guest a referee territory: its public port is a
loopback TCP port on this host relayed (through the guest's unix socket) to
8080 in the namespace, so the real referee, its continuity monitor and the
real verifiers all reach it from outside, as they reach a VM's forwarded port.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from pathlib import Path

from aoe_tui.engine.territory import STOPPED_DETAIL, CommandResult, RebootProof
from tests.engine.namespaced_guest import GuestSpec, NamespacedGuest
from tests.fixture_paths import PROJECT

ARENA = PROJECT / "arenas" / "zero-downtime-rollout"
STATE = "{root}/var/lib/rollout"
LIB = "{root}/usr/local/lib/aoe"

SPEC = GuestSpec(
    arena=ARENA,
    territory="rollout-one",
    guest_dirs=("/var/lib/rollout", "/usr/local/lib/aoe", "/etc/systemd/system", "/opt/rollout", "/etc/aoe-rollout"),
    serving={"rollout-v1.service": 8081, "rollout-proxy.service": 8080, "rollout-v2.service": 8082},
    start={
        "rollout-v1.service": f"python3 {LIB}/rollout-v1.py",
        "rollout-proxy.service": f"python3 {LIB}/rollout-proxy.py",
        "rollout-v2.service": "python3 {root}/opt/rollout/v2.py",
    },
    seed=f"ROLLOUT_DIR={STATE} ROLLOUT_OPT={{root}}/opt/rollout sh {LIB}/rollout-seed",
    env={"ROLLOUT_DIR": STATE, "ROLLOUT_RELAY_FILE": "{root}/etc/aoe-rollout/relay-timeout-ms"},
    booted=("rollout-v1.service", "rollout-proxy.service"),
)


class RolloutGuest(NamespacedGuest):
    def __init__(self, work: Path) -> None:
        super().__init__(SPEC, work)

    def reboot(self) -> None:
        """The units stopped, then a boot: v2's enabled slot comes back too once it has a program."""
        self.stop_listeners()
        super().reboot()
        if self.path("/opt/rollout/v2.py").exists():
            assert self.run("systemctl start rollout-v2.service").returncode == 0
            self.wait_listening(8082)

    def stop_listeners(self) -> None:
        """Every server listening in the namespace (a v2 a builder ran by hand too), ended by its pid."""
        listed = self.run("ss -Hltnp").stdout
        for pid in {int(p) for p in re.findall(r"pid=(\d+),", listed)}:
            self.run(f"kill {pid}")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.stop_listeners()
        super().close()


class GuestTerritory:
    """A `TerritoryHost` over a namespaced guest: its public port relayed to loopback, SSH by the exec shim."""

    def __init__(self, territory_id: str, guest: NamespacedGuest) -> None:
        self.territory_id = territory_id
        self.guest = guest
        self.host = "127.0.0.1"
        self.ssh_port = 22
        self.service_port = 0
        self._socket = guest.serve_unix(8080)
        self._server: asyncio.Server | None = None
        self._shim = guest.work / "guest-from-host"
        self._shim.write_text(f'#!/bin/sh\nexec {" ".join(guest.in_namespace(str(guest.exec_shim)))} "$@"\n')
        self._shim.chmod(0o755)

    async def open(self) -> None:
        """Listen on a loopback port of this host; each connection relayed to the guest's 8080."""

        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except OSError:
                pass
            finally:
                writer.close()

        async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                upstream_reader, upstream_writer = await asyncio.open_unix_connection(str(self._socket))
            except OSError:
                writer.close()
                return
            await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

        self._server = await asyncio.start_server(relay, "127.0.0.1", 0)
        self.service_port = self._server.sockets[0].getsockname()[1]

    def access_env(self) -> dict[str, str]:
        return {"AOE_GUEST_EXEC": str(self._shim)}

    def ssh_command(self) -> None:
        return None

    async def run(self, command: str, timeout: float) -> CommandResult:
        done = await asyncio.to_thread(self.guest.run, command, timeout)
        return CommandResult(done.returncode, done.stdout, done.stderr)

    async def reboot(self, timeout: float) -> RebootProof:
        await asyncio.to_thread(self.guest.reboot)
        return RebootProof("acpi", ("referee-reset",), None, None, 0.0)

    async def suspend(self) -> None:
        pass

    async def resume(self) -> None:
        pass

    async def alive(self) -> bool:
        return self.guest.holder.poll() is None

    async def down_detail(self) -> str:
        return STOPPED_DETAIL

    def console_tail(self, lines: int = 40) -> str:
        return ""

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)


def play_in_background(guest: NamespacedGuest, plan) -> asyncio.Future:
    """The builder's steps (all but its watch loop) in a thread while the referee ticks."""
    return asyncio.ensure_future(asyncio.to_thread(guest.play, plan))
