"""A scripted builder's own wait survives the referee restarting its service under it.

CI once saw the oracle fail its own check: its wait saw the service answer, then the referee's
service-restart verifier restarted the service, and a one-shot curl got "connection refused". The wait
runs here in real bash and curl against a loopback server that answers, then resets one connection
(a restart mid-request), then answers again.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import threading
from pathlib import Path

from aoe_tui.agents.scripted.base import wait_until_answering

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nready"


def _server(resets: set[int]) -> tuple[str, list[int]]:
    """A server whose connections numbered in `resets` are reset without an answer; returns its URL and a log."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []

    def serve() -> None:
        while True:
            connection, _ = listener.accept()
            seen.append(len(seen) + 1)
            with connection:
                connection.recv(4096)
                if seen[-1] in resets:
                    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                else:
                    connection.sendall(OK)

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}", seen


def _run(url: str, tmp_path: Path, active: bool = True) -> subprocess.CompletedProcess[str]:
    shims = tmp_path / "bin"
    shims.mkdir()
    systemctl = shims / "systemctl"
    state, code = ("active", 0) if active else ("failed", 3)
    systemctl.write_text(f'#!/bin/sh\n[ "$1" = is-active ] && echo {state}\nexit {code}\n')
    systemctl.chmod(0o755)
    script = wait_until_answering(url, "builder-app.service", tries=1)
    return subprocess.run(["bash", "-c", f'PATH="{shims}:$PATH"; {script}'], capture_output=True, text=True, timeout=60)


def test_a_restart_right_after_the_wait_saw_the_service_does_not_fail_the_step(tmp_path):
    url, seen = _server(resets={2})
    result = _run(url, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ready" in result.stdout and "active: builder-app.service" in result.stdout
    assert len(seen) == 3  # the reset connection was retried


def test_a_service_that_never_comes_up_still_fails_the_step_and_says_why(tmp_path):
    url, _ = _server(resets=set())
    result = _run(url, tmp_path, active=False)
    assert result.returncode != 0 and "failed" in result.stdout
