"""Rescue a guest whose boot froze.

Under TCG on a loaded host, one boot out of some twenty-five was seen to freeze in the
initramfs: no console output for minutes, never reaching SSH, while its twins
booted fine. A power-cycle fixes it. The console log is the heartbeat: a boot
that has printed nothing new for a long time and never reached its login
prompt is reset, once.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from collections.abc import Awaitable, Callable

STALL_SECONDS = 75.0
_POLL_SECONDS = 2.0
_BOOTED_MARKER = b"login:"


async def rescue_stalled_boot(
    console: Path,
    reset: Callable[[], Awaitable[None]],
    stall_seconds: float = STALL_SECONDS,
    poll_seconds: float = _POLL_SECONDS,
) -> bool:
    """Wait until the boot stalls, then `reset()` once and return True; cancel this task once SSH answers."""
    last_size, last_change = -1, time.monotonic()
    while True:
        await asyncio.sleep(poll_seconds)
        size = _size(console)
        if size != last_size:
            last_size, last_change = size, time.monotonic()
            continue
        if time.monotonic() - last_change >= stall_seconds and not _reached_login(console):
            await reset()
            return True


def _size(console: Path) -> int:
    """The console's size, 0 while it is missing (not created yet, or just rotated away by virtlogd)."""
    try:
        return console.stat().st_size
    except FileNotFoundError:
        return 0


def _reached_login(console: Path) -> bool:
    try:
        with open(console, "rb") as log:
            log.seek(max(0, log.seek(0, 2) - 4096))
            return _BOOTED_MARKER in log.read()
    except OSError:
        return False
