"""The cup's rules, pure: heats, the draw, a heat's order and winner, voids and forfeits, who goes on, names."""

from __future__ import annotations

from datetime import datetime, UTC

import pytest

from aoe_tui.domain.cup_rules import (
    SeatResult,
    advance,
    attempt_path,
    cup_context,
    decide_heat,
    default_seed,
    draw,
    heat_name,
    heat_order,
    heat_sizes,
    heat_slug,
    season_label,
)
from aoe_tui.domain.errors import AoeError

PUBLISHED_NAME = "opencode-cup · 2026-W37-20260913-021918 · round 1 heat 2 · attempt 1"
PUBLISHED_SLUG = "season-opencode-cup-2026-W37-20260913-021918-r1-h2-a1"


def seat(entrant, durable=None, points=0, at=None, unavailable=False, source=None, territory=None):
    return SeatResult(entrant, territory or f"t-{entrant}", durable, points, at, unavailable, source)


def test_names_slugs_and_folders_are_the_published_format():
    run = "2026-W37-20260913-021918"
    assert heat_name("opencode-cup", run, 1, 2, 1) == PUBLISHED_NAME
    assert heat_slug("opencode-cup", run, 1, 2, 1) == PUBLISHED_SLUG
    assert attempt_path(1, 2, 1) == "round-1/heat-2/attempt-1"
    context = cup_context(PUBLISHED_NAME)
    assert context is not None and context.to_json() == {
        "cup": "opencode-cup",
        "season": "2026-W37",
        "run": run,
        "round": 1,
        "heat": 2,
        "attempt": 1,
    }
    assert context.line() == "opencode-cup · season 2026-W37 · round 1 heat 2 · attempt 1"
    assert cup_context("first-build-20261203-101010") is None


def test_the_season_is_the_iso_week_and_the_default_seed_its_own():
    assert season_label(datetime(2026, 12, 3, tzinfo=UTC)) == "2026-W49"
    assert season_label(datetime(2027, 1, 1, tzinfo=UTC)) == "2026-W53"
    assert default_seed("c", "2026-W49") == default_seed("c", "2026-W49") != default_seed("c", "2026-W50")


@pytest.mark.parametrize(
    ("field", "size", "minimum", "sizes"),
    [
        (6, 3, 2, [3, 3]),
        (7, 3, 2, [3, 2, 2]),
        (8, 3, 2, [3, 3, 2]),
        (4, 3, 2, [2, 2]),
        (3, 3, 3, [3]),
        (10, 4, 2, [4, 3, 3]),
    ],
)
def test_uneven_fields_make_heats_as_even_as_possible(field, size, minimum, sizes):
    assert heat_sizes(field, size, minimum) == sizes


def test_a_field_too_small_or_unsplittable_is_refused_in_one_line():
    with pytest.raises(AoeError, match="a field of 1 entrant is too small: the arena needs at least 2"):
        heat_sizes(1, 3, 2)
    with pytest.raises(AoeError, match="7 entrants cannot be split into heats of 3 to 3"):
        heat_sizes(7, 3, 3)


def test_the_draw_is_the_seeds_and_only_the_seeds():
    field = [f"e{i}" for i in range(7)]
    heats = draw(field, 1, 7, 3, 2)
    assert [len(h) for h in heats] == [3, 2, 2] and sorted(sum(heats, [])) == field
    assert draw(list(reversed(field)), 1, 7, 3, 2) == heats  # the order entrants are listed in does not matter
    assert draw(field, 2, 7, 3, 2) != heats or draw(field, 1, 8, 3, 2) != heats


def test_a_heats_order_durable_first_by_time_then_points_then_time_to_points_ties_equal():
    order = heat_order(
        [
            seat("slow-durable", durable=9000, points=100, at=9000),
            seat("points-late", points=40, at=8000),
            seat("fast-durable", durable=5000, points=100, at=5000),
            seat("points-early", points=40, at=3000),
            seat("nothing-a"),
            seat("nothing-b"),
        ]
    )
    assert [(r["entrant"], r["place"]) for r in order] == [
        ("fast-durable", 1),
        ("slow-durable", 2),
        ("points-early", 3),
        ("points-late", 4),
        ("nothing-a", 5),
        ("nothing-b", 5),
    ]


def test_the_winner_of_a_heat_with_reasons():
    durable = decide_heat([seat("a", points=30, at=100), seat("b", durable=7000, points=100, at=7000)], 0, 2)
    assert durable.stands and durable.winner == "b" and durable.reason == "b wins: first durable deployment at 7000 ms"
    points = decide_heat([seat("a", points=30, at=900), seat("b", points=30, at=400), seat("c", points=10, at=1)], 0, 2)
    assert points.winner == "b"
    assert points.reason == "b wins: no durable deployment; highest points (30), reached at 400 ms"


