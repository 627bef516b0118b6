"""Rewriting a small file the engine keeps rewriting, without the cost of replacing it.

Opening an existing file with O_TRUNC (what `Path.write_text` does) frees its
blocks, and ext4 then starts writing the new data back when the file is closed
(its guard for programs that replace files without fsync); creating a file is a
journalled metadata change too. Each costs about a millisecond here while the
disk is busy, on the referee's loop, several times per verification. Writing
over the old bytes and cutting the file to the new length touches no metadata
but the size: tens of microseconds. Only for files a reader opens after the
write returns (a verifier's inputs, evidence copies), never for a record that
must survive a crash whole (`atomic_file` is for those).
"""

from __future__ import annotations

import os
from pathlib import Path


def rewrite_in_place(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        written = 0
        while written < len(data):
            written += os.write(descriptor, data[written:])
        os.ftruncate(descriptor, len(data))
    finally:
        os.close(descriptor)
