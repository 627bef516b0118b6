"""The match folder's copy of each pass's evidence, written off the referee's loop.

The log's `milestone_passed` holds the evidence; `evidence/<territory>/<milestone>.json`
is its copy for a person reading the match folder. Creating a file is a journalled
metadata change, about a millisecond on a busy disk, and a busy tick creates one per
pass of every territory on the loop that also spawns the verifiers: a quarter of the
referee's own cost at 30 territories (benchmarks/referee_overhead.py). So the copies
are written on a worker thread, one after another in the order the passes were
recorded (a later pass of the same milestone always wins), and the referee waits for
them before it records the end of a match. Each hand-off to the thread costs more
than the write it carries (about 150 us of the loop's time), so the copies queued
within `COPY_GATHER_SECONDS` of the first (the rest of a busy tick's passes) go
together; whoever waits for the copies (`written`) cuts that wait short. A copy that
cannot be written (a full disk) ends its writer by raising: the writer's `on_done`
(`engine.task_failures.failure_recorder`) records that, and the match goes on and ends
as it would have: the log holds the evidence, the copy is only its convenience.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

from aoe_tui.engine.task_failures import DoneCallback
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.rewrite_file import rewrite_in_place

COPY_GATHER_SECONDS = 0.05


class EvidenceCopies:
    def __init__(self, layout: MatchLayout, on_done: DoneCallback) -> None:
        self._layout = layout
        self._on_done = on_done
        self._queued: list[tuple[Path, str]] = []
        self._writer: asyncio.Task | None = None
        self._hurry = asyncio.Event()

    def write(self, territory_id: str, milestone_id: str, evidence: object) -> None:
        """Queue the copy of one pass's evidence; returns at once."""
        path = self._layout.evidence(territory_id, milestone_id)
        self._queued.append((path, json.dumps(evidence, indent=2) + "\n"))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.ensure_future(self._write_queued())
            self._writer.add_done_callback(self._on_done)

    async def written(self) -> None:
        """Return once every copy queued so far is on disk or its writer failed (told to `on_done`, not here).

        A caller cancelled while it waits (an evaluation the match's end cancels) leaves the copies being
        written: `asyncio.wait` never cancels what it waits for."""
        if self._writer is not None:
            self._hurry.set()
            await asyncio.wait([self._writer])

    async def _write_queued(self) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._hurry.wait(), COPY_GATHER_SECONDS)
        self._hurry.clear()
        while self._queued:  # all that is queued in one hand-off to the thread: one wake-up, not one a file
            batch, self._queued = self._queued, []
            await asyncio.to_thread(_write_all, batch)


def _write_all(copies: list[tuple[Path, str]]) -> None:
    folders: set[Path] = set()
    for path, text in copies:
        if path.parent not in folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            folders.add(path.parent)
        rewrite_in_place(path, text)
