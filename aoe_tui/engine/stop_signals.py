"""The signals that end a match the way Ctrl-C does, wherever the match runs.

systemd, container runtimes and CI runners stop a process with SIGTERM; a
closed terminal or SSH session sends SIGHUP. Their default action kills the
process before any teardown runs, stranding the guests and leaving the log
without an end. Each one is turned into `MatchRunner.request_stop`, which
records `aborted` naming the signal and tears down; the exit status is the
shell's convention, 128 + the signal number.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_WHY = {
    signal.SIGINT: "interrupted (SIGINT, Ctrl-C)",
    signal.SIGTERM: "terminated (SIGTERM)",
    signal.SIGHUP: "its terminal was closed (SIGHUP)",
}


def stop_reason(signum: int) -> str:
    """The abort reason recorded in the event log for a match stopped by `signum`."""
    stopped_by = signal.Signals(signum)
    return f"the aoe process was {_WHY.get(stopped_by, stopped_by.name)}"


def exit_status(signum: int) -> int:
    return 128 + signum


@contextmanager
def stop_on_signals(on_signal: Callable[[int], None], signals: tuple[int, ...] = STOP_SIGNALS) -> Iterator[None]:
    """While inside, each of `signals` calls `on_signal(signum)` on the running loop instead of killing us."""
    loop = asyncio.get_running_loop()
    for signum in signals:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        yield
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


class Stoppable:
    """A long run (a match, a series, a benchmark) that can be stopped from outside, once.

    Only the first request counts: a second cancel would cut the teardown short.
    A run with a `current` child (the series' match, the benchmark's series)
    hands the request down, so the innermost run records it; otherwise the
    run's own task is cancelled. `run()` must set `_task` to its task first.
    """

    stop_reason: str | None = None
    _task: asyncio.Task | None = None
    current: Stoppable | None = None

    @property
    def started(self) -> bool:
        """`run()` has begun (before that, a stop request has nothing to stop and is not taken)."""
        return self._task is not None

    def _take_back_cancel(self) -> None:
        """The stop this run asked for has cancelled its task: undo that, so the run can record the stop and end."""
        if self._task is not None:
            self._task.uncancel()

    def request_stop(self, reason: str) -> bool:
        """Stop with `reason` recorded; returns whether this request was the one taken."""
        if self.stop_reason is not None or self._task is None or self._task.done():
            return False
        self.stop_reason = reason
        if self.current is None or not self.current.request_stop(reason):
            self._task.cancel()
        return True
