"""One line for the operator's terminal, which may no longer exist.

After SIGHUP (the terminal window closed) the app still tears down and records the abort; the
line saying where the record is must not then turn that clean ending into a traceback and exit
status 1 because the terminal is gone (EIO). The stream is pointed at /dev/null instead, so the
interpreter's own flush at exit cannot fail on it either.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO


def tell(line: str, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    try:
        print(line, file=stream, flush=True)
    except OSError:
        silence(stream)


def silence(stream: TextIO) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
