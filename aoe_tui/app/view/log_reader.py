"""A long log read by another process while the match screen shows, and grows, what is read so far.

Reading a million-event log is seconds of Python. On a thread of the app it shared the interpreter with the
screen: every key and frame slowed the read, and the read slowed every key (the whole log took twice as long
in the app as alone). So a reader process reads it: the child reads the log exactly as `load_match` does, and
about every `PROGRESS_EVERY` events hands the parent a `TimelineBatch` (the new lines' starts and clocks, the
new keyframes and the world after the last event: bytes, not events); the screen takes those that came since
its last frame in one go, as a batch it can draw (`messages`). The parent maps the log file and decodes an event only when a frame needs it. Once the
whole log is read the child works out everything the screen derives from it (columns, markers, rows, the
race, tool calls) and hands that over too, its lines and timeline replaced by the parent's own, which the
batches made the same (`persistent_id`): only the columns and markers of the timeline go with it.

`aoe replay` starts the reader as soon as it has read the log's start (`start_reading`), before the app is
even imported, so the read runs while the app starts; the match screen takes it over (`reader_for`). A
thread of the parent empties the pipe as the child fills it, so the child never waits for the app.

The child folds the log; a child of its own takes its lines apart (`split_lines`) and hands it the chunks
through another pipe, a third of the read on the machine's other core (`split_in_a_child`). Children are
forked (the modules they need are loaded already), do no IO but their own reads and pipes, and end with
`os._exit`: they must never run the app's exit handlers, which would restore the terminal under the running
app.
"""

from __future__ import annotations

import atexit
import fcntl
import gc
import io
import mmap
import os
import pickle
import queue
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.log_lines import LineChunk, split_lines
from aoe_tui.store.saved_match import SavedMatch, load_match
from aoe_tui.store.timeline import TimelineBatch, TimelineIndex

if TYPE_CHECKING:
    from aoe_tui.app.view.session import MatchSession

# What the child's session names its lines and its timeline by (the parent's own: the batches built them).
_LINES, _TIMELINE = "lines", "timeline"
PIPE_BYTES = 1 << 20  # a batch of 20,000 events and its keyframes fits: the child's write never waits
# The reader's two processes weigh half the app each (the scheduler's weights: 526 against 1024), so on two
# cores the app's start has one to itself (1024 / (1024 + 2 * 526) of both); at 10 (110) they starved when
# other programs kept the cores busy (10^6 events counted in 34 s against a 5 s loop, here under a load of 10).
READER_NICENESS = 3
FRAME_GAP_S = 0.2  # the least time between two frames of a growing log (End following it moves 5 times a second)


class Batches:
    """More of the log (one batch or several that came together) and how much of the file is read."""

    def __init__(self, batches: list[TimelineBatch], fraction: float, data: mmap.mmap) -> None:
        self.batches, self.fraction, self.data = batches, fraction, data


class Whole:
    """The whole log is read: everything the screen derives from it."""

    def __init__(self, session: MatchSession) -> None:
        self.session = session


def _read(source: Path, connection: Connection) -> None:
    """The child's work: batches while the log is read, then the whole session (or the one-line error).

    It (and its splitter) give way to the app: on two cores the app's start and the reader's two processes
    are three, and the app's first frame and every key come first (the reader has the cores once the app
    is idle, which it is between frames)."""
    os.nice(READER_NICENESS)
    sent = 0

    def grown(index: TimelineIndex) -> None:
        nonlocal sent
        connection.send_bytes(pickle.dumps(index.batch_since(sent), pickle.HIGHEST_PROTOCOL))
        sent = len(index)

    try:
        match = load_match(source, grown=grown, split=split_in_a_child)
        if match.timeline is not None:
            grown(match.timeline)  # the last events
            match.timeline.find_details()
        from aoe_tui.app.view.session import MatchSession

        session = MatchSession(match)
    except AoeError as error:
        connection.send_bytes(pickle.dumps(str(error)))
        return
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    names = {id(match.events): _LINES, id(session.timeline): _TIMELINE}
    pickler.persistent_id = lambda thing: names.get(id(thing))  # type: ignore[method-assign]
    pickler.dump((session.timeline.columns, session.timeline.markers, session))
    connection.send_bytes(buffer.getbuffer())


def _fork(work: Callable[[Connection], None]) -> tuple[int, Connection]:
    """(the pid, the reading end of its pipe) of a forked child that does `work` with the writing end: a ^C
    in the app's terminal is the app's to handle, and the child ends with `os._exit` whatever happens."""
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:
        pass  # the system's limit is lower: the child's writes may wait for the reader
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        raise
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            work(Connection(write_end, readable=False))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    return pid, Connection(read_end, writable=False)


