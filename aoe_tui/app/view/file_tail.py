"""The last lines of a log that something else is still writing (guest console, agent stdout/stderr).

Only the end of the file is read, so a console log of many megabytes costs
the same as a small one; terminal escape sequences from the guest's console
are dropped (`clean_text`) because they would repaint the app, not the text.
"""

from __future__ import annotations

from pathlib import Path

from aoe_tui.domain.untrusted import clean_text

READ_BYTES = 64 * 1024


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
    text = clean_text(raw.decode("utf-8", errors="replace"), limit=READ_BYTES)
    kept = [line.rstrip() for line in text.split("\n")]
    return [line for line in kept if line.strip()][-lines:]
