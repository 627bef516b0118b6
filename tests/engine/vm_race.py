"""One real-VM race per arena module, with an operator reading the match's updates as they come.

Every arena's VM module holds some milestone, waits for the flawed builders' failures and releases it;
what differs is only that operator, so the running of the race is here once.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.recorder import Progress
from aoe_tui.engine.runner import MatchRunner
from tests.fixture_paths import PROJECT

RACE_LIMIT_SECONDS = 900

Operator = Callable[[MatchRunner, asyncio.Queue], Awaitable[None]]


async def race_events(updates: asyncio.Queue) -> AsyncIterator[tuple[str, tuple[Any, Any], dict]]:
    """The race's events as they are recorded, each as (kind, (territory, milestone), its fields); the runner's
    progress notes are skipped."""
    while True:
        update = await updates.get()
        if isinstance(update, Progress):
            continue
        fields = update.to_json()
        yield update.kind, (fields.get("territory"), fields.get("milestone")), fields


def operated_race(
    tmp_path_factory,
    name: str,
    arena,
    base_port: int,
    operate: Operator,
    drain_seconds: float = 10,
    limit_seconds: float = RACE_LIMIT_SECONDS,
    **options,
) -> tuple[Path, float]:
    """Run `arena` on real guests (loopback ports from `base_port`) while `operate` reads the runner's
    updates; returns the match folder and the wall time."""
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    output = tmp_path_factory.mktemp(f"{name}-race") / f"{name}-match"
    runner = MatchRunner(
        arena, output, LibvirtProvider(base_port=base_port), ProcessLauncher(), drain_seconds=drain_seconds, **options
    )

    async def play() -> float:
        operator = asyncio.ensure_future(operate(runner, runner.queue()))
        started = time.monotonic()
        try:
            await asyncio.wait_for(runner.run(), limit_seconds)
        finally:
            operator.cancel()
        return time.monotonic() - started

    return output, asyncio.run(play())
