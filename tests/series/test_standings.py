"""Standings recomputed from the round matches, equal to the published ones field for field."""

from __future__ import annotations

import json
import shutil

import pytest

from aoe_tui.analysis.standings import standings_report
from aoe_tui.cli.main import main
from aoe_tui.domain.errors import AoeError
from tests.series.helpers import (
    SERIES,
    STORED,
    copy_series,
    edit_events,
    write_round_arena,
)


def test_the_fixture_series_standings_are_recomputed_exactly():
    assert standings_report(SERIES)["standings"] == STORED["standings"]


def test_they_are_computed_from_the_rounds_not_copied_from_series_json(tmp_path, capsys):
    series = copy_series(tmp_path / "series")
    stored = json.loads((series / "series.json").read_text())
    del stored["standings"]
    (series / "series.json").write_text(json.dumps(stored))
    assert main(["standings", str(series), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["standings"] == STORED["standings"]
    (series / "series.json").unlink()
    assert standings_report(series)["standings"] == STORED["standings"]


def test_a_round_without_recorded_usage_makes_that_agents_totals_na(tmp_path, capsys):
    series = copy_series(tmp_path / "series")

    def forget_luna_usage(event):
        if event["kind"] == "usage_charged" and event["agent"] == "luna-builder":
            event.update(input_tokens=None, output_tokens=None, cost_microusd=None)

    edit_events(series / "round-002" / "events.jsonl", forget_luna_usage)
    rows = {row["agent"]: row for row in standings_report(series)["standings"]}
    luna = rows["luna-builder"]
    assert (luna["appearances"], luna["usage_recorded"]) == (3, 2)
    assert luna["input_tokens"] is luna["output_tokens"] is luna["cost_microusd"] is None
    assert rows["deepseek-builder"] == STORED["standings"][0]
    assert main(["standings", str(series)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("luna-builder"))
    assert line.split()[5:10] == ["n/a", "2/3", "n/a", "n/a", "n/a"]


def test_an_undecided_round_is_not_counted(tmp_path):
    series = copy_series(tmp_path / "series")

    def unfinish(event):
        if event["kind"] == "match_state_changed" and event["to"] == "finished":
            event["to"] = "aborted"

    edit_events(series / "round-003" / "events.jsonl", unfinish)
    rows = {row["agent"]: row for row in standings_report(series)["standings"]}
    assert rows["deepseek-builder"]["appearances"] == 2 and rows["deepseek-builder"]["wins"] == 1
    assert rows["deepseek-builder"]["median_durable_ms"] == 38695


def test_benchmark_standings_are_keyed_by_model_configuration(tmp_path):
    bench = tmp_path / "bench"
    first = copy_series(bench / "01-first-build-real")
    second = bench / "02-first-build-variant"
    for number in (1, 2):
        shutil.copytree(first / f"round-00{number}", second / f"round-00{number}")
    (second / "series.json").write_text("{}")
    (bench / "benchmark.json").write_text("{}")
    for round_dir in first.glob("round-*"):
        write_round_arena(round_dir)
    for round_dir in second.glob("round-*"):
        write_round_arena(round_dir, effort={"luna-builder": "low"})
    report = standings_report(bench)
    assert [a["arena_id"] for a in report["arenas"]] == ["first-build-real", "first-build-variant"]
    assert report["arenas"][0]["standings"] == STORED["standings"]
    rows = {(r["model"], r["reasoning_effort"]): r for r in report["standings"]}
    assert len(rows) == 4
    deepseek = rows["deepseek/deepseek-v4-flash-0731", "high"]
    assert deepseek["agents"] == ["deepseek-builder"] and deepseek["adapter"] == "claux"
    assert (deepseek["appearances"], deepseek["wins"], deepseek["durable_deployments"]) == (5, 3, 3)
    assert deepseek["durable_times_ms"] == [38695, 38695, 50234] and deepseek["median_durable_ms"] == 38695
    assert (deepseek["milestone_passes"], deepseek["milestones_available"]) == (12, 20)
    assert deepseek["failures"] == {"arena": 3, "controller": 2}
    assert deepseek["cost_microusd"] == 2303 + 716 + 592 and deepseek["cost_per_durable_microusd"] == 3611 // 3
    assert rows["openai/gpt-5.6-luna", "high"]["appearances"] == 3
    low = rows["openai/gpt-5.6-luna", "low"]
    assert (low["appearances"], low["wins"], low["median_durable_ms"], low["cost_per_durable_microusd"]) == (
        2,
        0,
        None,
        None,
    )
    assert low["failures"] == {"controller": 1, "player": 1}
    assert report["standings"][0] is deepseek


def test_a_folder_that_is_not_a_series_is_one_clear_error(tmp_path, capsys):
    with pytest.raises(AoeError, match="not a series or benchmark folder"):
        standings_report(tmp_path)
    assert main(["standings", str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
