"""`SeriesRunner` on scripted territories: seat rotation, checkpoints, resume, replays and forfeits."""

from __future__ import annotations

import json

import pytest

from aoe_tui.analysis.standings import standings_report
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.series import SeriesRunner, SeriesStopped
from aoe_tui.store.saved_match import load_match
from tests.series.helpers import ScriptedRounds, quick_arena

SEATING = {
    1: {"amnesiac": "builder-two", "oracle": "builder-one", "tmpfs-writer": "builder-three"},
    2: {"amnesiac": "builder-three", "oracle": "builder-two", "tmpfs-writer": "builder-one"},
    3: {"amnesiac": "builder-one", "oracle": "builder-three", "tmpfs-writer": "builder-two"},
}


def series_json(folder):
    return json.loads((folder / "series.json").read_text())


def make_series(arena, output, rounds_factory, lines, **options):
    series = SeriesRunner(arena, output, rounds_factory, report=lines.append, **options)
    rounds_factory.series = series
    return series


async def test_a_series_rotates_seats_and_checkpoints_after_every_round(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena)
    checkpoints = []
    series = make_series(arena, output, factory, lines)
    original = factory.__call__

    def watching(plan):
        checkpoints.append(series_json(output)["rounds_completed"])
        return original(plan)

    series.make_runner = watching
    final = await series.run()
    assert checkpoints == [0, 1, 2]
    assert final == series_json(output) and final["rounds_completed"] == final["rounds_requested"] == 3
    for entry in final["rounds"]:
        number = entry["round"]
        assert entry["seats"] == SEATING[number]
        arena_json = json.loads((output / f"round-00{number}" / "arena.json").read_text())
        assert {a["id"]: a["territory"] for a in arena_json["agents"]} == SEATING[number]
        winner = next(agent for agent, seat in SEATING[number].items() if seat == "builder-two")
        assert (entry["winner_territory"], entry["winner_agent"]) == ("builder-two", winner)
        assert entry["output"] == str(output / f"round-00{number}") and entry["forfeits"] == []
        assert load_match(output / f"round-00{number}").world.winner == "builder-two"
    assert final["standings"] == standings_report(output)["standings"]
    assert [row["wins"] for row in final["standings"]] == [1, 1, 1]
    assert any(line.startswith("progress: 1/3 rounds done") and "left" in line for line in lines)
    assert any(line.startswith("round 3/3 decided in 0:02: winner tmpfs-writer (builder-two)") for line in lines)


async def test_a_stopped_series_resumes_keeping_decided_rounds_and_the_interrupted_one(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, stop_in_round=2)
    with pytest.raises(SeriesStopped, match="SIGTERM"):
        await make_series(arena, output, factory, lines).run()
    stopped = series_json(output)
    assert stopped["rounds_completed"] == 1 and [r["round"] for r in stopped["rounds"]] == [1]
    interrupted = output / "round-002.interrupted-1"
    assert load_match(interrupted).world.match_state == "aborted" and not (output / "round-002").exists()
    # A kill -9 leaves the round folder where it was: the next run sets it aside too.
    interrupted.rename(output / "round-002")
    round_one = (output / "round-001" / "events.jsonl").read_bytes()
    resumed = ScriptedRounds(arena)
    final = await make_series(arena, output, resumed, lines).run()
    assert resumed.plans == [(2, 1), (3, 1)]
    assert (output / "round-002.interrupted-1").is_dir() and (
        output / "round-001" / "events.jsonl"
    ).read_bytes() == round_one
    assert final["rounds_completed"] == 3 and [r["seats"] for r in final["rounds"]] == list(SEATING.values())
    assert final["standings"] == standings_report(output)["standings"]
    assert any("kept as round-002.interrupted-1" in line for line in lines)


