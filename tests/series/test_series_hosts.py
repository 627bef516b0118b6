"""A series over a host pool (`--hosts`) on scripted territories: rounds at once, out of order, host lost.

Two hosts that each hold one match: rounds 1 and 2 run at the same time (round 1 held on its clock while
round 2 finishes first), round 3 waits for a free host. `series.json` stays valid throughout (rounds listed by
number, `rounds_completed` counting them) and a stopped run resumes exactly the undecided rounds. A host lost
mid-round is an infrastructure failure: the attempt is set aside with that event, the round is played again
on the other host, and no replay is used up.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from aoe_tui.app.view.series_progress import SeriesLog, series_progress
from aoe_tui.domain.hosts import Inventory
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.testing.scripted_hosts import ScriptedHostPool
from aoe_tui.engine.placement import match_need
from aoe_tui.engine.series import SeriesRunner, SeriesStopped
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.series.helpers import ScriptedRounds, quick_arena

HELD_AT_S = 1.0


def pool_for(arena, names=("a", "b"), lines=None, failing=None) -> HostPool:
    """Hosts that each hold exactly one match of `arena` (preflight scripted: `failing` host -> reason)."""
    need = match_need(load_manifest(arena))
    capacity = {"vcpus": need.vcpus, "memory_mib": need.memory_mib}
    hosts = [{"name": name, "uri": "qemu:///system", "capacity": capacity} for name in names]
    report = lines.append if lines is not None else lambda _line: None
    return ScriptedHostPool(Inventory.model_validate({"hosts": hosts}), report, failing)


def series_json(folder):
    return json.loads((folder / "series.json").read_text())


async def wait_for(condition, seconds=20.0):
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def test_rounds_run_at_once_on_two_hosts_and_may_finish_out_of_order(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, held={1: HELD_AT_S})
    series = SeriesRunner(arena, output, factory, report=lines.append, pool=pool_for(arena))
    factory.series = series
    task = asyncio.create_task(series.run())
    await wait_for(lambda: 1 in factory.sources and factory.sources[1].held and series.checkpoint["rounds"])
    early = series_json(output)
    assert [r["round"] for r in early["rounds"]] == [2] and early["rounds_completed"] == 1
    assert early["rounds"][0]["host"] == "b" and series.undecided() == [1, 3]
    await wait_for(lambda: (3, 1) in factory.plans)  # round 3 takes round 2's host while round 1 still runs
    assert 1 in series.undecided()
    await wait_for(lambda: 3 in series.in_flight())
    progress = series_progress(series, playing=3, ended=None, log=SeriesLog())
    assert [(r.number, r.state) for r in progress.rounds] == [(1, "playing on host a"), (3, "playing on host b")]
    factory.sources[1].limit = float("inf")
    final = await task
    assert final == series_json(output) and final["rounds_completed"] == 3
    assert [(r["round"], r["host"]) for r in final["rounds"]] == [(1, "a"), (2, "b"), (3, "b")]
    assert {line.split(" on host ")[1].split(":")[0] for line in lines if " started on host " in line} == {"a", "b"}
    assert [row["appearances"] for row in final["standings"]] == [3, 3, 3]
    for number in (1, 2, 3):
        assert load_match(output / f"round-00{number}").world.match_state == "finished"


async def test_a_stop_while_rounds_are_in_flight_resumes_only_the_undecided_ones(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    factory = ScriptedRounds(arena, held={1: HELD_AT_S, 3: HELD_AT_S})
    series = SeriesRunner(arena, output, factory, report=lines.append, pool=pool_for(arena))
    task = asyncio.create_task(series.run())
    await wait_for(lambda: all(n in factory.sources and factory.sources[n].held for n in (1, 3)))
    assert series.request_stop("the aoe process was terminated (SIGTERM)")
    with pytest.raises(SeriesStopped, match="SIGTERM"):
        await task
    stopped = series_json(output)
    assert [r["round"] for r in stopped["rounds"]] == [2] and stopped["rounds_completed"] == 1
    for number in (1, 3):
        kept = output / f"round-00{number}.interrupted-1"
        assert load_match(kept).world.match_state == "aborted" and not (output / f"round-00{number}").exists()
    resumed = ScriptedRounds(arena)
    final = await SeriesRunner(arena, output, resumed, report=lines.append, pool=pool_for(arena)).run()
    assert sorted(resumed.plans) == [(1, 1), (3, 1)]
    assert [r["round"] for r in final["rounds"]] == [1, 2, 3] and final["rounds_completed"] == 3


class LosingHost(ScriptedRounds):
    """Round `number`'s first attempt loses its host once its agents have started (as a dropped link does)."""

    def __init__(self, arena, pool: HostPool, number: int) -> None:
        super().__init__(arena)
        self.pool, self.number, self.hosts = pool, number, []

    def __call__(self, plan):
        runner = super().__call__(plan)
        self.hosts.append((plan.number, plan.attempt, plan.host))
        if (plan.number, plan.attempt) == (self.number, 1) and len([h for h in self.hosts if h[0] == plan.number]) == 1:

            def drop(update):
                if getattr(update, "kind", None) == "agent_started":
                    reason = f"host {plan.host}: its SSH connection was lost"
                    self.pool.mark_lost(plan.host, reason)
                    runner.infrastructure_lost("host", reason)

            runner.subscribe(drop)
        return runner


