"""Continuous monitors ([[monitors]]): the manifest's rules, the judge's rules on a summary, the running monitor
against a loopback service (a blip is caught and never cleared, the cap ends it, a late referee is excused,
not blamed), and the referee's per-territory scheduling at 250 ms ticks."""

from __future__ import annotations

import asyncio
import time

import pytest

from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.manifest_rules import validate_manifest
from aoe_tui.domain import monitor as monitor_rules
from aoe_tui.domain.monitor import CheckResult, MonitorSummary, MonitorTally, is_excused, judge
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.monitor import PAUSED_DETAIL, LoopLagMeter, RunningMonitor, settle_and_judge
from aoe_tui.store.manifest_file import read_manifest_data, resolve_verifier
from tests.engine.helpers import ScriptedReferee, arena_data
from tests.engine.rollout_endpoint import RolloutEndpoint
from tests.fixture_paths import PROJECT

ROLLOUT = PROJECT / "arenas" / "zero-downtime-rollout" / "arena.toml"


def rollout_data() -> dict:
    data = read_manifest_data(ROLLOUT)
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(resolve_verifier(ROLLOUT, milestone["verifier"]))
    return data


def continuity(**changes):
    data = rollout_data()
    data["monitors"][0].update(changes)
    return Manifest.model_validate(data).monitors[0]


# -- the manifest ----------------------------------------------------------------------------------


def test_the_rollouts_monitor_is_declared_in_the_manifest():
    monitor = Manifest.model_validate(rollout_data()).monitors[0]
    assert (monitor.id, monitor.start_after, monitor.judged_by) == (
        "continuity",
        "baseline-ready",
        "uninterrupted-cutover",
    )
    assert (monitor.interval_ms, monitor.timeout_ms, monitor.flag, monitor.wait_for_flag_seconds) == (
        50,
        1000,
        "saw-v2",
        100,
    )
    assert [(p.path, p.expect, p.flag_on) for p in monitor.probes] == [
        ("/health", ["ready"], None),
        ("/version", ["v1", "v2"], "v2"),
        ("/records/customer-alpha-73c", ["alpha-original"], None),
        ("/records/customer-beta-a19", ["beta-original"], None),
    ]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"start_after": "nowhere"}, "monitors[0].start_after: references unknown milestone nowhere"),
        ({"judged_by": "baseline-ready"}, "monitors[0].judged_by: baseline-ready must depend on baseline-ready"),
        ({"wait_for_flag_seconds": 120}, "monitors[0].wait_for_flag_seconds: the wait and settle must end within"),
        ({"interval_ms": 0}, "monitors[0].interval_ms: must be positive"),
        ({"flag": None}, "flag and the probes' flag_on go together"),
        ({"failures_detail": "observed {count} failures"}, "failures_detail may only use {samples} and {failures}"),
        ({"probes": []}, "monitors[0].probes: a monitor needs at least one probe"),
        ({"sampels": 3}, "monitors[0].sampels: unknown key"),
    ],
)
def test_a_wrong_monitor_is_named_with_its_path(change, problem):
    data = rollout_data()
    data["monitors"][0].update(change)
    _, problems = validate_manifest(data)
    assert any(problem in str(p) for p in problems), [str(p) for p in problems]


def test_an_arena_without_monitors_keeps_its_compatibility_key():
    """`monitors` absent is left out of the key, so the published arenas' keys do not move."""
    from aoe_tui.engine.provenance import compatibility_key

    manifest = Manifest.model_validate(arena_data())
    assert manifest.monitors is None
    assert "monitors" in manifest.to_json()
    before = compatibility_key(manifest, "a", "b")
    data = manifest.to_json()
    data.pop("monitors")
    assert compatibility_key(Manifest.model_validate(data), "a", "b") == before


# -- the judge's rules -----------------------------------------------------------------------------


def _tally(**kw) -> MonitorTally:
    return MonitorTally(monitor="continuity", started_ms=1000, interval_ms=50, max_samples=kw.pop("cap", 2400), **kw)


def _good(v="v1"):
    return [CheckResult("/health", True, "ready", 3.0), CheckResult("/version", True, v, 3.0)]


