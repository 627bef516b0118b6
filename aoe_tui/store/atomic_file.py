"""Writing a whole file so that a reader never sees half of it.

The text goes to a hidden temporary file beside the target, is flushed to
disk, and replaces the target in one rename: after a crash the target is the
old file or the new one, never a mix.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