async def test_a_round_whose_host_drops_is_an_infrastructure_failure_played_again_on_another_host(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    pool = pool_for(arena)
    factory = LosingHost(arena, pool, number=1)
    final = await SeriesRunner(arena, output, factory, rounds=2, replays=0, report=lines.append, pool=pool).run()
    assert factory.hosts[0] == (1, 1, "a") and (1, 1, "b") in factory.hosts  # again from attempt 1: no replay used
    assert final["rounds_completed"] == 2 and all(r["host"] == "b" for r in final["rounds"])
    first = final["rounds"][0]
    assert first["attempts"] == 1 and first["forfeits"] == []
    assert first["host_failures"] == [
        {"host": "a", "detail": "host a: its SSH connection was lost", "kept_as": "round-001.host-lost-1"}
    ]
    lost = load_match(output / "round-001.host-lost-1")
    assert lost.world.match_state == "aborted"
    failures = [e for e in lost.events if e.kind == "infrastructure_failure"]
    assert [(f.component, f.source, f.detail) for f in failures] == [
        ("host", "arena", "host a: its SSH connection was lost")
    ]
    assert not any(a.failure_source == "player" for a in lost.world.agents.values())
    assert any(
        line.startswith("round 1: infrastructure failure, host a lost (host a: its SSH connection was lost)")
        for line in lines
    )


async def test_a_series_with_every_host_lost_stops_with_one_line(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    pool = pool_for(arena, names=("a",))
    factory = LosingHost(arena, pool, number=1)
    with pytest.raises(Exception, match=r"round 1 needs 3 vCPUs and \d+ MiB on one host; no host is left"):
        await SeriesRunner(arena, output, factory, rounds=1, report=lines.append, pool=pool).run()
    assert series_json(output)["rounds_completed"] == 0


async def test_a_host_failing_preflight_is_skipped_with_a_line_and_the_others_play(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    pool = pool_for(
        arena, names=("a", "b"), lines=lines, failing={"a": "host a: SSH to root@127.0.0.1:1 failed: refused"}
    )
    final = await SeriesRunner(arena, output, ScriptedRounds(arena), rounds=2, report=lines.append, pool=pool).run()
    assert "host a skipped: host a: SSH to root@127.0.0.1:1 failed: refused" in lines
    assert [r["host"] for r in final["rounds"]] == ["b", "b"]


async def test_a_series_whose_every_host_fails_preflight_is_one_line(tmp_path):
    arena, output, lines = quick_arena(tmp_path / "arena"), tmp_path / "series", []
    pool = pool_for(arena, names=("a",), lines=lines, failing={"a": "host a: libvirt unreachable"})
    with pytest.raises(Exception, match="no host of the inventory passed preflight"):
        await SeriesRunner(arena, output, ScriptedRounds(arena), report=lines.append, pool=pool).run()
