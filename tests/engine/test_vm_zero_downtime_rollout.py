"""The Zero-Downtime Rollout arena on real VMs: one 3-territory race, the oracle against two flawed builders.

One race per module (every TCG boot is ~20-35 s): the referee provisions the
guests (seed, v1 on 8081, the proxy on 8080, the dormant v2 slot, the
immutable arena programs) before any agent starts, then its continuity
monitor watches each public port from baseline-ready on. The oracle must be
durable with 100 points; the builder whose cutover blips (truncate-then-write
of upstream) must fail uninterrupted-cutover for good with `observed N failed
public checks during cutover`; the one running v2 by hand must fail it at the
SSH step. The operator holds the oracle's host reboot until both have failed
so, so both outcomes are observed. The saved match replays (reduce ==
world.json), its monitor verdicts re-judge equal from their evidence, and it
opens in the app with its service map.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from aoe_tui.app.widgets.service_map_view import ServiceMap
from aoe_tui.domain.monitor import MonitorSummary, judge
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from tests.app.app_under_test import SIZE, rendered, replay_app
from tests.engine.vm_cli import failure_details
from tests.fixture_paths import PROJECT
from tests.engine.vm_race import operated_race, race_events

pytestmark = pytest.mark.vm
ARENA = PROJECT / "arenas" / "zero-downtime-rollout" / "arena.toml"
BASE_PORT = 30000  # this module's loopback range: 30000-30099
BY_HAND = "unit rollout-v2.service is inactive in the guest, not active"
BLIP_END = " failed public checks during cutover"
TERRITORIES = ("rollout-one", "rollout-two", "rollout-three")
CUTOVER = "uninterrupted-cutover"


async def _operate(runner: MatchRunner, updates: asyncio.Queue, seen: dict) -> None:
    """Hold the oracle's reboot until both flawed builders failed where their mistakes show."""
    async for kind, where, f in race_events(updates):
        if kind == "agent_started" and "hold" not in seen:
            seen["hold"] = runner.pause_milestone("host-reboot", "rollout-one")
        elif kind == "milestone_failed" and where == ("rollout-two", CUTOVER):
            if f["detail"].endswith(BLIP_END) and not f["retryable"]:
                seen.setdefault("blip", f["detail"])
        elif kind == "milestone_failed" and where == ("rollout-one", CUTOVER) and not f["retryable"]:
            seen["oracle_blamed"] = f  # final: the race cannot end well, so do not wait out the timer
            await runner.referee.finish(None, "the oracle's cutover failed for good")
        elif kind == "milestone_failed" and where == ("rollout-three", CUTOVER):
            if f["detail"] == BY_HAND:
                seen.setdefault("by_hand", f["detail"])
        if "blip" in seen and "by_hand" in seen and "released" not in seen:
            seen["released"] = runner.resume_milestone("host-reboot", "rollout-one")


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    seen: dict = {}
    output, wall = operated_race(
        tmp_path_factory, "rollout", ARENA, BASE_PORT, lambda runner, updates: _operate(runner, updates, seen)
    )
    match = load_match(output)
    stopped = {e.to_json()["territory"]: e.to_json()["summary"] for e in match.events if e.kind == "monitor_stopped"}
    print(f"\nreal zero-downtime-rollout race: {wall:.0f} s wall, match clock {match.world.elapsed_ms / 1000:.0f} s")
    calibration = match.provenance["monitor_calibration"]["continuity"]
    print(
        f"  calibrated timeout {calibration['timeout_ms']} ms: slowest answer {calibration['slowest_ms']} ms "
        f"under the load, per territory {calibration['territories']}"
    )
    for territory, summary in stopped.items():
        print(
            f"  {territory}: {summary['samples']} samples, {summary['achieved_per_second']}/s "
            f"(schedule {summary['scheduled_per_second']}/s), check latency {summary['check_latency_ms']}, "
            f"loop lag {summary['loop_lag_ms']}, failures {summary['failures']}, excused {summary['excused']}, "
            f"host loaded {summary['host_loaded']}"
        )
    return output, match, seen