def _end(pid: int) -> None:
    """A child ended (killed when it is still at work) and waited for."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)


def split_in_a_child(data: bytes) -> Generator[LineChunk, None, None]:
    """`split_lines` in a forked child, its chunks through a pipe, so the fold runs beside it. A child that
    ends early (killed) ends the chunks early: the fold's strict reader reads the rest, as after any line the
    splitter did not take."""

    def split(connection: Connection) -> None:
        # It keeps nothing but its bodies' numbers: the cycle collector, run by its millions of short-lived
        # objects, found no garbage and cost a fifth of a log of ever new bodies.
        gc.disable()
        for chunk in split_lines(data):
            connection.send_bytes(pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL))

    try:
        pid, connection = _fork(split)
    except OSError:  # no process to be had: the split runs here, before the fold
        yield from split_lines(data)
        return
    try:
        while True:
            try:
                raw = connection.recv_bytes()
            except (EOFError, OSError):
                return
            yield pickle.loads(raw)
    finally:
        connection.close()
        _end(pid)


class LogReader:
    """A forked child reading the match at `source` (its log at `log`); `messages` yields what it hands over."""

    def __init__(self, source: Path, log: Path) -> None:
        self.source = source
        with open(log, "rb") as file:
            self.data = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self.pid, self._connection = _fork(lambda connection: _read(source, connection))
        self._closed = False
        self._received: queue.Queue[bytes | None] = queue.Queue()
        self._pump = threading.Thread(target=self._empty_the_pipe, name="log-reader-pump", daemon=True)
        self._pump.start()

    def _empty_the_pipe(self) -> None:
        """Every message as it comes (None: the child ended), so the child never waits on a full pipe."""
        try:
            while True:
                self._received.put(self._connection.recv_bytes())
        except (EOFError, OSError):
            self._received.put(None)

    def messages(self, timeline: TimelineIndex, cancelled: Callable[[], bool]) -> Iterator[Batches | Whole | str]:
        """Batches (all that came since the last were handed on, as one), then the whole match or an error's
        line; stops when `cancelled()` says so.

        Batches are handed on at most every `FRAME_GAP_S` (the caller resumes this once its frame is drawn):
        a frame of the screen costs more than the events a reader reads meanwhile, so a frame per batch kept
        the app busy for as long as the load and took a core from the reader. The batch that ends the log is
        handed on at once."""
        size = max(len(self.data), 1)
        batches: list[TimelineBatch] = []
        shown = -FRAME_GAP_S  # when the caller had drawn the last batches handed on
        while not cancelled():
            wait = shown + FRAME_GAP_S - time.monotonic() if batches else 0.1
            if batches and (wait <= 0 or batches[-1].read_bytes >= len(self.data)):
                yield Batches(batches, batches[-1].read_bytes / size, self.data)
                batches, shown = [], time.monotonic()
                continue
            try:
                raw = self._received.get(timeout=wait)
            except queue.Empty:
                continue
            message = "the log's reader ended before the log did" if raw is None else self._load(raw, timeline)
            if isinstance(message, TimelineBatch):
                batches.append(message)
                continue
            if batches:
                yield Batches(batches, batches[-1].read_bytes / size, self.data)
            if isinstance(message, str):
                yield message
            else:
                columns, markers, session = message
                timeline.take_details(columns, markers)
                yield Whole(session)
            return

    @staticmethod
    def _load(raw: bytes, timeline: TimelineIndex) -> Any:
        unpickler = pickle.Unpickler(io.BytesIO(raw))
        unpickler.persistent_load = lambda name: timeline.events if name == _LINES else timeline  # type: ignore[method-assign]
        return unpickler.load()

    def close(self) -> None:
        """The child ended (killed when it is still reading) and waited for; again, nothing."""
        if self._closed:
            return
        self._closed = True
        _end(self.pid)
        self._pump.join()
        self._connection.close()


_started: dict[Path, LogReader] = {}


def start_reading(match: SavedMatch) -> None:
    """Start reading the rest of a match opened on its start (`pending_log`) now, before its screen exists."""
    if match.pending_log is not None and match.source not in _started:
        reader = _started[match.source] = LogReader(match.source, match.pending_log)
        atexit.register(reader.close)  # the app may end before its screen takes the reader over


def reader_for(match: SavedMatch) -> LogReader:
    """The reader started for this match (`start_reading`), else a new one."""
    assert match.pending_log is not None
    return _started.pop(match.source, None) or LogReader(match.source, match.pending_log)
