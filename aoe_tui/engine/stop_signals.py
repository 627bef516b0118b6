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
_WHY = {signal.SIGINT: "interrupted (SIGINT, Ctrl-C)", signal.SIGTERM: "terminated (SIGTERM)",
        signal.SIGHUP: "its terminal was closed (SIGHUP)"}


def stop_reason(signum: int) -> str:
    """The abort reason recorded in the event log for a match stopped by `signum`."""
    return f"the aoe process was {_WHY.get(signum, signal.Signals(signum).name)}"


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
