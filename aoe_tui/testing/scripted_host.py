"""A territory that lives in this process, for fast deterministic referee tests.

It serves a real HTTP app on a loopback port, so the real verifier scripts run
against it unchanged. What the "builder" got right or wrong is a `ScriptedPlan`:
when the service comes up, where it keeps records (disk survives restart
and reboot, tmpfs survives only a restart, memory survives neither) and how a
cheat meddles with the restart. Acting on the guest (verify/unit-restart.sh: inspect the
unit, restart it, inspect it again) goes through a small control
endpoint, reached by verifiers via the `AOE_GUEST_EXEC` shim. The unit's
processes are modelled as (pid, start time) pairs so the verifier's checks of
them run for real. An arena's provisioning is taken as done: the stand-in
already serves what a builder deploys on top of it.
"""

from __future__ import annotations

import json
import select
import socket
import stat
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Literal
from collections.abc import Callable, Iterable

from aoe_tui.engine.provisioning import MARKER as PROVISIONING_MARKER
from aoe_tui.engine.territory import (
    STOPPED_DETAIL,
    CommandResult,
    RebootFailed,
    RebootProof,
    TerritoryUnavailable,
)

Storage = Literal["disk", "tmpfs", "memory"]
# honest: a restart replaces the unit's process; swallowed: a systemctl that answers 0 and does
# nothing; kill-mode-none: a new main process starts while the old one (holding the records) lives on.
RestartBehaviour = Literal["honest", "swallowed", "kill-mode-none"]
LOOPBACK = "127.0.0.1"
UNIT_RESTART_MARKER = "# aoe unit restart"  # the first line of verify/unit-restart.sh
_CGROUP = "/system.slice/builder-app.service"

_EXEC_SHIM = """#!/bin/sh
# Stand-in for `ssh root@guest CMD` against a scripted territory (curl, not Python: a verifier calls
# it many times a race, and an interpreter start with urllib cost ~0.1 s a call).
body=$(mktemp) headers=$(mktemp)
trap 'rm -f "$body" "$headers"' EXIT
printf '%s' "$*" | curl -s -m 30 -o "$body" -D "$headers" --data-binary @- http://{host}:{port}/exec || exit 255
cat "$body"
code=$(tr -d '\\r' <"$headers" | sed -n 's/^[Xx]-[Ee]xit-[Ss]tatus: *//p')
exit "${{code:-255}}"
"""


@dataclass
class ScriptedPlan:
    ready_at_ms: int = 0
    storage: Storage = "disk"
    reboot_fails: bool = False
    restart: RestartBehaviour = "honest"
    lost_at_ms: int | None = None
    """The VM dies under the match at this time (the infrastructure's doing, as a guest paused by a full disk)."""


