"""The ladder: openskill's Plackett-Luce against hand-computed updates, the Wilson interval, what is left out,
`--by config`, and the same output for the same matches."""

from __future__ import annotations

import asyncio
import json
import math
import shutil

import pytest

from aoe_tui.analysis.ladder import RatedMatch, RatedSeat, ladder_report, ladder_rows, rate, wilson
from aoe_tui.cli.main import main
from aoe_tui.engine.cup import CupRunner
from tests.cup.helpers import ScriptedHeats, write_cup
from tests.fixture_paths import PROJECT

MU, SIGMA, BETA, TAU = 25.0, 25 / 3, 25 / 6, 25 / 300
CONFIG = ("oracle", "scripted/x", None)


def match(source, *places, durable=()):
    seats = tuple(
        RatedSeat(
            entrant,
            CONFIG if entrant != "other" else ("amnesiac", "scripted/y", None),
            place,
            place == 1,
            entrant in durable,
        )
        for entrant, place in places
    )
    return RatedMatch(source, ("", (source,)), seats)


def hand_two_player(tie: bool = False):
    """Plackett-Luce for two fresh players (openskill's default gamma = sigma / c), by hand."""
    s2 = SIGMA**2 + TAU**2  # sigma inflated by tau before the update
    c = math.sqrt(2 * (s2 + BETA**2))
    gamma = math.sqrt(s2) / c
    shift = 0.0 if tie else s2 / c * 0.5
    sigma = math.sqrt(s2) * math.sqrt(1 - gamma * s2 / c**2 * 0.25)
    return (MU + shift, sigma), (MU - shift, sigma)


def test_one_win_is_the_hand_computed_plackett_luce_update():
    (mu_w, sigma_w), (mu_l, sigma_l) = hand_two_player()
    winner, loser = rate([match("m1", ("a", 1), ("b", 2))])
    assert (winner.entrant, loser.entrant) == ("a", "b")
    assert winner.rating.mu == pytest.approx(mu_w, abs=1e-9) and winner.rating.sigma == pytest.approx(sigma_w, abs=1e-9)
    assert loser.rating.mu == pytest.approx(mu_l, abs=1e-9) and loser.rating.sigma == pytest.approx(sigma_l, abs=1e-9)
    row = ladder_rows([winner, loser])[0]
    assert row["rating"] == pytest.approx(mu_w - 3 * sigma_w, abs=1e-6)
    assert (row["matches"], row["wins"]) == (1, 1) and row["replays"] == ["m1"]
    assert row["beats"]["b"] > 0.5 and ladder_rows([winner, loser])[1]["beats"]["a"] == pytest.approx(
        1 - row["beats"]["b"], abs=1e-6
    )


def test_a_tie_moves_no_mu_and_shrinks_both_sigmas_alike():
    (mu, sigma), _ = hand_two_player(tie=True)
    a, b = rate([match("m1", ("a", 1), ("b", 1))])
    assert a.rating.mu == pytest.approx(MU) == b.rating.mu and a.rating.sigma == pytest.approx(sigma, abs=1e-9)
    assert (a.entrant, b.entrant) == ("a", "b")  # equal ratings: by name


def test_the_95_percent_wilson_interval():
    low, high = wilson(2, 4)
    assert (round(low, 4), round(high, 4)) == (0.15, 0.85)
    assert wilson(0, 0) is None and wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    z = 1.959963984540054
    assert wilson(1, 1)[0] == pytest.approx(1 / (1 + z * z))


def test_start_order_matters_and_is_kept():
    one = rate([match("m1", ("a", 1), ("b", 2)), match("m2", ("b", 1), ("a", 2))])
    two = rate([match("m2", ("b", 1), ("a", 2)), match("m1", ("a", 1), ("b", 2))])
    assert {e.entrant: e.rating.mu for e in one} != {e.entrant: e.rating.mu for e in two}


def test_by_config_merges_entrants_that_share_one():
    entries = rate([match("m1", ("a", 1), ("other", 2)), match("m2", ("b", 1), ("other", 2))], by="config")
    assert [(e.entrant, e.matches, e.wins) for e in entries] == [("a, b", 2, 2), ("other", 2, 0)]


def _cup(tmp_path, unavailable=None):
    write_cup(tmp_path, ["kimi", "glm", "deepseek", "qwen"], cup_id="ladder-cup")
    ready = {"kimi": 2000, "deepseek": 3000, "glm": 4000, "qwen": 5000}  # every heat ends at a durable deployment
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", ready, unavailable=unavailable)
    cup = CupRunner(tmp_path / "CUP.toml", tmp_path / "cup", factory, report=lambda _: None)
    factory.cup = cup
    return asyncio.run(cup.run())


def test_a_cup_is_rated_from_its_deciding_attempts_only_forfeits_left_out(tmp_path):
    first = _cup(tmp_path / "plain")
    heat = first["rounds"][0]["heats"][0]
    loser = next(e for e in heat["entrants"] if e not in ("kimi", "deepseek"))
    _cup(tmp_path / "void", unavailable={(1, 1, 1): [loser], (1, 1, 2): [loser]})
    report = ladder_report([tmp_path / "void" / "cup"])
    # the void attempt is not rated, and the deciding one, left with one seat by the forfeit, ranks nobody
    assert report["matches"] == 2
    rows = {row["entrant"]: row for row in report["ladder"]}
    assert loser not in rows  # a forfeit is never a loss
    plain = ladder_report([tmp_path / "plain" / "cup"])
    assert plain["matches"] == 3 and plain["ladder"][0]["entrant"] == "kimi"
    assert sum(row["matches"] for row in plain["ladder"]) == 2 + 2 + 3


def test_the_same_matches_give_the_same_json_and_the_command_prints_it(tmp_path, capsys):
    _cup(tmp_path / "a")
    shutil.copytree(PROJECT / "aoe_tui" / "samples", tmp_path / "samples")
    command = ["ladder", str(tmp_path / "a" / "cup"), str(tmp_path / "samples"), "--json"]
    assert main(command) == 0
    one = capsys.readouterr().out
    assert main(command) == 0
    assert capsys.readouterr().out == one
    assert list(json.loads(one)) == ["ladder"]
    ladder = json.loads(one)["ladder"]
    assert {"entrant", "config", "mu", "sigma", "rating", "matches", "wins", "durable_rate_95", "replays"} <= set(
        ladder[0]
    )
    assert ladder[0]["config"].keys() == {"adapter", "model", "reasoning_effort"}
    assert all(row["rating"] == pytest.approx(row["mu"] - 3 * row["sigma"], abs=1e-5) for row in ladder)
    assert [row["rating"] for row in ladder] == sorted((row["rating"] for row in ladder), reverse=True)
    assert main(command[:-1]) == 0  # not a terminal: the table
    assert "rated in start order (openskill Plackett-Luce)" in capsys.readouterr().out


def test_an_exported_series_rates_as_its_folder(tmp_path, monkeypatch):
    from tests.series.helpers import SERIES

    monkeypatch.chdir(tmp_path)
    assert main(["export", str(SERIES)]) == 0
    bundle = tmp_path / f"{SERIES.name}.series.json"
    from_bundle, from_folder = ladder_report([bundle]), ladder_report([SERIES])
    assert from_bundle["matches"] == from_folder["matches"] == 3
    strip = [{k: v for k, v in row.items() if k != "replays"} for row in from_folder["ladder"]]
    assert [{k: v for k, v in row.items() if k != "replays"} for row in from_bundle["ladder"]] == strip
    assert from_bundle["ladder"][0]["replays"][0] == f"{bundle}/round-001"