def test_a_tie_at_the_top_is_broken_by_the_draw():
    tie = decide_heat([seat("x", points=20, at=500), seat("y", points=20, at=500), seat("z")], 0, 2)
    assert tie.winner == "x" and [r["place"] for r in tie.order] == [1, 1, 3]
    assert tie.reason.endswith("tied with y, broken by the draw (earlier seat)")
    nobody = decide_heat([seat("x"), seat("y")], 0, 2)
    assert nobody.winner == "x" and "no durable deployment and no points; tied with y" in nobody.reason


def test_a_void_heat_is_played_again_then_the_unavailable_seat_forfeits():
    seats = [seat("a", points=10, at=50), seat("b", unavailable=True, source="provider"), seat("c")]
    void = decide_heat(seats, 0, 2)
    assert not void.stands and void.unavailable == ("b",)
    assert void.reason == "void: unavailable through no fault of their own: b (provider); played again (attempt 1 of 2)"
    stands = decide_heat(seats, 1, 2)
    assert stands.stands and stands.winner == "a" and stands.forfeits == ("b",)
    assert [r["entrant"] for r in stands.order] == ["a", "c"]  # a forfeit is never a loss: not in the order
    assert (
        stands.reason
        == "a wins: no durable deployment; highest points (10), reached at 50 ms; b forfeits after 2 void plays (never a loss)"
    )
    once = decide_heat(seats, 0, 1)
    assert once.stands and once.forfeits == ("b",)


def test_the_next_round_takes_the_winners_then_the_best_runners_up_to_fill_whole_heats():
    heats = [
        {
            "heat": 1,
            "winner": "a",
            "order": heat_order([seat("a", durable=100, points=100, at=100), seat("b", points=40, at=90), seat("c")]),
        },
        {
            "heat": 2,
            "winner": "d",
            "order": heat_order(
                [seat("d", durable=200, points=100, at=200), seat("e", points=40, at=50), seat("f", points=10, at=1)]
            ),
        },
    ]
    going = advance(heats, 3)
    assert [g["entrant"] for g in going] == ["a", "d", "e"]
    assert going[0]["why"] == "won heat 1" and going[2]["why"].startswith(
        "best runner-up #1 (heat 2, place 2: 40 points)"
    )
    four = heats + [
        {"heat": 3, "winner": "g", "order": heat_order([seat("g", points=10, at=5), seat("h")])},
        {"heat": 4, "winner": "i", "order": heat_order([seat("i", points=10, at=5), seat("j", points=40, at=90)])},
    ]
    assert [g["entrant"] for g in advance(four, 3)] == [
        "a",
        "d",
        "g",
        "i",
        "e",
        "b",
    ]  # e, b tie on 40: earlier time first
    tie = [
        {"heat": 1, "winner": "a", "order": heat_order([seat("a", points=5, at=1), seat("b")])},
        {"heat": 2, "winner": "c", "order": heat_order([seat("c", points=5, at=1), seat("d")])},
    ]
    assert [g["entrant"] for g in advance(tie, 3)] == ["a", "c", "b"]  # equal runners-up: the earlier heat


def test_a_seat_that_scored_raced_whatever_failed_it_afterwards():
    from aoe_tui.domain.cup_rules import seat_results
    from aoe_tui.domain.world import World

    world = World.model_validate(
        {
            "match_state": "finished",
            "winner": None,
            "territories": {
                "t1": {
                    "agent": "scored",
                    "milestone_points": 30,
                    "milestones": {"up": {"passed": True, "points": 30, "passed_at_ms": 900}},
                },
                "t2": {"agent": "cut", "milestone_points": 0},
                "t3": {"agent": "down", "milestone_points": 0, "competitor_state": "unavailable"},
                "t4": {"agent": "lost", "milestone_points": 0},
            },
            "agents": {
                "scored": {"territory": "t1", "failure_source": "harness"},
                "cut": {"territory": "t2", "failure_source": "arena"},
                "down": {"territory": "t3"},
                "lost": {"territory": "t4", "failure_source": "player"},
            },
        }
    )
    seats = {s.entrant: s for s in seat_results(world)}
    assert not seats["scored"].unavailable and seats["scored"].points_at_ms == 900
    assert seats["cut"].unavailable and seats["cut"].source == "arena"
    assert seats["down"].unavailable and not seats["lost"].unavailable
