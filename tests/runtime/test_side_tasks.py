"""The runtime's side tasks (a boot watchdog, a console mirror, a host link's watch) never die silently: each
injected libvirt, disk or SSH failure is taken and becomes the runtime's own error, or the link's lost reason."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging

import asyncssh
import libvirt
import pytest

from aoe_tui.domain.hosts import HostSpec
from aoe_tui.runtime.boot_watchdog import rescue_stalled_boot
from aoe_tui.runtime.host_link import HostLink
from aoe_tui.runtime.side_task import SideTaskFailed, beside, stop_task

ERRORS = [
    libvirt.libvirtError("internal error: client socket is closed"),
    OSError(errno.ENOSPC, "No space left on device"),
    asyncssh.ConnectionLost("Connection lost"),
]


async def failing(error: BaseException) -> None:
    await asyncio.sleep(0)
    raise error


def no_dead_task(caplog) -> None:
    gc.collect()
    assert "never retrieved" not in caplog.text


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_side_task_that_failed_beside_work_that_succeeded_is_the_runtimes_error(error, caplog):
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with pytest.raises(SideTaskFailed, match=f"the boot watchdog failed: {type(error).__name__}"):
            async with beside(failing(error), "the boot watchdog"):
                await asyncio.sleep(0.01)
        no_dead_task(caplog)


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_when_the_work_failed_its_own_error_is_told_and_the_side_tasks_taken(error, caplog):
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        with pytest.raises(TimeoutError):
            async with beside(failing(error), "the boot watchdog"):
                await asyncio.sleep(0.01)
                raise TimeoutError("SSH did not answer")
        no_dead_task(caplog)


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_stopped_mirror_that_had_failed_is_named(error, caplog):
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        mirror = asyncio.ensure_future(failing(error))
        await asyncio.sleep(0.01)
        with pytest.raises(SideTaskFailed, match="console mirror failed"):
            await stop_task(mirror, "host h: the console mirror")
        no_dead_task(caplog)


async def test_a_side_task_still_running_is_just_stopped():
    task = asyncio.ensure_future(asyncio.sleep(60))
    await stop_task(task, "the console mirror")
    assert task.cancelled()


class BrokenConnection:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def wait_closed(self) -> None:
        await asyncio.sleep(0)
        raise self.error


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_link_whose_watch_raises_is_lost_with_the_reason(error, caplog):
    link = HostLink(HostSpec.model_construct(name="far"))
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        link._watch = asyncio.ensure_future(link._watch_connection(BrokenConnection(error)))  # type: ignore[arg-type]
        await asyncio.wait_for(link.lost.wait(), 5)
        no_dead_task(caplog)
    assert link.lost_reason is not None and str(error) in link.lost_reason and "far" in link.lost_reason


async def test_a_console_rotated_away_between_polls_is_not_a_dead_watchdog(tmp_path, monkeypatch):
    console = tmp_path / "console.log"
    console.write_bytes(b"booting\n")
    real_stat = type(console).stat

    def rotated(path, *args, **kwargs):  # exists() said yes, then virtlogd renamed it before stat()
        if path == console and not args and not kwargs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(type(console), "stat", rotated)
    monkeypatch.setattr(type(console), "exists", lambda path, **kwargs: True)
    resets = []

    async def reset():
        resets.append(True)

    assert await asyncio.wait_for(rescue_stalled_boot(console, reset, stall_seconds=0.2, poll_seconds=0.05), 5)
    assert resets == [True]
