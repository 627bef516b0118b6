"""`CupRunner` on scripted territories: heats, the final, voids and forfeits, resume from every point, a changed
key, the published names, and the same `cup.json` for the same inputs."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, UTC

import pytest

from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.cup import CupRunner
from aoe_tui.engine.series import SeriesStopped
from aoe_tui.store.saved_match import load_match
from tests.cup.helpers import ScriptedHeats, write_cup

START = datetime(2026, 9, 13, 2, 19, 18, tzinfo=UTC)
SIX = ["kimi", "glm", "deepseek", "qwen", "minimax", "grok"]
READY = {"kimi": 2000, "deepseek": 3000, "glm": 5000}  # the rest never serve


class Killed(BaseException):
    """As `kill -9`: nothing after it runs."""


def make_cup(tmp_path, factory, lines=None, output="cup", **options):
    cup = CupRunner(
        tmp_path / "CUP.toml",
        tmp_path / output,
        factory,
        report=(lines if lines is not None else []).append,
        now=lambda: START,
        **options,
    )
    factory.cup = cup
    return cup


def cup_json(tmp_path, output="cup"):
    return json.loads((tmp_path / output / "cup.json").read_text())


def play(tmp_path, ready=READY, entrants=SIX, **heats):
    write_cup(tmp_path, entrants, cup_id="opencode-cup")
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", ready, **heats)
    return asyncio.run(make_cup(tmp_path, factory).run()), factory


def test_a_cup_of_six_two_heats_then_a_final_of_three(tmp_path):
    final, factory = play(tmp_path)
    assert final == cup_json(tmp_path) and final["state"] == "complete"
    first, last = final["rounds"]
    assert [len(h["entrants"]) for h in first["heats"]] == [3, 3] and last["final"]
    assert sorted(sum((h["entrants"] for h in first["heats"]), [])) == sorted(SIX)
    winners = [h["winner"] for h in first["heats"]]
    assert [row["entrant"] for row in first["advanced"]][:2] == winners
    assert (
        set(last["heats"][0]["entrants"]) == {row["entrant"] for row in first["advanced"]} and len(last["field"]) == 3
    )
    assert final["winner"] == "kimi" and final["winner_reason"].startswith("won the final (round 2): kimi wins")
    assert final["season"] == "2026-W37" and final["run"] == "2026-W37-20260913-021918" and final["seed"] == 7
    assert factory.plans == [(1, 1, 1), (1, 2, 1), (2, 1, 1)]
    heat = first["heats"][1]["attempts"][0]
    assert heat["name"] == "opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1"
    assert heat["slug"] == "season-opencode-cup-2026-W37-20260913-021918-r1-h2-a1"
    assert heat["output"] == "round-1/heat-2/attempt-1"
    match = load_match(tmp_path / "cup" / "round-1" / "heat-2" / "attempt-1")
    assert match.name == heat["name"] and match.match_info["slug"] == heat["slug"]
    assert match.cup is not None and (match.cup.round, match.cup.heat, match.cup.attempt) == (1, 2, 1)
    seats = {a.id: a.territory for a in match.manifest.agents}
    assert seats == first["heats"][1]["seats"]


def test_an_uneven_field_of_seven_three_heats_then_a_final(tmp_path):
    final, _ = play(tmp_path, entrants=[*SIX, "mistral"])
    first, last = final["rounds"]
    assert [len(h["entrants"]) for h in first["heats"]] == [3, 2, 2]
    assert len(first["advanced"]) == 3 and all(row["why"].startswith("won heat") for row in first["advanced"])
    assert last["final"] and final["winner"] == "kimi"


def test_the_same_inputs_give_the_same_cup_json(tmp_path):
    one, _ = play(tmp_path / "one")
    two, _ = play(tmp_path / "two")

    def strip(data):
        text = json.dumps(data).replace(str(tmp_path / "one"), "X").replace(str(tmp_path / "two"), "X")
        return json.loads(text)

    assert strip(one) == strip(two)


def test_a_void_heat_is_played_again_as_the_next_attempt(tmp_path):
    write_cup(tmp_path, SIX, cup_id="opencode-cup")
    probe = asyncio.run(
        make_cup(tmp_path, ScriptedHeats(tmp_path / "arena" / "arena.json", READY), output="probe").run()
    )
    loser = next(e for e in probe["rounds"][0]["heats"][0]["entrants"] if e not in READY)
    final, factory = play(tmp_path / "void", unavailable={(1, 1, 1): [loser]})
    heat = final["rounds"][0]["heats"][0]
    assert [a["outcome"] for a in heat["attempts"]] == ["void", "decided"] and heat["decided_by"] == 2
    assert heat["attempts"][0]["unavailable"] == [loser] and heat["forfeits"] == []
    assert heat["attempts"][0]["reason"].startswith(f"void: unavailable through no fault of their own: {loser} (")
    assert (1, 1, 2) in factory.plans
    assert (tmp_path / "void" / "cup" / "round-1" / "heat-1" / "attempt-2" / "events.jsonl").is_file()


def test_after_attempts_void_plays_the_seat_forfeits_and_the_heat_stands_on_the_others(tmp_path):
    write_cup(tmp_path, SIX, cup_id="opencode-cup")
    probe = asyncio.run(
        make_cup(tmp_path, ScriptedHeats(tmp_path / "arena" / "arena.json", READY), output="probe").run()
    )
    loser = next(e for e in probe["rounds"][0]["heats"][0]["entrants"] if e not in READY)
    final, _ = play(tmp_path / "forfeit", unavailable={(1, 1, 1): [loser], (1, 1, 2): [loser]})
    heat = final["rounds"][0]["heats"][0]
    assert [a["outcome"] for a in heat["attempts"]] == ["void", "decided"]
    assert heat["forfeits"] == [loser] and loser not in [row["entrant"] for row in heat["order"]]
    assert f"{loser} forfeits after 2 void plays (never a loss)" in heat["reason"]
    assert loser not in [row["entrant"] for row in final["rounds"][0]["advanced"]]


@pytest.mark.parametrize("point", [(1, 1, 1), (1, 2, 1), (2, 1, 1)])
def test_resume_from_every_point_killed_or_stopped(tmp_path, point):
    whole, _ = play(tmp_path / "whole")
    for how in ("killed", "stopped"):
        folder = tmp_path / how
        write_cup(folder, SIX, cup_id="opencode-cup")
        arena = folder / "arena" / "arena.json"
        if how == "stopped":
            factory = ScriptedHeats(arena, READY, stop_at={point})
            with pytest.raises(SeriesStopped):
                asyncio.run(make_cup(folder, factory).run())
        else:
            factory = ScriptedHeats(arena, READY)
            original = factory.__call__

            def kill(plan, original=original):
                if (plan.round, plan.heat, plan.attempt) == point:
                    raise Killed()
                return original(plan)

            with pytest.raises(Killed):
                asyncio.run(make_cup(folder, kill).run())  # type: ignore[arg-type]
        left = cup_json(folder)
        stopped_heat = left["rounds"][point[0] - 1]["heats"][point[1] - 1]
        assert [a["outcome"] for a in stopped_heat["attempts"]] == ["running" if how == "killed" else "interrupted"]
        lines: list[str] = []
        resumed = ScriptedHeats(arena, READY)
        final = asyncio.run(make_cup(folder, resumed, lines).run())
        assert resumed.plans[0] == (point[0], point[1], 2)  # the interrupted heat, as the next attempt
        heat = final["rounds"][point[0] - 1]["heats"][point[1] - 1]
        assert [a["outcome"] for a in heat["attempts"]] == ["interrupted", "decided"]
        assert heat["attempts"][1]["name"].endswith(f"round {point[0]} heat {point[1]} · attempt 2")
        assert final["winner"] == whole["winner"]
        assert [[h["winner"] for h in r["heats"]] for r in final["rounds"]] == [
            [h["winner"] for h in r["heats"]] for r in whole["rounds"]
        ]
        assert any("already decided (kept)" in line for line in lines)


def test_a_changed_key_is_refused_in_one_line_and_fresh_starts_a_new_run(tmp_path):
    play(tmp_path)
    data = json.loads((tmp_path / "arena" / "arena.json").read_text())
    data["rules"]["duration_seconds"] = 61
    (tmp_path / "arena" / "arena.json").write_text(json.dumps(data))
    factory = ScriptedHeats(tmp_path / "arena" / "arena.json", READY)
    with pytest.raises(AoeError, match=r"cup\.json: cannot resume, the arena changed since this cup began .*--fresh"):
        make_cup(tmp_path, factory).open()
    lines: list[str] = []
    final = asyncio.run(make_cup(tmp_path, factory, lines, fresh=True).run())
    assert final["state"] == "complete" and (tmp_path / "cup.previous-1" / "cup.json").is_file()


def test_a_field_smaller_than_the_arenas_minimum_is_refused_in_one_line(tmp_path):
    write_cup(tmp_path, ["solo"], cup_id="opencode-cup")
    with pytest.raises(AoeError, match="a field of 1 entrants is too small: the arena needs at least 2 in a heat"):
        make_cup(tmp_path, ScriptedHeats(tmp_path / "arena" / "arena.json", READY))
