"""The frozen-boot rescue: silence short of a login prompt means one reset."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from aoe_tui.runtime.boot_watchdog import rescue_stalled_boot


class Resets:
    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


async def _write_lines(console: Path, lines: list[bytes], pause: float) -> None:
    for line in lines:
        with open(console, "ab") as log:
            log.write(line)
        await asyncio.sleep(pause)


async def test_a_boot_that_goes_silent_is_reset_once(tmp_path: Path) -> None:
    console, resets = tmp_path / "console.log", Resets()
    await _write_lines(console, [b"[ 0.0] Linux version\n", b"[ 13.7] virtio_blk: [vda]\n"], 0)
    assert await asyncio.wait_for(rescue_stalled_boot(console, resets, stall_seconds=0.3, poll_seconds=0.05), 5)
    assert resets.count == 1


async def test_a_booted_guest_waiting_at_login_is_left_alone(tmp_path: Path) -> None:
    console, resets = tmp_path / "console.log", Resets()
    await _write_lines(console, [b"Debian GNU/Linux 12 alpha ttyS0\n", b"alpha login: "], 0)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rescue_stalled_boot(console, resets, stall_seconds=0.2, poll_seconds=0.05), 0.8)
    assert resets.count == 0


async def test_a_slow_but_progressing_boot_is_left_alone(tmp_path: Path) -> None:
    console, resets = tmp_path / "console.log", Resets()
    writer = asyncio.create_task(_write_lines(console, [b"still booting\n"] * 20, 0.05))
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(rescue_stalled_boot(console, resets, stall_seconds=0.3, poll_seconds=0.05), 0.9)
    await writer
    assert resets.count == 0
