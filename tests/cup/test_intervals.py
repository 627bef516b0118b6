"""Series and benchmark standings: 95% intervals of win and durable rate, and whether the leader stands apart."""

from __future__ import annotations

from aoe_tui.analysis.intervals import interval_lines, leader_note, standings_intervals
from aoe_tui.analysis.standings import standings_report
from tests.series.helpers import SERIES, STORED


def row(agent, appearances, wins, durable):
    return {"agent": agent, "appearances": appearances, "wins": wins, "durable_deployments": durable}


def test_the_fixture_series_leader_is_not_distinguishable_from_the_next():
    report = standings_report(SERIES)
    assert report["standings"] == STORED["standings"]  # the published rows, unchanged
    assert report["intervals"][0] == {
        "label": "deepseek-builder",
        "win_rate_95": [0.2077, 0.9385],
        "durable_rate_95": [0.2077, 0.9385],
    }
    assert report["leader"]["distinguishable"] is False
    assert report["leader"]["note"] == (
        "deepseek-builder is not distinguishable from glm-builder (their 95% intervals of win and durable rate overlap)"
    )


def test_a_clear_leader_is_called_distinguishable():
    rows = [row("a", 20, 20, 20), row("b", 20, 0, 1)]
    assert leader_note(rows)["distinguishable"] is True
    assert leader_note(rows)["note"] == "a leads b beyond the 95% intervals (win rate)"
    assert standings_intervals([row("c", 0, 0, 0)])[0]["win_rate_95"] is None
    assert interval_lines(rows)[1] == "  a: win rate 84%-100%, durable rate 84%-100%"
    assert leader_note(rows[:1]) is None
