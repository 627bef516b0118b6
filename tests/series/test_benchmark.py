"""`BenchmarkRunner` and `aoe benchmark` on scripted territories: benchmark.json (schema 2), resume, refusal."""

from __future__ import annotations

import json

import pytest

from aoe_tui.analysis.standings import standings_report
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.benchmark import BenchmarkRunner
from aoe_tui.engine.series import SeriesStopped
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.series_files import read_suite
from tests.fixture_paths import PROJECT
from tests.series.helpers import ScriptedRounds, quick_arena

KEYS = ["schema_version", "suite_id", "arenas_requested", "arenas_completed", "plan", "arenas", "standings"]


def write_suite(tmp_path, **b_rules):
    quick_arena(tmp_path / "a")
    quick_arena(tmp_path / "b", territories=2, arena_id="first-build-duo", **b_rules)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[suite]\nid = "quick"\n\n[[arenas]]\nmanifest = "a/arena.json"\nrounds = 2\n\n'
        '[[arenas]]\nmanifest = "b/arena.json"\n'
    )
    return suite


class Factories:
    def __init__(self, stop_in=None):
        self.made, self.stop_in, self.benchmark = {}, stop_in, None

    def __call__(self, manifest):
        arena_id = load_manifest(manifest).arena.id
        rounds = ScriptedRounds(manifest, stop_in_round=1 if arena_id == self.stop_in else None)
        rounds.series = self.benchmark
        self.made[arena_id] = rounds
        return rounds


def bench(suite, output, factories, lines, **options):
    runner = BenchmarkRunner(suite, output, factories, report=lines.append, **options)
    factories.benchmark = runner
    return runner


async def test_a_benchmark_runs_one_series_per_arena_and_resumes_after_a_stop(tmp_path):
    suite, output, lines = write_suite(tmp_path), tmp_path / "bench", []
    first = Factories(stop_in="first-build-duo")
    with pytest.raises(SeriesStopped):
        await bench(suite, output, first, lines).run()
    stopped = json.loads((output / "benchmark.json").read_text())
    assert list(stopped) == KEYS and stopped["arenas_completed"] == 1
    assert [(a["arena_id"], a["rounds_completed"], a["aborted"]) for a in stopped["arenas"]] == [
        ("first-build", 2, False),
        ("first-build-duo", 0, True),
    ]
    again = Factories()
    final = await bench(suite, output, again, lines).run()
    assert again.made["first-build"].plans == [] and again.made["first-build-duo"].plans == [(1, 1), (2, 1)]
    assert final == json.loads((output / "benchmark.json").read_text())
    assert final["schema_version"] == 2 and final["suite_id"] == "quick" and final["arenas_requested"] == 2
    assert final["arenas_completed"] == 2
    assert [(p["arena_id"], p["rounds"], p["output"]) for p in final["plan"]] == [
        ("first-build", 2, str(output / "01-first-build")),
        ("first-build-duo", 2, str(output / "02-first-build-duo")),
    ]
    assert all(len(p["compatibility_key"]) == 64 for p in final["plan"])
    assert (output / "02-first-build-duo" / "round-001.interrupted-1").is_dir()
    report = standings_report(output)
    assert final["standings"] == report["standings"]
    assert [{"arena_id": a["arena_id"], "standings": a["standings"]} for a in final["arenas"]] == report["arenas"]
    oracle = next(r for r in final["standings"] if r["agents"] == ["oracle"])
    assert oracle["appearances"] == 4 and oracle["adapter"] == "oracle" and oracle["milestones_available"] == 4
    assert any(line.startswith("[first-build-duo] round 2/2 decided") for line in lines)


async def test_a_changed_arena_refuses_to_resume_the_benchmark(tmp_path):
    suite, output, lines = write_suite(tmp_path), tmp_path / "bench", []
    await bench(suite, output, Factories(), lines).run()
    changed = write_suite(tmp_path, tick_ms=1000)
    with pytest.raises(AoeError, match=r"cannot resume, arena first-build-duo changed.*--fresh"):
        await bench(changed, output, Factories(), lines).run()


def test_the_bundled_suite_names_two_valid_arenas():
    suite, arenas = read_suite(PROJECT / "suites" / "first-build.toml")
    ids = [load_manifest(path).arena.id for path, _ in arenas]
    assert suite.suite.id == "first-build" and ids == ["first-build", "first-build-sprint"]


def test_a_bad_suite_is_one_line_naming_the_field(tmp_path):
    suite = tmp_path / "suite.toml"
    suite.write_text('[suite]\nid = "x"\n\n[[arenas]]\nmanifest = "missing.toml"\n')
    with pytest.raises(AoeError, match=r"suite.toml: field arenas\[0\].manifest: .*missing.toml does not exist"):
        read_suite(suite)
    suite.write_text('[suite]\nid = "x"\n\n[[arenas]]\nmanifest = "a.toml"\nround = 2\n')
    with pytest.raises(AoeError, match=r"field arenas\[0\].round"):
        read_suite(suite)
