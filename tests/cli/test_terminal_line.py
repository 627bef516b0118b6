"""The closing line after a match, written to a terminal that was closed meanwhile (SIGHUP)."""

from __future__ import annotations

import io
import os
import pty

import pytest

from aoe_tui.cli.terminal_line import tell


def test_a_line_to_a_closed_terminal_is_dropped_and_the_exit_flush_cannot_fail():
    master, slave = pty.openpty()
    os.close(master)  # the terminal window is gone: writes to its slave now fail with EIO
    stream = io.TextIOWrapper(io.FileIO(slave, "w"), write_through=False)
    with pytest.raises(OSError):
        print("probe", file=stream, flush=True)  # what the bare print did: a traceback, exit status 1
    tell("match directory: m", stream)
    tell("a second line", stream)
    stream.flush()  # the interpreter's flush at exit
    assert os.readlink(f"/proc/self/fd/{slave}") == os.devnull
    stream.close()


def test_a_line_to_a_live_stream_is_written(capsys):
    tell("match directory: m")
    assert capsys.readouterr().out == "match directory: m\n"
