"""`aoe arena validate DIR`: everything an arena folder needs before it can run, in one list.

The manifest's own rules (shape, ids, dependencies, visualization nodes tied to
existing milestones, verifier scripts that exist) come from
`store.manifest_file`; this adds what only the whole folder can answer: each
verifier script is executable, every provisioning source is readable, the fog
brief exists, the player instruction renders, and the arena's own scripted
plans (`adapters/NAME.toml` of its agents) read.
"""

from __future__ import annotations

import os
from pathlib import Path

from aoe_tui.agents.registry import arena_plan
from aoe_tui.agents.scripted.plan_file import read_plan
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.instructions import brief_files
from aoe_tui.engine.provisioning import load_bundle
from aoe_tui.store.manifest_file import checked_manifest, resolve_verifier

MANIFEST_NAME = "arena.toml"


def arena_manifest(directory: Path) -> Path:
    path = Path(directory)
    path = path / MANIFEST_NAME if path.is_dir() else path
    if not path.is_file():
        raise AoeError(f"{directory}: no {MANIFEST_NAME} (an arena folder holds its manifest)")
    return path


def arena_problems(directory: Path) -> tuple[Path, list[str]]:
    """The manifest path and every problem of the arena folder (empty when it is ready to run)."""
    path = arena_manifest(directory)
    manifest, located = checked_manifest(path)
    problems = [str(p) for p in located]
    if manifest is None:
        return path, problems
    for index, milestone in enumerate(manifest.build.milestones if manifest.build else []):
        script = resolve_verifier(path, milestone.verifier)
        if not os.access(script, os.X_OK):
            problems.append(f"{path}: build.milestones[{index}].verifier: {script} is not executable (chmod +x)")
    for check in (lambda: load_bundle(manifest, path), lambda: brief_files(manifest, path)):
        try:
            check()
        except AoeError as error:
            problems.append(str(error))
    plans = {arena_plan(agent.adapter, path.parent) for agent in manifest.agents}
    for plan in sorted(p for p in plans if p is not None):
        problems += read_plan(plan)[1]
    return path, problems
