"""Running `aoe run` as a user would, for the real-VM tests of how matches start and stop.

A short two-guest First Build (45 s on the clock) finishes in about two
minutes under TCG, so the suite can afford several whole matches: back to
back, side by side, and stopped by signals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from aoe_tui.domain.reducer import reduce
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena

AOE = [sys.executable, "-m", "aoe_tui.cli.main"]


def short_arena(directory: Path, duration_seconds: int = 45) -> Path:
    """First Build with two guests (oracle vs amnesiac) and a short clock, as arena.json."""
    data = arena_data(duration_seconds=duration_seconds, post_match_drain_seconds=5)
    data["territories"] = data["territories"][:2]
    for milestone in data["build"]["milestones"]:  # no check may outlast the clock
        milestone["timeout_seconds"] = min(milestone["timeout_seconds"], duration_seconds)
    data["agents"] = [a for a in data["agents"] if a["territory"] in {t["id"] for t in data["territories"]}]
    directory.mkdir(parents=True, exist_ok=True)
    return write_arena(directory, data)


def start_headless(arena: Path, cwd: Path, *extra: str) -> subprocess.Popen:
    """`aoe run ARENA --headless` from `cwd` with the default (relative) output folder and ports."""
    return subprocess.Popen(
        [*AOE, "run", str(arena), "--headless", *extra],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(PROJECT)},
    )


def wait_for_line(process: subprocess.Popen[str], needle: str, timeout: float) -> list[str]:
    """Read the process's output until a line contains `needle`; returns the lines read."""
    assert process.stdout is not None, "started with stdout=subprocess.PIPE"
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            raise AssertionError(f"exited before {needle!r}: {''.join(seen)[-2000:]}")
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"no {needle!r} within {timeout:g} s: {''.join(seen)[-2000:]}")


def only_match_in(folder: Path) -> Path:
    matches = sorted(p for p in (folder / "matches").iterdir() if p.is_dir())
    assert len(matches) == 1, matches
    return matches[0]


def domains_of(match_dir: Path) -> list[str]:
    """libvirt domains still defined for this match: those whose XML points into its folder.

    (Names carry a random suffix, and two matches started in the same minute share the rest of the name.)
    """

    def virsh(*args: str) -> str:  # a domain undefined between the two calls just prints nothing
        return subprocess.run(["virsh", "-c", "qemu:///system", *args], capture_output=True, text=True).stdout

    folder = str(match_dir.resolve()) + "/"
    names = [n for n in virsh("list", "--all", "--name").split() if n.startswith("aoe-")]
    return [n for n in names if folder in virsh("dumpxml", n)]


def assert_replayable(match_dir: Path) -> dict:
    match = load_match(match_dir)
    world = json.loads((match_dir / "world.json").read_text())
    assert reduce(match.events).to_json() == world
    return world


def failure_details(match, territory: str, milestone: str) -> list[str]:
    """Why each check of the milestone failed (not the one the end of the match cut short)."""
    from aoe_tui.engine.referee import CANCELLED_DETAIL

    return [
        e.to_json()["detail"]
        for e in match.events
        if e.kind == "milestone_failed"
        and e.to_json()["territory"] == territory
        and e.to_json()["milestone"] == milestone
        and e.to_json()["detail"] != CANCELLED_DETAIL
    ]
