"""A long log read by another process while the match screen shows, and grows, what is read so far.

Reading a million-event log is seconds of Python. On a thread of the app it shares the interpreter with the
screen: every key and frame slowed the read, and the read slowed every key (the whole log took twice as long
in the app as alone). So the app forks a reader: the child reads the log exactly as `load_match` does, and
every `PROGRESS_EVERY` events hands the parent a `TimelineBatch` (the new lines' starts and clocks, the new
keyframes and the world after the last event: bytes, not events), which the screen takes in one go, as a
batch it can draw. The parent maps the log file and decodes an event only when a frame needs it. Once the
whole log is read the child works out everything the screen derives from it (columns, markers, rows, the
race, tool calls) and hands that over too, its lines replaced by the parent's own (`persistent_id`).

The child is forked (the app's modules are loaded already; a fresh interpreter would import them again for
most of a second), does no IO but its own reads and the pipe, and ends with `os._exit`: it must never run
the app's exit handlers, which would restore the terminal under the running app.
"""

from __future__ import annotations

import io
import mmap
import os
import pickle
import signal
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.log_lines import LogLines
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineBatch, TimelineIndex
from aoe_tui.app.view.session import MatchSession

_LINES = "the reader's log lines"  # what the child's session names its lines by (the parent's own)


class Batch:
    """More of the log: the batch and how much of the file is read."""

    def __init__(self, batch: TimelineBatch, fraction: float) -> None:
        self.batch, self.fraction = batch, fraction
        self.data: mmap.mmap | None = None  # the log's bytes the lines are read from, when they change


class Whole:
    """The whole log is read: everything the screen derives from it."""

    def __init__(self, session: MatchSession) -> None:
        self.session = session


def _read(source: Path, connection: Connection) -> None:
    """The child's work: batches while the log is read, then the whole session (or the one-line error)."""
    sent = 0

    def grown(index: TimelineIndex) -> None:
        nonlocal sent
        connection.send_bytes(pickle.dumps(index.batch_since(sent), pickle.HIGHEST_PROTOCOL))
        sent = len(index)

    try:
        match = load_match(source, grown=grown)
        if match.timeline is not None:
            grown(match.timeline)  # the last events
            match.timeline.find_details()
        session = MatchSession(match)
    except AoeError as error:
        connection.send_bytes(pickle.dumps(str(error)))
        return
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    lines = match.events
    pickler.persistent_id = lambda thing: _LINES if thing is lines else None  # type: ignore[method-assign]
    pickler.dump(session)
    connection.send_bytes(buffer.getbuffer())


class LogReader:
    """A forked child reading the match at `source`; `messages` yields what it hands over."""

    def __init__(self, source: Path, log: Path) -> None:
        with open(log, "rb") as file:
            self.data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            code = 1
            try:
                os.close(read_end)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the app's terminal's ^C is the app's to handle
                _read(source, Connection(write_end, readable=False))
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self._connection = Connection(read_end, writable=False)

    def messages(self, lines: LogLines, cancelled: Callable[[], bool]) -> Iterator[Batch | Whole | str]:
        """Batches, then the whole match or an error's line; stops when `cancelled()` says so."""
        size = max(len(self.data), 1)
        while not cancelled():
            if not self._connection.poll(0.1):
                continue
            try:
                raw = self._connection.recv_bytes()
            except EOFError:
                yield "the log's reader ended before the log did"
                return
            unpickler = pickle.Unpickler(io.BytesIO(raw))
            unpickler.persistent_load = lambda name: lines  # type: ignore[method-assign]
            message: Any = unpickler.load()
            if isinstance(message, TimelineBatch):
                yield Batch(message, message.read_bytes / size)
            else:
                yield Whole(message) if isinstance(message, MatchSession) else str(message)
                return

    def close(self) -> None:
        """The child ended (killed when it is still reading) and waited for."""
        self._connection.close()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
