"""Reading an arena manifest from disk (`arena.toml`, or `arena.json` of a saved match).

The pure rules live in `domain.manifest_rules`; this module adds what needs
the file system: TOML syntax errors with their line, verifier scripts that
must exist next to the manifest or in the project's own `verify/`, and fleet
files (`aoe run ARENA --agents FLEET.toml`): a TOML of `[[agents]]` tables only
that replaces the arena's agents, so one arena is raced by several line-ups
without being copied (who plays is not part of the contest, see
`engine.provenance`).
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.manifest_rules import Problem, format_location, validate_manifest

M = TypeVar("M", bound=BaseModel)

PROJECT_VERIFY = Path(__file__).resolve().parents[2] / "verify"
"""The project's own verifier scripts, shared by the bundled arenas (`verifier = "verify/service-up.sh"`)."""
VERIFIER_HELPERS = PROJECT_VERIFY / "lib.sh"
"""The shell helpers every verifier may source; the referee names them in `AOE_VERIFY_LIB`, so an arena
folder's own scripts find them wherever the folder lives."""


FLEET_KEY = "agents"


@dataclass(frozen=True)
class FileProblem:
    """A manifest problem and the file whose text causes it: the arena, or the fleet applied to it."""

    file: Path
    problem: Problem

    def __str__(self) -> str:
        return f"{self.file}: {self.problem}"


def read_manifest_data(path: Path, what: str = "manifest") -> dict:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AoeError(f"{path}: no such {what}") from None
    except (IsADirectoryError, UnicodeDecodeError, OSError) as error:
        raise AoeError(f"{path}: cannot read {what} ({error.__class__.__name__})") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as error:
        raise AoeError(f"{path}: {error}") from None
    if not isinstance(data, dict):
        raise AoeError(f"{path}: a {what} must be a table/object")
    return data


def validated(model: type[M], data: dict, path: Path) -> M:
    """`data` as `model`, or one line naming the file and the first field at fault. A misspelt key also makes
    the key it meant "missing": the misspelling is the line worth reading, so it comes first."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        first = min(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
        where = format_location(first["loc"])
        raise AoeError(f"{path}: field {where}: {first['msg']}" if where else f"{path}: {first['msg']}") from None


def checked_manifest(path: Path, fleet: Path | None = None) -> tuple[Manifest | None, list[FileProblem]]:
    """The arena at `path` with the agents of `fleet` (when given), and every problem, each with its file.

    The line-up is checked by the manifest's own agent model and rules. A
    problem the arena alone also has is the arena's; one that only the fleet's
    agents bring (an unknown territory, a territory left without an agent) is
    the fleet's. The arena's own agents are replaced, so their problems do not count.
    """
    path = Path(path)
    data = read_manifest_data(path)
    if fleet is None:
        manifest, problems = _problems(path, data)
        return manifest, [FileProblem(path, p) for p in problems]
    fleet = Path(fleet)
    fleet_data = read_manifest_data(fleet, "fleet")
    located = [
        FileProblem(fleet, Problem(key, f"unknown key (a fleet holds only [[{FLEET_KEY}]] tables)"))
        for key in fleet_data
        if key != FLEET_KEY
    ]
    if FLEET_KEY not in fleet_data:
        return None, [*located, FileProblem(fleet, Problem(FLEET_KEY, "required key is missing"))]
    _, arena_alone = _problems(path, data)
    manifest, problems = _problems(path, {**data, FLEET_KEY: fleet_data[FLEET_KEY]})
    located += [FileProblem(path if p in arena_alone else fleet, p) for p in problems]
    return (manifest if not located else None), located


def _problems(path: Path, data: dict) -> tuple[Manifest | None, list[Problem]]:
    """Every problem of the manifest `data` read from `path`, including missing verifier scripts.

    Verifiers are checked from the raw milestones, so a manifest with shape
    errors elsewhere still hears about a missing script in the same pass.
    """
    manifest, problems = validate_manifest(data)
    for index, milestone in enumerate(_raw_milestones(data)):
        verifier = milestone.get("verifier")
        if isinstance(verifier, str) and verifier.strip():
            try:
                resolve_verifier(path, verifier)
            except AoeError:
                problems.append(
                    Problem(
                        f"build.milestones[{index}].verifier",
                        f"milestone {milestone.get('id')}: {_not_found(path, verifier)}",
                    )
                )
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
    return f"verifier {verifier} not found (looked in {Path(manifest_path).resolve().parent} and {PROJECT_VERIFY})"


def resolve_verifier(manifest_path: Path, verifier: str) -> Path:
    """The script a milestone's `verifier` names; AoeError naming the manifest and path when there is none."""
    for candidate in _candidates(manifest_path, verifier):
        if candidate.is_file():
            return candidate
    raise AoeError(f"{manifest_path}: {_not_found(manifest_path, verifier)}")


def load_manifest(path: Path, fleet: Path | None = None) -> Manifest:
    """The valid arena at `path`, playing the agents of `fleet` when given; AoeError naming the first problem."""
    manifest, problems = checked_manifest(path, fleet)
    if problems:
        command = f"aoe validate {path}" + (f" --agents {fleet}" if fleet is not None else "")
        more = f" (and {len(problems) - 1} more; run `{command}`)" if len(problems) > 1 else ""
        raise AoeError(f"{problems[0]}{more}")
    assert manifest is not None
    return manifest
