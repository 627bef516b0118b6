"""A series or a benchmark, read from its folder or from the one-file bundle `aoe export` made of it.

Standings, the series view and `aoe replay` only need the checkpoint
(`series.json` / `benchmark.json`) and the rounds, each a match to load on
demand. Both places hold exactly that: the folder as `round-NNN/` match
folders (`series_files`), the bundle as one JSON object whose rounds are
single-file match documents (`saved_match.match_from_document`, each with its
own events digest). So every reader works from a `SeriesSource` or a
`BenchmarkSource` and never asks where it came from.

A bundle: `{"artifact_type": "agents-of-empires.series", "schema_version": 1,
"name", "series": <series.json or null>, "rounds": {"round-NNN": <match>}}`;
a benchmark's is `agents-of-empires.benchmark` with `"benchmark"` and
`"arenas": {"NN-<arena>": {"series", "rounds"}}`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.match_layout import holds_match
from aoe_tui.store.saved_match import SavedMatch, load_match, match_from_document
from aoe_tui.store.series_files import (
    ARENA_DIR,
    BENCHMARK_FILE,
    BENCHMARK_SCHEMA,
    ROUND_DIR,
    SERIES_FILE,
    SERIES_SCHEMA,
    FolderKind,
    benchmark_arena_dirs,
    folder_kind,
    read_checkpoint,
    round_dirs,
)

BUNDLE_SCHEMA = 1
BUNDLE_TYPES: dict[FolderKind, str] = {
    "series": "agents-of-empires.series",
    "benchmark": "agents-of-empires.benchmark",
}
NOT_A_COLLECTION = (
    "not a series or benchmark folder (no series.json, benchmark.json or round-NNN/) nor an exported bundle"
)


@dataclass(frozen=True)
class RoundSource:
    number: int
    location: Path  # the round's folder, or `<bundle>/round-NNN`
    load: Callable[[], SavedMatch]
    recorded: bool  # holds a record at all (a round folder may be empty: its match never started)


@dataclass(frozen=True)
class SeriesSource:
    """A series' rounds, and its checkpoint read only when asked for (standings never read it)."""

    location: Path
    name: str
    read_checkpoint: Callable[[], dict[str, Any]]  # series.json, {} when there is none
    rounds: list[RoundSource]

    @property
    def checkpoint(self) -> dict[str, Any]:
        return self.read_checkpoint()

    def decided_rounds(self) -> list[tuple[int, SavedMatch]]:
        """The rounds whose match finished (a winner or the clock decided them), read from their own record."""
        rounds = []
        for round_ in self.rounds:
            if not round_.recorded:
                continue
            match = round_.load()
            if match.world.match_state == "finished":
                rounds.append((round_.number, match))
        return rounds


@dataclass(frozen=True)
class BenchmarkSource:
    location: Path
    name: str
    read_checkpoint: Callable[[], dict[str, Any]]  # benchmark.json, {} when there is none
    arenas: list[tuple[str, SeriesSource]]  # (arena_id, its series), in plan order

    @property
    def checkpoint(self) -> dict[str, Any]:
        return self.read_checkpoint()


def series_folder(path: Path) -> SeriesSource:
    path = Path(path)
    rounds = [
        RoundSource(number, folder, partial(load_match, folder), holds_match(folder))
        for number, folder in round_dirs(path)
    ]
    return SeriesSource(path, path.name, partial(_checkpoint_file, path / SERIES_FILE, SERIES_SCHEMA), rounds)


def benchmark_folder(path: Path) -> BenchmarkSource:
    path = Path(path)
    arenas = [(arena_id, series_folder(folder)) for arena_id, folder in benchmark_arena_dirs(path)]
    return BenchmarkSource(path, path.name, partial(_checkpoint_file, path / BENCHMARK_FILE, BENCHMARK_SCHEMA), arenas)


def _checkpoint_file(file: Path, schema: int) -> dict[str, Any]:
    return read_checkpoint(file, schema) if file.exists() else {}


def bundle_kind(path: Path) -> FolderKind | None:
    """Whether the file at `path` is an exported series or benchmark bundle (by its artifact type)."""
    document = _bundle_document(path)
    return _kind_of(document) if document is not None else None


def collection_kind(path: Path) -> FolderKind | None:
    """A series or benchmark, as a folder or a bundle; None for anything else (a single match, say)."""
    path = Path(path)
    return folder_kind(path) if path.is_dir() else bundle_kind(path) if path.is_file() else None


def open_collection(path: Path) -> SeriesSource | BenchmarkSource:
    path = Path(path)
    if path.is_dir():
        kind = folder_kind(path)
        if kind == "series":
            return series_folder(path)
        if kind == "benchmark":
            return benchmark_folder(path)
    elif path.is_file() and (document := _bundle_document(path)) is not None:
        if _kind_of(document) is not None:
            return _from_bundle(path, document)
    raise AoeError(f"{path}: {NOT_A_COLLECTION}")


def _bundle_document(path: Path) -> dict[str, Any] | None:
    """The parsed file when it is a JSON object naming a bundle type, else None (it is something else)."""
    try:
        data = json.loads(Path(path).read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and _kind_of(data) is not None else None


def _kind_of(document: dict[str, Any]) -> FolderKind | None:
    return next((kind for kind, name in BUNDLE_TYPES.items() if document.get("artifact_type") == name), None)


def _from_bundle(path: Path, document: dict[str, Any]) -> SeriesSource | BenchmarkSource:
    if document.get("schema_version") != BUNDLE_SCHEMA:
        version = document.get("schema_version")
        raise AoeError(f"{path}: schema_version {version!r} is not supported (expected {BUNDLE_SCHEMA})")
    name = str(document.get("name") or path.name.split(".")[0])
    if _kind_of(document) == "series":
        return _series_part(path, name, document, f"{path}")
    arenas = []
    for folder, part in sorted(_object(document, "arenas", str(path)).items()):
        found = ARENA_DIR.match(folder)
        if found is None or not isinstance(part, dict):
            raise AoeError(f"{path}: field arenas.{folder}: expected an NN-<arena> series")
        arenas.append((found.group(2), _series_part(path / folder, folder, part, f"{path} arenas.{folder}")))
    return BenchmarkSource(path, name, partial(_checkpoint, document, "benchmark", BENCHMARK_SCHEMA, str(path)), arenas)


def _series_part(location: Path, name: str, part: dict[str, Any], where: str) -> SeriesSource:
    rounds = []
    for round_name, match in _object(part, "rounds", where).items():
        found = ROUND_DIR.match(round_name)
        if found is None or not isinstance(match, dict):
            raise AoeError(f"{where}: field rounds.{round_name}: expected a round-NNN match")
        at = location / round_name
        rounds.append(RoundSource(int(found.group(1)), at, partial(match_from_document, at, match), True))
    checkpoint = partial(_checkpoint, part, "series", SERIES_SCHEMA, where)
    return SeriesSource(location, name, checkpoint, sorted(rounds, key=lambda r: r.number))


def _checkpoint(part: dict[str, Any], key: str, schema: int, where: str) -> dict[str, Any]:
    checkpoint = part.get(key)
    if checkpoint is None:
        return {}
    if not isinstance(checkpoint, dict) or checkpoint.get("schema_version") != schema:
        raise AoeError(f"{where}: field {key}: expected a {key} checkpoint with schema_version {schema}")
    return checkpoint


def _object(part: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = part.get(key) or {}
    if not isinstance(value, dict):
        raise AoeError(f"{where}: field {key}: expected an object")
    return value