def test_a_blip_is_final_and_never_cleared_by_later_good_samples():
    rules = continuity().rules()
    tally = _tally()
    tally.add_sample(1050, 0, _good(), [], 0)
    tally.add_sample(1100, 0, [CheckResult("/health", False, "status 502, body ''", 4.0)], [], 0)
    for at in range(1150, 3000, 50):
        tally.add_sample(at, 0, _good("v2"), ["saw-v2"], 0)
    verdict = judge(rules, tally.summary())
    assert not verdict.passed and verdict.final
    assert verdict.detail == "observed 1 failed public checks during cutover"
    first = tally.summary().first_failure
    assert (first.at_ms, first.sample, first.path, first.seen) == (1100, 2, "/health", "status 502, body ''")


def test_the_flag_then_the_samples_then_the_failures():
    rules = continuity().rules()
    tally = _tally()
    tally.add_sample(1050, 0, _good(), [], 0)
    assert judge(rules, tally.summary()).detail == "public endpoint never cut over to v2"
    assert not judge(rules, tally.summary()).final
    tally.add_sample(1100, 0, _good("v2"), ["saw-v2"], 0)
    assert judge(rules, tally.summary()).detail == "continuity monitor recorded only 2 samples"
    tally.add_sample(1150, 0, _good("v2"), ["saw-v2"], 0)
    assert judge(rules, tally.summary()).passed


def test_a_timeout_while_the_referee_lagged_is_host_load_not_the_players():
    late = CheckResult("/health", False, "no answer within 1000 ms", 1400.0, timed_out=True, loop_lag_ms=400)
    refused = CheckResult("/health", False, "ConnectError: refused", 400.0, loop_lag_ms=400)
    slow_player = CheckResult("/health", False, "no answer within 1000 ms", 1000.0, timed_out=True, loop_lag_ms=5)
    assert is_excused(late) and not is_excused(refused) and not is_excused(slow_player)
    tally = _tally()
    tally.add_sample(1050, 300, [late], [], 400)
    tally.add_sample(1100, 0, _good("v2"), ["saw-v2"], 0)
    tally.add_sample(1150, 0, _good("v2"), [], 0)
    summary = tally.summary()
    assert (summary.failures, summary.excused, summary.host_loaded) == (0, 1, True)
    assert summary.first_excused.path == "/health" and "host loaded" in summary.host_load_note
    assert judge(continuity().rules(), summary).passed


def test_the_cap_and_the_percentiles():
    tally = _tally(cap=3)
    for i in range(3):
        tally.add_sample(1000 + 50 * (i + 1), i * 10, _good(), [], i)
    assert tally.full
    summary = tally.summary()
    assert summary.samples == 3 and summary.checks == 6
    assert summary.start_lateness_ms.model_dump() == {"p50": 10, "p95": 20, "max": 20}
    assert summary.achieved_per_second == 20.0  # 3 samples in the 150 ms from the start to the last
    assert not summary.host_loaded


def test_the_summary_round_trips_through_evidence_json():
    tally = _tally()
    tally.add_sample(1050, 0, [CheckResult("/version", False, "status 502, body '\\x1b[2J'", 4.0)], [], 0)
    dumped = tally.summary().model_dump(mode="json")
    assert MonitorSummary.model_validate(dumped) == tally.summary()


# -- the running monitor against a loopback service ------------------------------------------------


@pytest.fixture
def service():
    service = RolloutEndpoint()
    yield service
    service.close()


@pytest.fixture
def punctual(monkeypatch):
    """This test's own loop lag never excuses a timeout (a loaded CI machine lags too): only the rule under test."""
    monkeypatch.setattr(monitor_rules, "LAG_EXCUSE_MS", 10**9)


async def _judged(spec, monitor, clock):
    """settle_and_judge until the monitor has its minimum of samples (a loaded CI host samples slowly)."""
    for _ in range(40):
        judged = await settle_and_judge(spec, monitor, clock)
        if not judged.verdict.detail or not judged.verdict.detail.startswith("continuity monitor recorded only"):
            return judged
    return judged


def _clock() -> MatchClock:
    clock = MatchClock()
    clock.start()
    return clock


