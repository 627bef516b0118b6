"""The files of a cup on disk: `CUP.toml` read strictly, `cup.json`, and the heat file of each attempt.

A cup folder holds `cup.json` and one ordinary match folder per attempt of a heat,
`round-R/heat-H/attempt-A/`. Each attempt folder also holds `cup-heat.json`: the match's name and slug in
the published format (`opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1`), which the
loader gives the match as its name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aoe_tui.domain.cup_rules import CUP_SCHEMA, CupSpec
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.manifest_file import read_manifest_data, validated

CUP_FILE = "cup.json"
HEAT_FILE = "cup-heat.json"


def read_cup_spec(path: Path) -> tuple[CupSpec, Path]:
    """The cup and its arena manifest's path (resolved beside the cup file)."""
    path = Path(path)
    spec = validated(CupSpec, read_manifest_data(path, "cup"), path)
    spec.check(str(path))
    arena = (path.parent / spec.cup.arena).resolve()
    if not arena.is_file():
        raise AoeError(f"{path}: field cup.arena: {arena} does not exist")
    return spec, arena


def read_cup_checkpoint(path: Path) -> dict[str, Any]:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AoeError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise AoeError(f"{path}: cannot read {CUP_FILE} ({error.__class__.__name__})") from None
    except json.JSONDecodeError as error:
        raise AoeError(f"{path} line {error.lineno}: bad JSON in {CUP_FILE} ({error.msg})") from None
    if not isinstance(data, dict):
        raise AoeError(f"{path}: expected a JSON object in {CUP_FILE}")
    if data.get("schema_version") != CUP_SCHEMA:
        raise AoeError(
            f"{path}: schema_version {data.get('schema_version')!r} is not supported (expected {CUP_SCHEMA})"
        )
    return data


def is_cup_folder(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / CUP_FILE).is_file()


def read_heat_file(match_dir: Path) -> dict[str, Any] | None:
    """An attempt folder's `cup-heat.json` (name, slug, cup context), None when absent or unreadable."""
    path = Path(match_dir) / HEAT_FILE
    if path.is_symlink() or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("name"), str) else None
