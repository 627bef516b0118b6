"""Match summaries remembered between listings, so a listing never re-reads a whole log it has seen.

A summary (a browser row, a series round) is kept under the file stamps (size and modification time, to
the nanosecond) of every file it was read from: the record (event log, world, single file) and the files
that name it (arena, provenance). Any change to one of them, or a file appearing or going, reads the match
again. One JSON file (its readers keep it in the cache folder) holds a listing's summaries, replaced whole
when a listing found something new; a damaged one is ignored and rebuilt. A path that is no file of this
machine (a round inside an exported bundle) is never cached.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_layout import MatchLayout

CACHE_VERSION = 1


def _stamps(path: Path) -> list[list[Any]]:
    """[name, size, mtime_ns] of each file a summary of `path` is read from (absent files count too)."""
    if path.is_dir():
        layout = MatchLayout.published_or_nested(path)
        files = [layout.events, layout.world, layout.arena, layout.provenance]
    else:
        files = [path]
    stamps: list[list[Any]] = []
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            stamps.append([file.name, None, None])
            continue
        stamps.append([file.name, stat.st_size, stat.st_mtime_ns])
    return stamps


class SummaryCache:
    def __init__(self, file: Path) -> None:
        self.file = file
        self._entries: dict[str, dict[str, Any]] = {}
        self._changed = False
        try:
            saved = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(saved, dict) and saved.get("version") == CACHE_VERSION:
            matches = saved.get("matches")
            if isinstance(matches, dict):  # an entry not in the shape `put` writes is damaged too: read again
                self._entries = {
                    path: entry
                    for path, entry in matches.items()
                    if isinstance(entry, dict) and isinstance(entry.get("summary"), dict)
                }

    def get(self, path: Path) -> dict[str, Any] | None:
        """The summary kept for `path`, if none of its files changed since."""
        if not path.exists():
            return None
        entry = self._entries.get(str(path.resolve()))
        if entry is None or entry.get("stamps") != _stamps(path):
            return None
        summary: dict[str, Any] = entry["summary"]  # a dict: __init__ keeps no other
        return summary

    def put(self, path: Path, summary: dict[str, Any]) -> None:
        if not path.exists():
            return
        self._entries[str(path.resolve())] = {"stamps": _stamps(path), "summary": summary}
        self._changed = True

    def save(self) -> None:
        """Write the summaries back if a listing added any (a cache folder that cannot be written is skipped)."""
        if not self._changed:
            return
        kept = {path: entry for path, entry in self._entries.items() if Path(path).exists()}  # gone: forgotten
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomic(self.file, json.dumps({"version": CACHE_VERSION, "matches": kept}))
        except OSError:
            return
        self._changed = False
