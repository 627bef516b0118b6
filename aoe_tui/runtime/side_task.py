"""Tasks the runtime runs beside its own work (a boot watchdog beside the wait for SSH, a remote console's
mirror): always stopped and taken, never left for asyncio to report as "Task exception was never retrieved".

A side task only helps: when the work it sat beside failed, that failure is the one told and the side task's is
only taken. Otherwise a side task that raised (a libvirt error in its reset, a console it could not read, a
lost SSH channel) becomes the runtime's own error, `SideTaskFailed` naming what it was, so the caller reports
one line as for any other runtime failure.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

from aoe_tui.domain.errors import AoeError


class SideTaskFailed(AoeError):
    """A task run beside the runtime's work raised: named, with its error."""


@contextlib.asynccontextmanager
async def beside(coroutine: Coroutine[Any, Any, object], what: str) -> AsyncIterator[None]:
    """Run `coroutine` as a task while the block runs; stop it after. Its failure raises `SideTaskFailed` only
    when the block itself succeeded."""
    task = asyncio.ensure_future(coroutine)
    try:
        yield
    except BaseException:
        await _stopped(task)
        raise
    await stop_task(task, what)


async def stop_task(task: asyncio.Future | None, what: str) -> None:
    """Cancel `task` and wait for its end; had it raised, `SideTaskFailed` naming `what`."""
    if task is not None and (failure := await _stopped(task)) is not None:
        raise SideTaskFailed(f"{what} failed: {type(failure).__name__}: {failure}") from failure


async def _stopped(task: asyncio.Future) -> Exception | None:
    task.cancel()
    outcome = (await asyncio.gather(task, return_exceptions=True))[0]
    return outcome if isinstance(outcome, Exception) else None
