"""First Contact without VMs: each territory a real HTTP health server on loopback, scripted over the match clock.

The conquest referee probes them exactly as it probes a guest's forwarded
port (`engine.health_probe`), so its timing, bounds and verdicts are tested
on real sockets. What each territory answers at each moment is a `Schedule`:
(from_ms, behaviour) pairs, the last one started wins. Behaviours: `ok` (200 +
the manifest's token), `down` (503 `queue unavailable`), `wrong` (200 with
another body), `slow` (answers after 10 s), `flood` (a megabyte with escape
sequences), `closed` (nothing listens). Power off stops the server for good.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Callable

from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.territory import STOPPED_DETAIL, CommandResult

LOOPBACK = "127.0.0.1"
Schedule = list[tuple[int, str]]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: object, client_address: object) -> None:  # a probe cut short is normal
        pass


class FakeConquestHost:
    host = LOOPBACK
    ssh_port = 0

    def __init__(self, territory_id: str, token: str, schedule: Schedule, elapsed_ms: Callable[[], int]) -> None:
        self.territory_id = territory_id
        self.token = token
        self.schedule = sorted(schedule)
        self.elapsed_ms = elapsed_ms
        self.powered_off = False
        self.requests = 0
        self._server = _Server((LOOPBACK, 0), self._handler())
        self.service_port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def behaviour(self) -> str:
        now = self.elapsed_ms()
        current = "ok"
        for start, what in self.schedule:
            if now >= start:
                current = what
        return current

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        host = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                host.requests += 1
                what = host.behaviour()
                if what == "closed":
                    self.connection.close()
                    return
                if what == "slow":
                    time.sleep(10)
                status, body = {
                    "ok": (200, host.token.encode() + b"\n"),
                    "slow": (200, host.token.encode()),
                    "down": (503, b"queue unavailable"),
                    "wrong": (200, b"pwned by gatekeeper"),
                    "flood": (200, b"\x1b]0;owned\x07" + b"A" * (1 << 20)),
                }[what]
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass

        return Handler

    def access_env(self) -> dict[str, str]:
        return {}

    def ssh_command(self) -> None:
        return None

    async def run(self, command: str, timeout: float) -> CommandResult:
        return CommandResult(0, "provisioned\n", "")

    async def reboot(self, timeout: float):
        raise NotImplementedError("a conquest never reboots a guest")

    async def suspend(self) -> None: ...

    async def resume(self) -> None: ...

    async def alive(self) -> bool:
        return not self.powered_off

    async def down_detail(self) -> str:
        return STOPPED_DETAIL

    async def power_off(self) -> None:
        self.powered_off = True
        self.close()

    def console_tail(self, lines: int = 40) -> str:
        return ""

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeConquestProvider:
    """Boots one `FakeConquestHost` per territory; `schedules` says what each answers when."""

    def __init__(self, schedules: dict[str, Schedule] | None = None) -> None:
        self.schedules = schedules or {}
        self.hosts: dict[str, FakeConquestHost] = {}

    async def boot(self, manifest: Manifest, match_dir, recorder, clock):
        for territory in manifest.territories:
            token = territory.service.expected_body or "ok"
            self.hosts[territory.id] = FakeConquestHost(
                territory.id, token, self.schedules.get(territory.id, []), clock.elapsed_ms
            )
        return dict(self.hosts), sorted(self.hosts)

    async def teardown(self) -> None:
        for host in self.hosts.values():
            if not host.powered_off:
                host.close()
        self.hosts.clear()


def quick_manifest(manifest: Manifest, window_seconds: int = 5, duration_seconds: int = 30) -> Manifest:
    """The arena with a short recovery window and match (a test manifest, never a special case in the referee)."""
    data = manifest.to_json()
    data["rules"]["duration_seconds"] = duration_seconds
    data["rules"]["post_match_drain_seconds"] = 1
    for territory in data["territories"]:
        territory["service"]["health"]["recovery_window_seconds"] = window_seconds
    return Manifest.model_validate(data)