ACCEPT_SETTLE_SECONDS = 2.0


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a verifier killed on timeout) is normal here, not an error to print.

    `accepted` is told of each connection as the serving thread accepts it, before its handler thread
    starts, and `accept_pending` waits until the listen queue is empty: together they let the guest's
    "kernel" drop every connection made before a restart (a restart that came before the serving thread
    got round to one, on a loaded machine, left that connection open)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        accepted: Callable[[socket.socket], None] | None = None,
    ) -> None:
        super().__init__(address, handler)
        self.accepted = accepted

    def process_request(self, request: socket.socket | tuple[bytes, socket.socket], client_address: object) -> None:
        if self.accepted is not None and isinstance(request, socket.socket):  # a TCP server: always a socket
            self.accepted(request)
        super().process_request(request, client_address)

    def accept_pending(self) -> None:
        """Return once no connection waits to be accepted (or after ACCEPT_SETTLE_SECONDS)."""
        deadline = time.monotonic() + ACCEPT_SETTLE_SECONDS
        try:
            while select.select([self.socket], [], [], 0)[0] and time.monotonic() < deadline:
                time.sleep(0.005)
        except (OSError, ValueError):
            pass  # the server is closed: nothing waits any more

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class _GuestState:
    """The guest's "disk", "tmpfs" and process memory, and its boot id."""

    def __init__(self, plan: ScriptedPlan) -> None:
        self.plan = plan
        self.lock = threading.Lock()
        self.stores: dict[Storage, dict[str, bytes]] = {"disk": {}, "tmpfs": {}, "memory": {}}
        self.boot_id = str(uuid.uuid4())
        self.suspended = False
        self.restarts = 0
        self.reboots = 0
        self._next_pid = 400
        self.processes: list[tuple[int, int]] = []  # the unit's cgroup: (pid, start time)
        self.connections: set[socket.socket] = set()  # open client connections, owned by the service process
        self.accept_pending: Callable[[], None] = lambda: None  # the service's listen queue emptied
        self._spawn()

    def _spawn(self) -> None:
        self._next_pid += 7
        self.processes.append((self._next_pid, self._next_pid * 10))

    @property
    def records(self) -> dict[str, bytes]:
        return self.stores[self.plan.storage]

    def restart_service(self) -> None:
        self.accept_pending()  # a connection made before the restart belongs to the old process
        with self.lock:
            self.restarts += 1
            if self.plan.restart == "swallowed":
                return
            if self.plan.restart == "honest":
                self.stores["memory"].clear()
                self.processes.clear()
                self._drop_connections()
            self._spawn()

    def _drop_connections(self) -> None:
        """What the kernel does to a dead process's sockets: the clients see the connection close."""
        for connection in list(self.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def reboot(self) -> None:
        self.accept_pending()
        with self.lock:
            self.stores["memory"].clear()
            self.stores["tmpfs"].clear()
            self.boot_id = str(uuid.uuid4())
            self.reboots += 1
            self.processes.clear()
            self._drop_connections()
            self._spawn()

    def unit_restart(self) -> str:
        """What verify/unit-restart.sh prints in a real guest, for this plan."""
        before = self._probe([])
        old = [f"{pid}:{start}" for pid, start in self.processes]
        self.restart_service()
        return f"== before\n{before}== restart\nRestartExit=0\nRestartOutput=\n== after\n{self._probe(old)}"

    def _probe(self, asked: list[str]) -> str:
        with self.lock:
            alive = {f"{pid}:{start}" for pid, start in self.processes}
            main = self.processes[-1][0]
            kill_mode = "none" if self.plan.restart == "kill-mode-none" else "control-group"
            drop_ins = "/etc/systemd/system/builder-app.service.d/keep.conf" if kill_mode == "none" else ""
            return (
                f"MainPID={main}\nKillMode={kill_mode}\nDropInPaths={drop_ins}\nControlGroup={_CGROUP}\n"
                f"ActiveState=active\nSurvivors={' '.join(a for a in asked if a in alive)}\n"
                f"Procs={' '.join(f'{pid}:{start}' for pid, start in self.processes)}\n"
                f"MainPIDCgroup=0::{_CGROUP}\n"
            )

    def execute(self, command: str) -> CommandResult:
        command = command.strip()
        if command.startswith(UNIT_RESTART_MARKER):
            return CommandResult(0, self.unit_restart(), "")
        if command.startswith(PROVISIONING_MARKER):
            # Nothing to write: the stand-in already is the deployed service the provisioning leads to.
            return CommandResult(0, "provisioned\n", "")
        return CommandResult(127, "", f"scripted guest: {command.split()[0] if command else '?'}: command not found")


def _app_handler(state: _GuestState, is_ready: Callable[[], bool]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def finish(self) -> None:
            state.connections.discard(self.connection)
            super().finish()

        def _send(self, status: int, body: bytes = b"") -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _refuse_if_down(self) -> bool:
            if state.suspended or not is_ready():
                self.close_connection = True
                self.connection.close()  # what a forwarded port does when nothing listens
                return True
            return False

        def do_GET(self) -> None:
            if self._refuse_if_down():
                return
            if self.path == "/health":
                return self._send(200, b"ready")
            if self.path.startswith("/records/"):
                value = state.records.get(self.path.removeprefix("/records/"))
                return self._send(404) if value is None else self._send(200, value)
            self._send(404)

        def do_PUT(self) -> None:
            if self._refuse_if_down():
                return
            if not self.path.startswith("/records/"):
                return self._send(404)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.records[self.path.removeprefix("/records/")] = body
            self._send(204)

    return Handler


def _control_handler(state: _GuestState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            command = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            result = state.execute(command)
            body = (result.stdout + result.stderr).encode()
            self.send_response(200)
            self.send_header("X-Exit-Status", str(result.exit_status))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


class ScriptedTerritory:
    """A `TerritoryHost` whose guest is a few dicts behind a real loopback HTTP server."""

    host = LOOPBACK
    ssh_port = 0

    def __init__(self, territory_id: str, plan: ScriptedPlan, elapsed_ms: Callable[[], int], work_dir: Path) -> None:
        self.territory_id = territory_id
        self.plan = plan
        self.state = _GuestState(plan)
        self._alive = True
        self._elapsed_ms = elapsed_ms
        self._app = _QuietServer(
            (LOOPBACK, 0),
            _app_handler(self.state, lambda: plan.ready_at_ms <= elapsed_ms() and not self._lost()),
            accepted=self.state.connections.add,
        )
        self.state.accept_pending = self._app.accept_pending
        self._control = _QuietServer((LOOPBACK, 0), _control_handler(self.state))
        for server in (self._app, self._control):
            threading.Thread(
                target=server.serve_forever, args=(0.05,), daemon=True, name=f"scripted-{territory_id}"
            ).start()
        self.service_port = self._app.server_address[1]
        self.exec_shim = Path(work_dir) / f"{territory_id}-guest-exec"
        self.exec_shim.parent.mkdir(parents=True, exist_ok=True)
        self.exec_shim.write_text(_EXEC_SHIM.format(host=LOOPBACK, port=self._control.server_address[1]))
        self.exec_shim.chmod(self.exec_shim.stat().st_mode | stat.S_IXUSR)

    def access_env(self) -> dict[str, str]:
        return {"AOE_GUEST_EXEC": str(self.exec_shim)}

    def ssh_command(self) -> None:
        return None  # the "guest" is this process: there is nothing to SSH into

    async def run(self, command: str, timeout: float) -> CommandResult:
        if not await self.alive():
            raise TerritoryUnavailable(f"territory {self.territory_id}: the VM is gone")
        return self.state.execute(command)

    async def reboot(self, timeout: float) -> RebootProof:
        """Like the real one: asked of the "hypervisor" (this process), never of the guest's userland."""
        before = self.state.boot_id
        if self.plan.reboot_fails:
            raise RebootFailed(
                f"the guest did not come back within {timeout:g} s of the acpi reboot "
                "(no fresh kernel boot on the serial console)"
            )
        self.state.reboot()
        return RebootProof(
            "acpi",
            ("libvirt-event", "console-banner", "boot-id"),
            before,
            self.state.boot_id,
            0.0,
            "[    0.000000] Linux version scripted",
        )

    async def suspend(self) -> None:
        self.state.suspended = True

    async def resume(self) -> None:
        self.state.suspended = False

    async def alive(self) -> bool:
        return self._alive and not self._lost()

    async def down_detail(self) -> str:
        return STOPPED_DETAIL

    def _lost(self) -> bool:
        return self.plan.lost_at_ms is not None and self._elapsed_ms() >= self.plan.lost_at_ms

    def kill(self) -> None:
        """Simulate the VM dying under the match."""
        self._alive = False
        self.state.suspended = True

    def console_tail(self, lines: int = 40) -> str:
        return json.dumps(
            {"boot_id": self.state.boot_id, "restarts": self.state.restarts, "reboots": self.state.reboots}
        )

    def close(self) -> None:
        close_territories([self])


def close_territories(territories: Iterable[ScriptedTerritory]) -> None:
    """Stop every territory's servers at once: each `shutdown` waits out its server's poll interval, so one
    after another a match's six servers took ~0.3 s of every scripted teardown."""
    servers = [server for territory in territories for server in (territory._app, territory._control)]
    stoppers = [threading.Thread(target=server.shutdown, daemon=True) for server in servers]
    for stopper in stoppers:
        stopper.start()
    for stopper in stoppers:
        stopper.join()
    for server in servers:
        server.server_close()
