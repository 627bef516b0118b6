"""The last lines of a log that something else is still writing (guest console, agent stdout/stderr).

Only the end of the file is read, so a console log of many megabytes costs
the same as a small one; terminal escape sequences from the guest's console
are dropped because they would repaint the app, not the text.
"""

from __future__ import annotations

import re
from pathlib import Path

READ_BYTES = 64 * 1024
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


def tail_lines(path: Path, lines: int) -> list[str]:
    """The last `lines` non-blank lines; empty when the file does not exist (yet)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(size - READ_BYTES, 0))
            raw = handle.read()
    except OSError:
        return []
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    kept = [_ESCAPES.sub("", line).rstrip() for line in text.split("\n")]
    return [line for line in kept if line.strip()][-lines:]
