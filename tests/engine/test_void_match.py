"""A match whose every territory is lost to infrastructure is void: no result, a non-zero exit, no standings."""

from __future__ import annotations

import contextlib
import dataclasses
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from aoe_tui.analysis.ladder import ladder_report
from aoe_tui.cli.run_commands import VOID_EXIT, run_headless
from aoe_tui.engine.referee import VOID_REASON
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
from tests.engine.helpers import ARENA, RACE, TERRITORIES

LOST = {territory: dataclasses.replace(plan, lost_at_ms=1000) for territory, plan in RACE.items()}


@dataclass
class VoidRun:
    output: Path
    status: int
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def void_run(tmp_path_factory) -> VoidRun:
    """One headless run through the command's own path, every guest lost a second in (before any milestone)."""
    output = tmp_path_factory.mktemp("void") / "match"
    runner = MatchRunner(
        ARENA, output, ScriptedProvider(dict(LOST)), ScriptedLauncher({}), source=ManualSource(), drain_seconds=1
    )
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_headless(runner)
    return VoidRun(output, status, out.getvalue(), err.getvalue())


def test_every_territory_lost_to_infrastructure_ends_the_match_void(void_run):
    match = load_match(void_run.output)
    world = match.world
    assert world.match_state == "void" and world.winner is None and world.finish_reason == VOID_REASON
    failures = [e for e in match.events if e.kind == "infrastructure_failure"]
    assert sorted(e.territory for e in failures) == sorted(TERRITORIES)
    assert all(world.territories[t].competitor_state == "unavailable" for t in TERRITORIES)
    ending = [e.to_json() for e in match.events if e.kind in ("match_state_changed", "match_finished")][-2:]
    assert ending[0]["to"] == "void" and ending[0]["reason"] == VOID_REASON
    assert ending[1]["winner"] is None  # the finish event still marks the end; the state stays void
    assert match.events[-1].kind == "post_match_drain_finished"


def test_the_headless_run_says_so_in_one_line_and_exits_non_zero(void_run):
    assert void_run.status == VOID_EXIT != 0
    assert void_run.stderr.splitlines() == [
        f"aoe: match void ({VOID_REASON}); it counts in no standings; record: {void_run.output}"
    ]
    assert "Traceback" not in void_run.stdout + void_run.stderr
    assert "winner: none" not in void_run.stdout  # never reported as a finished match without a winner


def test_a_void_match_is_left_out_of_the_ladder(void_run):
    assert ladder_report([void_run.output])["matches"] == 0
