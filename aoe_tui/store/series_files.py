"""The files of a series and a benchmark on disk, read strictly and named in every error.

A series folder holds `series.json` and one ordinary match folder per round,
`round-NNN/`; a round that was interrupted before its checkpoint is kept
beside it as `round-NNN.interrupted-N`, and an attempt replayed because an
agent was unavailable through no fault of its own as `round-NNN.unavailable-N`.
A benchmark folder holds `benchmark.json` and one series per arena,
`NN-<arena_id>/`. A suite is a small TOML file naming arena manifests.

Only readers and layout live here; the engine writes the files (atomically). Readers of a whole series or
benchmark, folder or exported bundle, go through `series_source`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.manifest_file import read_manifest_data, validated

SERIES_FILE = "series.json"
BENCHMARK_FILE = "benchmark.json"
SERIES_SCHEMA = 1
BENCHMARK_SCHEMA = 2
ROUND_DIR = re.compile(r"^round-(\d{3,})$")
ARENA_DIR = re.compile(r"^(\d{2,})-(.+)$")

FolderKind = Literal["series", "benchmark"]


def round_name(number: int) -> str:
    return f"round-{number:03d}"


def arena_dir_name(index: int, arena_id: str) -> str:
    return f"{index:02d}-{arena_id}"


def set_aside_name(path: Path, why: str) -> Path:
    """The first free `<name>.<why>-N` beside `path` (N from 1): kept for inspection, never overwritten."""
    n = 1
    while (candidate := path.with_name(f"{path.name}.{why}-{n}")).exists():
        n += 1
    return candidate


def _read_object(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AoeError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise AoeError(f"{path}: cannot read {what} ({error.__class__.__name__})") from None
    except json.JSONDecodeError as error:
        raise AoeError(f"{path} line {error.lineno}: bad JSON in {what} ({error.msg})") from None
    if not isinstance(data, dict):
        raise AoeError(f"{path}: expected a JSON object in {what}")
    return data


def read_checkpoint(path: Path, schema_version: int) -> dict[str, Any]:
    """`series.json` or `benchmark.json`, with its schema version checked."""
    data = _read_object(path, path.name)
    if data.get("schema_version") != schema_version:
        raise AoeError(
            f"{path}: schema_version {data.get('schema_version')!r} is not supported (expected {schema_version})"
        )
    return data


def folder_kind(path: Path) -> FolderKind | None:
    """Whether `path` is a series folder, a benchmark folder, or neither (a single match, say)."""
    path = Path(path)
    if not path.is_dir():
        return None
    if (path / BENCHMARK_FILE).is_file():
        return "benchmark"
    if (path / SERIES_FILE).is_file() or any(ROUND_DIR.match(p.name) and p.is_dir() for p in path.iterdir()):
        return "series"
    return None


def round_dirs(series_dir: Path) -> list[tuple[int, Path]]:
    """Every `round-NNN/` folder (not the set-aside attempts), by round number."""
    found = [(int(m.group(1)), p) for p in Path(series_dir).iterdir() if p.is_dir() and (m := ROUND_DIR.match(p.name))]
    return sorted(found)


def benchmark_arena_dirs(benchmark_dir: Path) -> list[tuple[str, Path]]:
    """`NN-<arena_id>/` series folders of a benchmark, in plan order, as (arena_id, folder)."""
    found = [
        (int(m.group(1)), m.group(2), p)
        for p in Path(benchmark_dir).iterdir()
        if p.is_dir() and (m := ARENA_DIR.match(p.name)) and folder_kind(p) == "series"
    ]
    return [(arena_id, path) for _, arena_id, path in sorted(found)]


class SuiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SuiteInfo(SuiteModel):
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    display_name: str | None = None


class SuiteArena(SuiteModel):
    manifest: str = Field(min_length=1)
    rounds: int | None = Field(default=None, ge=1)


class Suite(SuiteModel):
    suite: SuiteInfo
    arenas: list[SuiteArena] = Field(min_length=1)


def read_suite(path: Path) -> tuple[Suite, list[tuple[Path, int | None]]]:
    """The suite and its arenas as (manifest path resolved beside the suite file, rounds or None)."""
    path = Path(path)
    suite = validated(Suite, read_manifest_data(path, "suite"), path)
    arenas = [((path.parent / a.manifest).resolve(), a.rounds) for a in suite.arenas]
    for index, (manifest, _) in enumerate(arenas):
        if not manifest.is_file():
            raise AoeError(f"{path}: field arenas[{index}].manifest: {manifest} does not exist")
    return suite, arenas
