"""A referee task that raises is recorded, never a silently dead task: libvirt, SSH and disk errors injected
into the scripted territories' calls end up as `infrastructure_failure` events naming territory and component."""

from __future__ import annotations

import errno
import gc
import logging

import asyncssh
import libvirt
import pytest

from aoe_tui.store.event_log import read_event_log
from tests.engine.helpers import TERRITORIES, ScriptedReferee

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
