"""The harness's output files: atomic JSON checkpoints and an append-only JSONL feed.

Readers (the referee's usage poller, the app's live tool feed) look at these
files while the harness writes them, so a JSON file is replaced atomically and
a JSONL line is written whole and flushed before the next one starts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from aoe_tui.agents.openai_harness.scrub import Scrubber


def write_json_atomic(path: Path, data: Any, scrub: Scrubber) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    text = scrub(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


class JsonlFeed:
    """One compact JSON object per line, appended and fsync'd as each call finishes."""

    def __init__(self, path: Path, scrub: Scrubber) -> None:
        self.path = path
        self._scrub = scrub
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def append(self, entry: dict[str, Any]) -> None:
        line = self._scrub(json.dumps(entry, ensure_ascii=False, separators=(",", ":"))) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