async def test_a_blip_during_the_cutover_is_caught_and_judged_final(service, punctual):
    spec, clock = continuity(), _clock()
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter())
    monitor.start()
    await asyncio.sleep(0.3)
    service.down = True
    await asyncio.sleep(0.2)
    service.down = False
    service.version = "v2"
    judged = await _judged(spec, monitor, clock)
    assert judged.stopped and not monitor.running
    assert judged.verdict.final and judged.verdict.detail.startswith("observed ")
    assert judged.verdict.detail.endswith(" failed public checks during cutover")
    assert judged.summary.first_failure.seen == "status 502, body ''"
    assert judged.summary.samples >= 3 and judged.summary.ended == "judged"
    again = await settle_and_judge(spec, monitor, clock)  # a retry judges the stopped monitor as it stood
    assert again.verdict == judged.verdict and again.summary == judged.summary


async def test_a_hostile_body_is_bounded_and_shown_literally_and_a_drip_times_out(service, punctual):
    spec, clock = continuity(max_samples=2), _clock()
    service.health = b"\x1b]0;owned\x07\x1b[2J" + b"A" * 1_000_000
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter())
    monitor.start()
    while monitor.running:
        await asyncio.sleep(0.05)
    first = monitor.summary().first_failure
    assert first.path == "/health" and "\x1b" not in first.seen and len(first.seen) <= 120
    assert first.seen.startswith("status 200, body ")
    service.health, service.drip = b"ready", True
    monitor = RunningMonitor(continuity(max_samples=1), service.url, clock, LoopLagMeter())
    began = time.monotonic()
    monitor.start()
    while monitor.running:
        await asyncio.sleep(0.05)
    assert time.monotonic() - began < 6  # the whole check within its 1 s (and the 2 s fold), not 100 reads of 0.3 s
    assert monitor.summary().first_failure.seen == "no answer within 1000 ms"


async def test_a_clean_cutover_passes_and_the_wait_is_bounded(service):
    spec, clock = continuity(wait_for_flag_seconds=0.4), _clock()
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter())
    monitor.start()
    judged = await settle_and_judge(spec, monitor, clock)
    assert judged.verdict.detail == "public endpoint never cut over to v2" and monitor.running
    service.version = "v2"
    judged = await _judged(spec, monitor, clock)
    assert judged.verdict.passed, judged.summary
    assert judged.summary.failures == 0 and "saw-v2" in judged.summary.flags
    assert judged.summary.check_latency_ms.p95 < 1000


async def test_a_pause_ends_the_wait_for_the_flag(service):
    """The referee's pause waits for running checks, so a judge waiting for v2 must give way at once."""
    spec, clock = continuity(), _clock()
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter())
    monitor.start()
    waiting = asyncio.ensure_future(settle_and_judge(spec, monitor, clock))
    await asyncio.sleep(0.2)
    clock.pause()
    judged = await asyncio.wait_for(waiting, 2)
    assert judged.verdict.detail == PAUSED_DETAIL and not judged.verdict.final and monitor.running
    samples = monitor.tally.samples
    await asyncio.sleep(0.3)
    assert monitor.tally.samples == samples  # the guests are suspended: nothing sampled during a pause
    clock.resume()
    await monitor.stop("judged")


async def test_the_cap_ends_the_monitor(service):
    spec, clock = continuity(max_samples=3), _clock()
    capped = []
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter(), on_cap=capped.append)
    monitor.start()
    for _ in range(100):
        if capped:
            break
        await asyncio.sleep(0.05)
    assert capped == [monitor] and not monitor.running
    assert monitor.summary().samples == 3 and monitor.summary().ended == "cap"


async def _hang_during(service, block_seconds: float) -> MonitorSummary:
    """The service stops answering for a moment; meanwhile the referee's loop is blocked for `block_seconds`."""
    spec, clock = continuity(), _clock()
    monitor = RunningMonitor(spec, service.url, clock, LoopLagMeter())
    monitor.start()
    await asyncio.sleep(0.3)
    service.delay = 3.0
    await asyncio.sleep(0.1)  # a check is now waiting on the hung service
    if block_seconds:
        time.sleep(block_seconds)  # the whole event loop stalls: the referee is not looking
    else:
        await asyncio.sleep(1.5)
    service.delay = 0
    service.version = "v2"
    judged = await _judged(spec, monitor, clock)
    return judged.summary


