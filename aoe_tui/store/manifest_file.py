"""Reading an arena manifest from disk (`arena.toml`, or `arena.json` of a saved match).

The pure rules live in `domain.manifest_rules`; this module adds what needs
the file system: TOML syntax errors with their line, and verifier scripts
that must exist next to the manifest or in the project's own `verify/`.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.manifest_rules import Problem, validate_manifest

PROJECT_VERIFY = Path(__file__).resolve().parents[2] / "verify"
"""The project's own verifier scripts, shared by the bundled arenas (`verifier = "verify/service-up.sh"`)."""


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
    """Every problem of the manifest at `path`, including missing verifier scripts.

    Verifiers are checked from the raw milestones, so a manifest with shape
    errors elsewhere still hears about a missing script in the same pass.
    """
    data = read_manifest_data(path)
    manifest, problems = validate_manifest(data)
    for index, milestone in enumerate(_raw_milestones(data)):
        verifier = milestone.get("verifier")
        if isinstance(verifier, str) and verifier.strip():
            try:
                resolve_verifier(path, verifier)
            except AoeError:
                problems.append(Problem(f"build.milestones[{index}].verifier",
                                        f"milestone {milestone.get('id')}: {_not_found(path, verifier)}"))
    return manifest, problems


def _raw_milestones(data: dict) -> list[dict]:
    build = data.get("build")
    milestones = build.get("milestones") if isinstance(build, dict) else None
    return [m for m in milestones if isinstance(m, dict)] if isinstance(milestones, list) else []


def _candidates(manifest_path: Path, verifier: str) -> list[Path]:
    """The arena folder first, then the project's `verify/` (only for paths that stay inside it).

    No other folder is looked at: a stray `verify/` in some ancestor (a temp or
    home directory) must never change which scripts judge a match.
    """
    arena_dir = Path(manifest_path).resolve().parent
    candidates = [arena_dir / verifier]
    shared = (PROJECT_VERIFY.parent / verifier).resolve()
    if shared.is_relative_to(PROJECT_VERIFY):
        candidates.append(shared)
    return candidates


def _not_found(manifest_path: Path, verifier: str) -> str:
    return (f"verifier {verifier} not found (looked in {Path(manifest_path).resolve().parent} "
            f"and {PROJECT_VERIFY})")


def resolve_verifier(manifest_path: Path, verifier: str) -> Path:
    """The script a milestone's `verifier` names; AoeError naming the manifest and path when there is none."""
    for candidate in _candidates(manifest_path, verifier):
        if candidate.is_file():
            return candidate
    raise AoeError(f"{manifest_path}: {_not_found(manifest_path, verifier)}")


def load_manifest(path: Path) -> Manifest:
    manifest, problems = manifest_problems(path)
    if problems:
        more = f" (and {len(problems) - 1} more; run `aoe validate {path}`)" if len(problems) > 1 else ""
        raise AoeError(f"{path}: {problems[0]}{more}")
    assert manifest is not None
    return manifest
