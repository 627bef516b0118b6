"""Reading an arena manifest from disk (`arena.toml`, or `arena.json` of a saved match).

The pure rules live in `domain.manifest_rules`; this module adds what needs
the file system: TOML syntax errors with their line, and verifier scripts
that must exist next to the manifest.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.manifest_rules import Problem, validate_manifest


def read_manifest_data(path: Path) -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AoeError(f"{path}: no such manifest") from None
    except (IsADirectoryError, UnicodeDecodeError, OSError) as error:
        raise AoeError(f"{path}: cannot read manifest ({error.__class__.__name__})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise AoeError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise AoeError(f"{path}: a manifest must be a table/object")
    return data


def manifest_problems(path: Path) -> tuple[Manifest | None, list[Problem]]:
    """Every problem of the manifest at `path`, including missing verifier scripts."""
    manifest, problems = validate_manifest(read_manifest_data(path))
    if manifest is not None and manifest.build is not None:
        for index, milestone in enumerate(manifest.build.milestones):
            if not resolve_verifier(path, milestone.verifier).is_file():
                problems.append(Problem(f"build.milestones[{index}].verifier",
                                        f"{milestone.verifier} not found next to the manifest"))
    return manifest, problems


def resolve_verifier(manifest_path: Path, verifier: str) -> Path:
    """Verifier paths are relative to the arena folder, falling back to the project's `verify/`."""
    base = Path(manifest_path).resolve().parent
    candidate = base / verifier
    if candidate.exists():
        return candidate
    for parent in base.parents:
        if (parent / verifier).exists():
            return parent / verifier
    return candidate


def load_manifest(path: Path) -> Manifest:
    manifest, problems = manifest_problems(path)
    if problems:
        more = f" (and {len(problems) - 1} more; run `aoe validate {path}`)" if len(problems) > 1 else ""
        raise AoeError(f"{path}: {problems[0]}{more}")
    assert manifest is not None
    return manifest
