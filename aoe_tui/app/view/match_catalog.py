"""Finding saved matches under folders, for the match browser.

Anything `load_match` opens counts: match directories (a folder with
`events.jsonl` or `world.json`), single-file `*.match.json` and world-only
`*.world.json`. A match that fails to load is still listed, with its error,
so a broken artifact is visible instead of silently missing. A log that
ends without a final state (a match still running, or one whose process was
killed) reads "unfinished", not the "preparing" or "running" it stopped in.
A match read once is listed from its cached summary (`summary_cache`) until
one of its files changes; opening it loads it then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from datetime import datetime, UTC
from pathlib import Path

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import FINAL_MATCH_STATES
from aoe_tui.store.match_layout import holds_match
from aoe_tui.runtime.paths import cache_root
from aoe_tui.store.saved_match import SavedMatch, load_match
from aoe_tui.store.summary_cache import SummaryCache

MATCH_FILE_SUFFIXES = (".match.json", ".world.json")
STAMP = re.compile(r"(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})")


@dataclass
class CatalogEntry:
    path: Path
    name: str
    arena: str
    date: str
    state: str
    winner: str
    duration: str
    events: int
    match: SavedMatch | None = None  # the loaded match, when listing it had to load it
    error: str | None = None

    def summary(self) -> dict[str, str | int]:
        """What the row shows, as cached (not the path, the match or an error). Read field by field:
        `asdict` would deep-copy the loaded match with it (a quarter of a cold listing's time)."""
        return {name: getattr(self, name) for name in SUMMARY_FIELDS}

    def cells(self) -> tuple[str, ...]:
        if self.error:
            return (self.name, "unreadable", "", "", self.error, "", "")
        return (
            self.name,
            self.state,
            self.winner,
            self.duration,
            self.arena,
            self.date,
            str(self.events) if self.events else "no timeline",
        )


def summary_cache() -> SummaryCache:
    """The browser's summaries, in the cache folder."""
    return SummaryCache(cache_root() / "match-summaries.json")


def find_match_paths(roots: list[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file() or holds_match(root):
            found.append(root)
            continue
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if any(parent in found for parent in path.parents):
                continue
            if path.is_dir() and holds_match(path):
                found.append(path)
            elif path.is_file() and path.name.endswith(MATCH_FILE_SUFFIXES):
                found.append(path)
    return found


def match_date(match: SavedMatch) -> str:
    stamp = STAMP.search(match.name) or STAMP.search(match.source.name)
    if stamp:
        year, month, day, hour, minute, _ = stamp.groups()
        return f"{year}-{month}-{day} {hour}:{minute}"
    # UTC like the stamps in match names, so a listing reads the same on every machine.
    return datetime.fromtimestamp(match.source.stat().st_mtime, tz=UTC).strftime("%Y-%m-%d %H:%M")


def cached_entry(path: Path, cache: SummaryCache) -> CatalogEntry | None:
    """The match's row from its cached summary, if its files did not change since (no file is read)."""
    cached = cache.get(path)
    return CatalogEntry(path, **cached) if cached is not None else None


def pending_cells(path: Path) -> tuple[str, ...]:
    """The row of a match not read yet: its file or folder name, and that it is being read."""
    return (path.name, "reading…", "", "", "", "", "")


def catalog_entry(path: Path, cache: SummaryCache | None = None) -> CatalogEntry:
    """The match's row: from `cache` when it has it, else read (and put in `cache`)."""
    known = cached_entry(path, cache) if cache is not None else None
    return known if known is not None else read_entry(path, cache)


def read_entry(path: Path, cache: SummaryCache | None = None) -> CatalogEntry:
    """The match's row, read from its files (a log not seen before is read whole); its summary goes to `cache`."""
    try:
        match = load_match(path)
    except AoeError as error:
        return CatalogEntry(path, path.name, "", "", "", "", "", 0, error=str(error))
    world = match.world
    entry = CatalogEntry(
        path,
        match.name,
        match.arena_name,
        match_date(match),
        final_state(match),
        world.winner or "none",
        format_clock(world.elapsed_ms),
        len(match.events),
        match=match,
    )
    if cache is not None:
        cache.put(path, entry.summary())
    return entry


def final_state(match: SavedMatch) -> str:
    state = match.world.match_state
    return state if state in FINAL_MATCH_STATES else "unfinished"


def build_catalog(roots: list[Path], cache: SummaryCache | None = None) -> list[CatalogEntry]:
    """Every match under `roots`; with `cache`, matches seen before are listed without reading them."""
    entries = [catalog_entry(path, cache) for path in find_match_paths(roots)]
    if cache is not None:
        cache.save()
    return entries


SUMMARY_FIELDS = [f.name for f in fields(CatalogEntry) if f.name not in ("path", "match", "error")]