def test_the_oracle_is_durable_with_full_points(race):
    _, match, seen = race
    assert "oracle_blamed" not in seen, seen.get("oracle_blamed")
    assert seen["hold"] and seen["released"]
    world = match.world
    assert world.winner == "rollout-one" and world.finish_reason == "first durable deployment"
    oracle = world.territories["rollout-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    cutover = oracle.milestones[CUTOVER].evidence
    assert (cutover["upstream"], cutover["version"]) == (8082, "v2")
    assert cutover["continuity"]["failures"] == 0 and cutover["continuity"]["flags"] == ["saw-v2"]
    reboot = oracle.milestones["host-reboot"].evidence
    assert reboot["reboot"] is True and reboot["record"] == oracle.milestones["write-new"].evidence["record"]
    assert world.infrastructure_failures == 0


def test_the_check_timeout_was_calibrated_once_for_every_territory(race):
    _, match, _ = race
    calibration = match.provenance["monitor_calibration"]["continuity"]
    assert set(calibration["territories"]) == set(TERRITORIES) and calibration["slowest_ms"] > 0
    assert 1000 <= calibration["timeout_ms"] <= 5000 and calibration["factor"] == 3.0
    summaries = [e.to_json()["summary"] for e in match.events if e.kind == "monitor_stopped"]
    assert [s["timeout_ms"] for s in summaries] == [calibration["timeout_ms"]] * 3


def test_a_blipping_cutover_is_final(race):
    _, match, seen = race
    blip = match.world.territories["rollout-two"]
    assert blip.milestones["baseline-ready"].passed and not blip.milestones[CUTOVER].passed
    assert blip.milestone_points == 5
    assert seen["blip"].startswith("observed ") and seen["blip"].endswith(BLIP_END)
    final = [
        e.to_json()
        for e in match.events
        if e.kind == "milestone_failed"
        and e.to_json()["territory"] == "rollout-two"
        and e.to_json()["detail"].endswith(BLIP_END)
    ]
    assert len(final) == 1 and not final[0]["retryable"]  # final: never evaluated again
    continuity = final[0]["evidence"]["continuity"]
    assert continuity["failures"] >= 1 and continuity["first_failure"]["path"].startswith("/")


def test_v2_by_hand_stops_at_the_ssh_step(race):
    _, match, _ = race
    by_hand = match.world.territories["rollout-three"]
    assert not by_hand.milestones[CUTOVER].passed and by_hand.milestone_points == 5
    details = failure_details(match, "rollout-three", CUTOVER)
    assert details and details[-1] == BY_HAND


def test_the_match_replays_and_its_monitor_verdicts_rejudge_equal(race):
    output, match, _ = race
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())
    rules = load_manifest(ARENA).monitors[0].rules()
    for event in match.events:
        f = event.to_json()
        evidence = (f.get("evidence") or {}).get("continuity") if f.get("milestone") == CUTOVER else None
        if evidence is None or evidence["ended"] == "running":
            continue
        verdict = judge(rules, MonitorSummary.model_validate(evidence))
        if event.kind == "milestone_passed":
            assert verdict.passed
        elif not verdict.passed:
            assert (verdict.detail, verdict.final) == (f["detail"], not f["retryable"])
    kinds = [e.kind for e in match.events]
    assert kinds.count("monitor_started") == 3 and kinds.count("monitor_stopped") == 3
    instruction = (output / "agents" / "rollout-one-agent" / "instruction.md").read_text()
    assert instruction.startswith("Roll the live service in the contract appended below")
    assert "900 seconds" in instruction


async def test_the_match_opens_in_the_app_with_its_service_map(race):
    output, _, _ = race
    app = replay_app(output)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("end")
        await pilot.pause()
        maps = {t: rendered(app.screen.query_one(f"#pane-{t} ServiceMap", ServiceMap)) for t in TERRITORIES}
    assert "Live Proxy" in maps["rollout-one"] and "Version 2" in maps["rollout-one"]
    assert {t: text.count("✓") for t, text in maps.items()} == {
        "rollout-one": 5,
        "rollout-two": 1,
        "rollout-three": 1,
    }
