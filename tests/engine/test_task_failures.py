"""A referee task that raises is recorded, never a silently dead task: libvirt, SSH and disk errors injected
into the scripted territories' calls end up as `infrastructure_failure` events naming territory and component."""

from __future__ import annotations

import asyncio
import errno
import gc
import logging

import asyncssh
import libvirt
import pytest

from aoe_tui.engine import evidence_copies
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.conquest import ConquestPreflightFailed, ConquestReferee
from aoe_tui.engine.health_probe import ProbeResult
from aoe_tui.engine.monitor import RunningMonitor
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.store.event_log import LogWriteFailed, read_event_log
from aoe_tui.store.manifest_file import load_manifest, read_manifest_data, resolve_verifier
from aoe_tui.testing.clock import ManualSource
from tests.engine.conquest_fakes import quick_manifest
from tests.engine.helpers import RACE, TERRITORIES, ScriptedReferee
from tests.fixture_paths import PROJECT

ROLLOUT = PROJECT / "arenas" / "zero-downtime-rollout" / "arena.toml"
CONQUEST = PROJECT / "arenas" / "first-contact" / "arena.toml"

ERRORS = [
    libvirt.libvirtError("internal error: client socket is closed"),
    OSError(errno.ENOSPC, "No space left on device"),
    asyncssh.ConnectionLost("Connection lost"),
]


def raising(error):
    async def fail(*args, **kwargs):
        raise error

    return fail


def failures(events, territory):
    return [e for e in events if e.kind == "infrastructure_failure" and e.territory == territory]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_an_error_raised_in_an_evaluation_task_is_recorded_with_its_territory(tmp_path, error, caplog):
    race = ScriptedReferee(tmp_path, {})
    lost = TERRITORIES[0]
    race.hosts[lost].alive = raising(error)  # asked after the failed check, outside the check's own handling
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        await race.tick()
        gc.collect()
    events = read_event_log(tmp_path / "events.jsonl")  # the log loads
    [failure] = failures(events, lost)
    assert failure.component == "referee evaluation" and type(error).__name__ in (failure.detail or "")
    assert not failures(events, TERRITORIES[1])
    assert "never retrieved" not in caplog.text
    await race.tick()  # the referee goes on: the next tick evaluates again
    assert not race.referee.over


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_an_error_under_a_check_fails_the_milestone_as_an_arena_fault(tmp_path, error, caplog):
    race = ScriptedReferee(tmp_path, {})
    lost = TERRITORIES[1]

    def broken_access():
        raise error

    race.hosts[lost].access_env = broken_access  # the check's own preparation reaches the guest and fails
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        await race.tick()
        gc.collect()
    events = read_event_log(tmp_path / "events.jsonl")
    [failure] = failures(events, lost)
    assert failure.component == f"territory {lost}" and type(error).__name__ in (failure.detail or "")
    failed = [e for e in events if e.kind == "milestone_failed" and e.territory == lost]
    assert failed[-1].category == "arena_fault"
    assert "never retrieved" not in caplog.text


async def test_a_failing_budget_stop_is_recorded(tmp_path, caplog):
    race = ScriptedReferee(tmp_path, {})
    handle = race.agents["oracle"]
    handle.request_stop = raising(OSError(errno.EIO, "Input/output error"))
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        race.referee.budget_spent("oracle", "budget spent: 3 of 3 model rounds used")
        await race.referee.settle()
        gc.collect()
    events = read_event_log(tmp_path / "events.jsonl")
    [failure] = failures(events, handle.territory_id)
    assert failure.component == "agent budget stop" and "Input/output error" in (failure.detail or "")
    assert "never retrieved" not in caplog.text


# -- every other kind of engine task: each failure recorded naming territory and component, the run ends -----------


def raise_now(error):
    def fail(*args, **kwargs):
        raise error

    return fail


async def settled(caplog, step):
    """Run `step` with the asyncio logger captured, then let asyncio collect every dead task."""
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        await step()
        await asyncio.sleep(0)
        gc.collect()
    assert "never retrieved" not in caplog.text


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_failing_evidence_copy_is_recorded_and_the_race_ends_with_its_winner(
    tmp_path, error, caplog, monkeypatch
):
    monkeypatch.setattr(evidence_copies, "_write_all", raise_now(error))
    race = ScriptedReferee(tmp_path, RACE)
    await settled(caplog, race.run_until_over)
    events = read_event_log(tmp_path / "events.jsonl")
    copies = [e for e in events if e.kind == "infrastructure_failure" and e.component == "evidence copies"]
    assert copies and type(error).__name__ in (copies[0].detail or "")
    assert events[-1].kind == "match_finished" and events[-1].winner is not None


