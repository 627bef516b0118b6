"""Manifests on disk: verifier scripts come from the arena folder or the project's `verify/`, nowhere else."""

import shutil

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.manifest_file import PROJECT_VERIFY, checked_manifest, load_manifest, resolve_verifier
from tests.fixture_paths import PROJECT

ARENA_DIR = PROJECT / "arenas" / "first-build"


@pytest.fixture
def copied_arena(tmp_path):
    """The bundled arena copied two levels below a stray `verify/` that holds look-alike scripts."""
    stray = tmp_path / "verify"
    stray.mkdir()
    for name in ("service-up.sh", "only-here.sh"):
        (stray / name).write_text("#!/bin/sh\nexit 0\n")
    arena = tmp_path / "projects" / "first-build"
    shutil.copytree(ARENA_DIR, arena)
    return arena / "arena.toml"


def test_project_verify_is_the_repositorys(copied_arena):
    assert PROJECT_VERIFY == PROJECT / "verify"
    assert resolve_verifier(copied_arena, "verify/service-up.sh") == PROJECT / "verify" / "service-up.sh"


def test_a_stray_verify_folder_above_the_arena_is_not_used(copied_arena, tmp_path):
    with pytest.raises(AoeError) as caught:
        resolve_verifier(copied_arena, "verify/only-here.sh")
    assert str(copied_arena) in str(caught.value) and "verify/only-here.sh" in str(caught.value)
    text = copied_arena.read_text().replace('"verify/write-read.sh"', '"verify/only-here.sh"')
    copied_arena.write_text(text)
    manifest, problems = checked_manifest(copied_arena)
    assert [str(p) for p in problems] == [
        f"{copied_arena}: build.milestones[1].verifier: milestone write-read: verifier verify/only-here.sh not found "
        f"(looked in {copied_arena.parent} and {PROJECT_VERIFY})"
    ]
    with pytest.raises(AoeError, match=r"arena.toml: build.milestones\[1\].verifier: milestone write-read"):
        load_manifest(copied_arena)


def test_the_arena_folder_comes_first(copied_arena):
    own = copied_arena.parent / "verify"
    own.mkdir()
    (own / "service-up.sh").write_text("#!/bin/sh\nexit 1\n")
    assert resolve_verifier(copied_arena, "verify/service-up.sh") == own / "service-up.sh"


def test_paths_that_leave_the_project_verify_are_not_taken_from_it(copied_arena):
    with pytest.raises(AoeError):
        resolve_verifier(copied_arena, "verify/../pyproject.toml")


def test_missing_verifier_is_reported_with_shape_errors(copied_arena):
    text = copied_arena.read_text().replace('"verify/write-read.sh"', '"verify/absent.sh"')
    copied_arena.write_text(text + "\n[surprise]\ngift = true\n")
    manifest, problems = checked_manifest(copied_arena)
    assert manifest is None
    assert [p.problem.path for p in problems] == ["surprise", "build.milestones[1].verifier"]
