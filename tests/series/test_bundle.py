"""A series or benchmark exported as one bundle: standings, the series view and replays read it like the folder."""

from __future__ import annotations

import json
import shutil

import pytest

from aoe_tui.analysis.series_overview import overview
from aoe_tui.analysis.standings import standings_report
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.series_app import SeriesApp
from aoe_tui.cli.main import main
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.bundle_export import export_bundle
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.series_source import open_collection
from aoe_tui.testing.clock import ManualSource
from tests.series.helpers import SERIES, STORED, copy_series, write_round_arena


def bundle_of(folder, out):
    return export_bundle(open_collection(folder), out).output


def benchmark(tmp_path):
    bench = tmp_path / "bench"
    first = copy_series(bench / "01-first-build-real")
    second = bench / "02-first-build-variant"
    for number in (1, 2):
        shutil.copytree(first / f"round-00{number}", second / f"round-00{number}")
    (second / "series.json").write_text(json.dumps({**STORED, "rounds_requested": 2}))
    (bench / "benchmark.json").write_text(json.dumps({"schema_version": 2, "suite_id": "fixture-suite"}))
    for round_dir in first.glob("round-*"):
        write_round_arena(round_dir)
    for round_dir in second.glob("round-*"):
        write_round_arena(round_dir, effort={"luna-builder": "low"})
    return bench


def test_a_series_bundle_has_the_folders_standings_rounds_and_matches(tmp_path):
    bundle = bundle_of(SERIES, tmp_path / "s.series.json")
    assert standings_report(bundle) == standings_report(SERIES)
    assert standings_report(SERIES)["standings"] == STORED["standings"]
    from_folder, from_bundle = overview(SERIES), overview(bundle)
    assert from_bundle.arena_id == from_folder.arena_id and from_bundle.rounds_requested == 3
    assert [(r.number, r.path.name, r.state, r.seats, r.outcomes, r.winner) for r in from_bundle.rounds] == [
        (r.number, r.path.name, r.state, r.seats, r.outcomes, r.winner) for r in from_folder.rounds
    ]
    for folder_row, bundle_row in zip(from_folder.rounds, from_bundle.rounds):
        folder_match, bundle_match = load_match(folder_row.path), bundle_row.load()
        assert bundle_match.events == folder_match.events and bundle_match.world == folder_match.world
        assert bundle_match.analyses == folder_match.analyses
        assert bundle_match.provenance == folder_match.provenance


def test_a_benchmark_bundle_has_the_folders_standings(tmp_path):
    bench = benchmark(tmp_path)
    bundle = bundle_of(bench, tmp_path / "b.benchmark.json")
    assert standings_report(bundle) == standings_report(bench)
    assert [a["arena_id"] for a in standings_report(bundle)["arenas"]] == ["first-build-real", "first-build-variant"]
    assert overview(bundle).suite_id == "fixture-suite"


def test_exporting_a_bundle_gives_the_same_bytes(tmp_path):
    first = bundle_of(benchmark(tmp_path), tmp_path / "first.benchmark.json")
    assert bundle_of(first, tmp_path / "second.benchmark.json").read_bytes() == first.read_bytes()


def test_a_changed_event_in_a_bundle_round_is_detected(tmp_path):
    bundle = bundle_of(SERIES, tmp_path / "s.series.json")
    document = json.loads(bundle.read_text())
    document["rounds"]["round-002"]["events"][3]["elapsed_ms"] += 1
    bundle.write_text(json.dumps(document))
    with pytest.raises(AoeError, match=r"s\.series\.json/round-002: the events were changed after export"):
        standings_report(bundle)


def test_set_aside_attempts_stay_behind_and_are_named(tmp_path):
    series = copy_series(tmp_path / "series")
    shutil.copytree(series / "round-003", series / "round-003.interrupted-1")
    report = export_bundle(open_collection(series), tmp_path / "s.series.json")
    assert ("round-003.interrupted-1/", "a set-aside attempt, not a round: stays on this machine") in report.left_out
    assert set(json.loads(report.output.read_text())["rounds"]) == {"round-001", "round-002", "round-003"}


async def test_enter_on_a_bundle_round_opens_its_replay(tmp_path):
    app = SeriesApp(overview(bundle_of(SERIES, tmp_path / "s.series.json")), clock=ManualSource().now)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, MatchScreen) and app.screen.session.match.name == "round-002"


def test_the_cli_exports_a_series_and_reads_the_bundle(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["export", str(SERIES)]) == 0
    assert capsys.readouterr().out.startswith("exported series bundle: first-build-real-20260814-075912.series.json")
    assert main(["standings", "first-build-real-20260814-075912.series.json", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["standings"] == STORED["standings"]
    assert main(["replay", "first-build-real-20260814-075912.series.json", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["standings"] == STORED["standings"]
