"""The one way a task of the match's engine ends by raising: recorded, never a silently dead task.

The referee runs much beside the runner's own task: an evaluation per territory, a budget stop, each
continuous monitor, the evidence copies' writer, each health probe, the watch of a remote host's link, the
tidying up after an adapter exits. Whatever ends one of them by raising (a libvirt error, a lost SSH
connection, a full disk, a bug) is taken by `failure_recorder`'s done callback, so asyncio never reports a
"Task exception was never retrieved" on the terminal, and becomes an `infrastructure_failure` of the arena
naming the territory and the component: the operator reads what broke in the record, and no player is blamed.

When the event log itself refused the write (`LogWriteFailed`), nothing more can be recorded: the recorder
already told the runner, which stops the match naming the file system.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from aoe_tui.domain import events as ev
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.store.event_log import LogWriteFailed

DoneCallback = Callable[[asyncio.Future], None]


def failure_of(task: asyncio.Future) -> BaseException | None:
    """The exception `task` ended with (taken: asyncio will not report it), None when it returned or was cancelled."""
    return None if task.cancelled() else task.exception()


def failure_recorder(recorder: MatchRecorder, territory_id: str | None, component: str) -> DoneCallback:
    """A done callback recording its task's failure as the arena's, naming `territory_id` and `component`."""

    def record(task: asyncio.Future) -> None:
        error = failure_of(task)
        if error is None or isinstance(error, LogWriteFailed):
            return
        with contextlib.suppress(LogWriteFailed):
            recorder.emit(
                ev.InfrastructureFailure(
                    component=component,
                    source="arena",
                    detail=f"{type(error).__name__}: {error}",
                    territory=territory_id,
                )
            )

    return record