def rollout(tmp_path):
    data = read_manifest_data(ROLLOUT)
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(resolve_verifier(ROLLOUT, milestone["verifier"]))
    race = ScriptedReferee(tmp_path, {}, data)
    [spec] = race.manifest.monitors
    return race, spec


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_failing_monitor_is_recorded_with_its_territory_and_the_match_still_ends(
    tmp_path, error, caplog, monkeypatch
):
    monkeypatch.setattr(RunningMonitor, "_sample_until_cap", raising(error))
    race, spec = rollout(tmp_path)
    territory = race.manifest.territories[0].id

    async def start_and_end():
        race.referee._start_monitors(territory, spec.start_after)
        await asyncio.sleep(0.05)
        await race.referee.finish(None, "test over")

    await settled(caplog, start_and_end)
    events = read_event_log(tmp_path / "events.jsonl")
    [failure] = failures(events, territory)
    assert failure.component == f"monitor {spec.id}" and type(error).__name__ in (failure.detail or "")
    assert race.referee._monitors[(territory, spec.id)].summary().ended == "failed"
    assert race.referee._lag._task is None  # the failed monitor let go of the lag meter
    assert events[-1].kind == "match_finished"


async def test_a_monitor_whose_cap_cannot_be_recorded_leaves_no_dead_task(tmp_path, caplog, monkeypatch):
    async def capped_at_once(self):
        await self.lag.stop()

    monkeypatch.setattr(RunningMonitor, "_sample_until_cap", capped_at_once)
    race, spec = rollout(tmp_path)
    territory = race.manifest.territories[0].id
    race.referee._monitor_capped = raise_now(LogWriteFailed("events.jsonl: No space left on device"))

    async def start():
        race.referee._start_monitors(territory, spec.start_after)
        await asyncio.sleep(0.05)

    await settled(caplog, start)
    assert not failures(read_event_log(tmp_path / "events.jsonl"), territory)  # the log refused: the runner says so


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_failing_health_probe_is_recorded_and_observes_nothing(tmp_path, error, caplog):
    manifest = quick_manifest(load_manifest(CONQUEST))
    lost = "archivist"

    async def probe(tid, host):
        if tid == lost:
            raise error
        return ProbeResult(True, 200, 1, "ok")

    clock = MatchClock(ManualSource())
    recorder = MatchRecorder(clock, tmp_path / "events.jsonl")
    referee = ConquestReferee(manifest, {t.id: object() for t in manifest.territories}, recorder, tmp_path, probe=probe)
    referee.open_match(referee.ids)

    async def two_ticks_and_the_end():
        for _ in range(2):
            clock.source.advance(manifest.rules.tick_ms / 1000)
            await referee.tick()
        await referee.finish(None, "test over")

    await settled(caplog, two_ticks_and_the_end)
    events = read_event_log(tmp_path / "events.jsonl")
    recorded = failures(events, lost)
    assert len(recorded) == 2 and recorded[0].component == "health probe"
    assert type(error).__name__ in (recorded[0].detail or "")
    assert not [e for e in events if e.kind == "health_observed" and e.territory == lost]  # nobody's fault
    assert referee.world.territories[lost].state == "healthy"
    assert events[-1].kind == "match_finished"


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_preflight_probe_that_raises_is_a_failing_answer_naming_the_error(tmp_path, error):
    manifest = quick_manifest(load_manifest(CONQUEST))
    referee = ConquestReferee(
        manifest,
        {t.id: object() for t in manifest.territories},
        MatchRecorder(MatchClock(ManualSource())),
        tmp_path,
        probe=raising(error),
    )
    with pytest.raises(ConquestPreflightFailed, match=type(error).__name__):
        await referee.preflight(seconds=0)


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
async def test_a_failing_agent_reaper_is_recorded_with_its_territory(tmp_path, error, caplog):
    race = ScriptedReferee(tmp_path, {})
    handle = race.agents["oracle"]

    async def reap():
        await asyncio.sleep(0)
        raise error

    async def start_and_end():
        handle.reaper = asyncio.ensure_future(reap())
        race.referee.agent_started(handle)
        await asyncio.sleep(0.01)
        await race.referee.finish(None, "test over")

    await settled(caplog, start_and_end)
    events = read_event_log(tmp_path / "events.jsonl")
    [failure] = failures(events, handle.territory_id)
    assert failure.component == "agent oracle reaper" and type(error).__name__ in (failure.detail or "")
    assert events[-1].kind == "match_finished"
