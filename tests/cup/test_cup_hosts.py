"""A cup over a host pool (`--hosts`) on scripted territories: the heats of a round run at once."""

from __future__ import annotations

import asyncio

from aoe_tui.engine.cup import CupRunner, HeatEnded, HeatStarted
from tests.cup.helpers import ScriptedHeats, write_cup
from tests.series.test_series_hosts import pool_for


def test_the_heats_of_a_round_run_at_once_over_the_pool(tmp_path):
    write_cup(tmp_path, ["kimi", "glm", "deepseek", "qwen", "minimax", "grok"], cup_id="pool-cup")
    arena = tmp_path / "arena" / "arena.json"
    ready = {"kimi": 2000, "glm": 6000, "deepseek": 3000, "qwen": 7000, "minimax": 8000, "grok": 9000}
    factory = ScriptedHeats(arena, ready)  # every heat ends at a durable deployment, not at the clock
    cup = CupRunner(tmp_path / "CUP.toml", tmp_path / "cup", factory, report=lambda _: None, pool=pool_for(arena))
    factory.cup = cup
    seen: list[tuple[str, int, int]] = []
    cup.subscribe(lambda u: seen.append(("start" if isinstance(u, HeatStarted) else "end", u.plan.round, u.plan.heat)))
    final = asyncio.run(cup.run())
    assert seen[:2] == [("start", 1, 1), ("start", 1, 2)]  # both heats of round 1 before either ended
    assert seen[-2:] == [("start", 2, 1), ("end", 2, 1)] and HeatEnded  # the final after them
    hosts = [h["attempts"][0]["host"] for h in final["rounds"][0]["heats"]]
    assert sorted(hosts) == ["a", "b"] and final["winner"] == "kimi"