async def test_a_changed_contest_refuses_to_resume_and_fresh_starts_over(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    await make_series(arena, output, ScriptedRounds(arena), lines, rounds=1).run()
    before = series_json(output)
    changed = quick_arena(tmp_path / "arena", tick_ms=1000)
    with pytest.raises(AoeError, match=r"cannot resume, the contest changed .*--fresh"):
        await make_series(changed, output, ScriptedRounds(changed), lines, rounds=1).run()
    assert series_json(output) == before
    again = ScriptedRounds(changed)
    final = await make_series(changed, output, again, lines, rounds=1, fresh=True).run()
    assert again.plans == [(1, 1)] and final["compatibility_key"] != before["compatibility_key"]
    assert series_json(tmp_path / "series.previous-1") == before


async def test_an_unavailable_agent_gets_its_replay_then_forfeits_and_a_forfeit_is_not_a_loss(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    # Round 2: tmpfs-writer's provider is down twice (it forfeits); round 3: amnesiac's once (the replay is fine).
    factory = ScriptedRounds(
        arena, unavailable={(2, 1): ["tmpfs-writer"], (2, 2): ["tmpfs-writer"], (3, 1): ["amnesiac"]}
    )
    final = await make_series(arena, output, factory, lines).run()
    assert factory.plans == [(1, 1), (2, 1), (2, 2), (3, 1), (3, 2)]
    assert sorted(p.name for p in output.iterdir()) == [
        "round-001",
        "round-002",
        "round-002.unavailable-1",
        "round-003",
        "round-003.unavailable-1",
        "series.json",
    ]
    assert [(r["forfeits"], r["attempts"]) for r in final["rounds"]] == [([], 1), (["tmpfs-writer"], 2), ([], 2)]
    rows = {row["agent"]: row for row in standings_report(output)["standings"]}
    assert rows["tmpfs-writer"]["forfeits"] == 1 and rows["tmpfs-writer"]["appearances"] == 2
    assert rows["tmpfs-writer"]["wins"] == 1 and rows["amnesiac"]["forfeits"] == 0
    assert rows["amnesiac"]["appearances"] == 3
    assert final["standings"] == standings_report(output)["standings"]
    assert any(
        "unavailable through no fault of their own: tmpfs-writer (tmpfs-writer: provider)" in line for line in lines
    )
    assert any("forfeits: tmpfs-writer" in line for line in lines)


async def test_with_no_replays_the_seat_forfeits_at_once(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, unavailable={(1, 1): ["oracle"]})
    final = await make_series(arena, output, factory, lines, rounds=1, replays=0).run()
    assert factory.plans == [(1, 1)] and final["rounds"][0]["forfeits"] == ["oracle"]


async def test_a_round_that_cannot_be_played_is_retried_then_stops_the_series_resumably(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena)

    def broken(plan):
        runner = factory(plan)

        async def no_guests(*args):
            raise AoeError("builder-one: the guest never booted")

        runner.provider.boot = no_guests
        return runner

    with pytest.raises(AoeError, match="round 1 could not be played 2 times"):
        await SeriesRunner(arena, output, broken, report=lines.append).run()
    assert (output / "round-001.failed-1").is_dir() and series_json(output)["rounds_completed"] == 0
    assert "round 1: builder-one: the guest never booted" in lines


async def test_a_void_round_is_played_again_and_never_recorded(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, lost=frozenset({(1, 1)}))
    final = await make_series(arena, output, factory, lines, rounds=1).run()
    assert factory.plans == [(1, 1), (1, 2)]
    assert load_match(output / "round-001.failed-1").world.match_state == "void"
    assert [(r["forfeits"], r["attempts"]) for r in final["rounds"]] == [([], 2)]
    assert any("round 1: ended void; kept as round-001.failed-1" in line for line in lines)


async def test_a_void_last_attempt_stops_the_series_instead_of_counting(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, lost=frozenset({(1, 1)}))
    with pytest.raises(AoeError, match="round 1 ended void 1 times"):
        await make_series(arena, output, factory, lines, rounds=1, replays=0).run()
    assert standings_report(output)["standings"] == []  # the void round's folder is there, and counts nowhere