async def test_a_timeout_while_the_referee_was_not_looking_is_excused(service):
    summary = await _hang_during(service, 1.5)
    assert summary.excused >= 1 and summary.failures == 0, summary
    assert summary.first_excused.seen == "no answer within 1000 ms"
    assert summary.host_loaded and summary.loop_lag_ms.max >= 1000 and "host loaded" in summary.host_load_note
    assert judge(continuity().rules(), summary).passed


async def test_the_same_timeout_with_a_referee_on_time_is_the_players(service, punctual):
    summary = await _hang_during(service, 0)
    assert summary.failures >= 1 and summary.excused == 0, summary
    assert summary.first_failure.seen == "no answer within 1000 ms" and not summary.host_loaded
    assert judge(continuity().rules(), summary).final


async def _two_territories(first: RolloutEndpoint, second: RolloutEndpoint, both_hang: bool) -> list[MonitorSummary]:
    """Two territories' monitors on one meter; the first service (and the second too, or not) hangs 1.5 s."""
    spec, clock, lag = continuity(), _clock(), LoopLagMeter()
    monitors = [RunningMonitor(spec, service.url, clock, lag) for service in (first, second)]
    for monitor in monitors:
        monitor.start()
    await asyncio.sleep(0.3)
    hung = (first, second) if both_hang else (first,)
    for service in hung:
        service.delay = 3.0
    await asyncio.sleep(1.5)
    for service in (first, second):
        service.delay, service.version = 0, "v2"
    return [(await _judged(spec, monitor, clock)).summary for monitor in monitors]


async def test_timeouts_in_two_territories_at_once_are_a_host_stall(service):
    other = RolloutEndpoint()
    try:
        summaries = await _two_territories(service, other, both_hang=True)
    finally:
        other.close()
    for summary in summaries:
        assert summary.excused >= 1 and summary.failures == 0, summary
        assert summary.host_loaded and judge(continuity().rules(), summary).passed


async def test_a_timeout_in_one_territory_alone_is_that_players(service, punctual):
    other = RolloutEndpoint()
    try:
        hung, fine = await _two_territories(service, other, both_hang=False)
    finally:
        other.close()
    assert hung.failures >= 1 and hung.first_failure.seen == "no answer within 1000 ms"
    assert fine.failures == 0


# -- per-territory scheduling at 250 ms ticks ------------------------------------------------------


async def test_a_slow_territorys_verifier_never_delays_anothers_verdict(tmp_path):
    """At tick_ms 250, builder-one's service-up verifier hangs for 15 s; the others pass long before it ends
    (within a tick or two on an idle machine; the bound is loose for a loaded CI host)."""
    slow = tmp_path / "service-up.sh"
    real = resolve_verifier(PROJECT / "arenas" / "first-build" / "arena.toml", "verify/service-up.sh")
    slow.write_text(f'#!/bin/sh\n[ "$AOE_TERRITORY_ID" = builder-one ] && sleep 15\nexec {real}\n')
    slow.chmod(0o755)
    data = arena_data(tick_ms=250)
    data["build"]["milestones"][0]["verifier"] = str(slow)
    from aoe_tui.testing.scripted_host import ScriptedPlan

    plans = {t: ScriptedPlan(ready_at_ms=0, storage="disk") for t in ("builder-one", "builder-two", "builder-three")}
    match = ScriptedReferee(tmp_path, plans, data)
    try:
        started = time.monotonic()
        await match.referee.tick()
        while time.monotonic() - started < 12:
            passed = {e["territory"] for e in match.events("milestone_passed") if e["milestone"] == "service-up"}
            if {"builder-two", "builder-three"} <= passed:
                break
            match.source.advance(0.25)
            await match.referee.tick()
            await asyncio.sleep(0.25)
        took = time.monotonic() - started
        assert {"builder-two", "builder-three"} <= passed and "builder-one" not in passed
        assert took < 12, took
        await match.referee.finish(None, "test over")
    finally:
        match.close()
