"""`aoe serve` as a child process on a free loopback port, for the browser test and scripts/screenshots."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tests.fixture_paths import PROJECT


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def serving(*args: str | Path, timeout: float = 20) -> AsyncIterator[str]:
    """The URL of `aoe serve ARGS` once it accepts connections; the server is stopped on the way out."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "aoe_tui.cli.main", "serve", *map(str, args), "--port", str(port)],
        cwd=PROJECT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError as error:
                if server.poll() is not None or time.monotonic() > deadline:
                    stderr = server.stderr.read() if server.stderr else ""
                    raise RuntimeError(f"aoe serve did not start: {stderr}") from error
                await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
