"""The Zero-Downtime Rollout arena without VMs: the original's ids and rules, a folder that validates, and one
race of the real referee (its continuity monitor included) over three namespaced guests running the arena's own
programs (tests.engine.rollout_guest): the oracle durable with 100 points, the blip stopped for good at
uninterrupted-cutover, the hand-run v2 stopped there by the SSH step; and every monitor verdict re-judged from its
evidence alone, as a replay does, equal to the live one."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from aoe_tui.agents.registry import resolve_adapter
from aoe_tui.agents.scripted.plans import PLANS
from aoe_tui.cli.main import main
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.monitor import MonitorSummary, judge
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.referee import Referee
from aoe_tui.store.event_log import read_event_log
from aoe_tui.store.manifest_file import load_manifest, read_manifest_data, resolve_verifier
from tests.engine.vm_cli import failure_details
from tests.engine.rollout_guest import ARENA, GuestTerritory, RolloutGuest, play_in_background

MANIFEST = ARENA / "arena.toml"
MILESTONES = [  # id, depends on, operation, timeout, points (ARENAS.md §3)
    ("baseline-ready", [], "observe", 5, 5),
    ("uninterrupted-cutover", ["baseline-ready"], "observe", 120, 45),
    ("write-new", ["uninterrupted-cutover"], "observe", 10, 15),
    ("v2-restart", ["write-new"], "observe", 20, 15),
    ("host-reboot", ["v2-restart"], "host_reboot", 40, 20),
]
TERRITORIES = ("rollout-one", "rollout-two", "rollout-three")
BY_HAND = "unit rollout-v2.service is inactive in the guest, not active"
RACE_SECONDS = 90


def test_ids_rules_points_and_the_map_are_the_originals():
    manifest = load_manifest(MANIFEST)
    assert (manifest.arena.id, manifest.arena.category, manifest.arena.mode) == (
        "zero-downtime-rollout",
        "service-delivery",
        "build_race",
    )
    assert manifest.network.cidr == "10.80.0.0/24" and manifest.fog_of_war is None
    rules = manifest.rules
    assert (rules.duration_seconds, rules.tick_ms, rules.minimum_territories, rules.healthy_resources_per_tick) == (
        900,
        250,
        3,
        0,
    )
    build = manifest.build
    assert build.stop_on_first_durable and build.completion_milestone == "host-reboot"
    assert [(m.id, m.depends_on, m.operation, m.timeout_seconds, m.points) for m in build.milestones] == MILESTONES
    [engineer] = manifest.classes
    assert (engineer.id, engineer.display_name) == ("rollout-engineer", "Rollout Engineer")
    assert (engineer.resources.vcpus, engineer.resources.memory_mib, engineer.resources.disk_mib) == (1, 768, 2048)
    assert [t.id for t in manifest.territories] == list(TERRITORIES)
    for territory in manifest.territories:
        service, health = territory.service, territory.service.health
        assert (service.port, service.path, service.expected_status, service.expected_body) == (
            8080,
            "/health",
            200,
            "ready",
        )
        assert (health.poll_interval_ms, health.consecutive_failures, health.recovery_window_seconds) == (250, 2, 30)
    assert [a.id for a in manifest.agents] == [f"{t}-agent" for t in TERRITORIES]
    nodes = {n.id: (n.display_name, n.kind, n.milestone) for n in manifest.visualization.nodes}
    assert nodes == {
        "client": ("Client", "client", None),
        "proxy": ("Live Proxy", "proxy", "baseline-ready"),
        "v2": ("Version 2", "service", "uninterrupted-cutover"),
        "state": ("State Store", "database", "write-new"),
        "unit": ("v2 Unit", "service", "v2-restart"),
        "host": ("Debian Host", "host", "host-reboot"),
    }
    links = [(link.from_, link.to, link.kind, link.label) for link in manifest.visualization.links]
    assert links == [
        ("client", "proxy", "traffic", "HTTP"),
        ("proxy", "v2", "traffic", "cutover"),
        ("v2", "state", "storage", None),
        ("unit", "v2", "lifecycle", None),
        ("host", "unit", "lifecycle", None),
    ]


def test_the_folder_validates(capsys):
    assert main(["arena", "validate", str(ARENA)]) == 0
    assert "arena folder valid" in capsys.readouterr().out


def test_the_builders_are_built_in_and_never_touch_v1_or_the_proxy():
    for agent in load_manifest(MANIFEST).agents:
        assert resolve_adapter(agent.adapter).builtin
        for step in PLANS[agent.adapter].steps:
            assert "rollout-proxy.service" not in step.command.replace(
                "systemctl cat rollout-v1.service rollout-v2.service rollout-proxy.service", ""
            ).replace("systemctl is-active rollout-v1.service rollout-v2.service rollout-proxy.service", "")
            assert "stop" not in step.command and "/usr/local/lib/aoe" not in step.command


# -- one race of the real referee over three namespaced guests -------------------------------------


def _namespaces() -> bool:
    return shutil.which("unshare") is not None and not subprocess.run(["unshare", "-rn", "true"]).returncode


def _manifest() -> Manifest:
    data = read_manifest_data(MANIFEST)
    data["build"]["stop_on_first_durable"] = False  # every builder's fate, not just the first durable
    return Manifest.model_validate(data)


def _settled(world) -> bool:
    oracle, blip, by_hand = (world.territories[t] for t in TERRITORIES)
    cutover = "uninterrupted-cutover"
    return (
        oracle.competitor_state == "durable"
        and blip.milestones.get(cutover) is not None
        and (blip.milestones[cutover].failure_detail or "").startswith("observed ")
        and by_hand.milestones.get(cutover) is not None
        and by_hand.milestones[cutover].failure_detail == BY_HAND
    )


async def _race(work: Path) -> tuple[Referee, list, dict[str, RolloutGuest]]:
    manifest = _manifest()
    guests = {t: RolloutGuest(work / t) for t in TERRITORIES}
    hosts: dict[str, GuestTerritory] = {}
    try:
        for territory, guest in guests.items():
            guest.boot()
            hosts[territory] = GuestTerritory(territory, guest)
            await hosts[territory].open()
        clock = MatchClock()
        recorder = MatchRecorder(clock, work / "events.jsonl")
        verifiers = {m.id: resolve_verifier(MANIFEST, m.verifier) for m in manifest.build.milestones}
        referee = Referee(manifest, hosts, recorder, verifiers, work / "match")
        referee.open_match(list(TERRITORIES))
        builders: list[asyncio.Future] = []
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline and not _settled(referee.world):
            await referee.tick()
            passed = {
                t for t in TERRITORIES if referee.world.territories[t].milestones.get("baseline-ready") is not None
            }
            if (
                not builders
                and all(referee.world.territories[t].milestones["baseline-ready"].passed for t in passed)
                and passed == set(TERRITORIES)
            ):
                agents = [a.adapter for a in manifest.agents]
                builders = [play_in_background(guests[t], PLANS[a]) for t, a in zip(TERRITORIES, agents)]
            await asyncio.sleep(manifest.rules.tick_ms / 1000)
        await referee.finish(None, "test over")
        await asyncio.gather(*builders)
        return referee, read_event_log(work / "events.jsonl"), guests
    finally:
        for host in hosts.values():
            await host.close()
        for guest in guests.values():
            guest.close()


@pytest.fixture(scope="module")
def race(tmp_path_factory):
    if not _namespaces():
        pytest.skip("needs network namespaces (unshare -rn)")
    return asyncio.run(_race(tmp_path_factory.mktemp("rollout-race")))


def test_the_oracle_is_durable_with_full_points(race):
    referee, _, _ = race
    oracle = referee.world.territories["rollout-one"]
    assert oracle.competitor_state == "durable" and oracle.milestone_points == 100
    cutover = oracle.milestones["uninterrupted-cutover"].evidence
    assert (cutover["cutover"], cutover["upstream"], cutover["version"]) == (True, 8082, "v2")
    continuity = cutover["continuity"]
    assert continuity["failures"] == 0 and continuity["flags"] == ["saw-v2"] and continuity["ended"] == "judged"
    assert continuity["samples"] >= 3 and continuity["scheduled_per_second"] == 20.0
    assert oracle.milestones["write-new"].evidence["record"].startswith("rollout-")
    assert oracle.milestones["host-reboot"].evidence["reboot"] is True


def test_a_blip_is_final_at_uninterrupted_cutover(race):
    referee, events, _ = race
    blip = referee.world.territories["rollout-two"]
    state = blip.milestones["uninterrupted-cutover"]
    assert not state.passed and state.failure_detail.endswith(" failed public checks during cutover")
    assert blip.milestone_points == 5
    [final] = [
        e
        for e in events
        if e.kind == "milestone_failed"
        and e.territory == "rollout-two"
        and e.milestone == "uninterrupted-cutover"
        and not e.retryable
    ]
    first = final.to_json()["evidence"]["continuity"]["first_failure"]
    assert first["path"] in ("/health", "/version", "/records/customer-alpha-73c", "/records/customer-beta-a19")
    assert first["seen"].startswith("status 502")  # the proxy read an empty upstream


def test_v2_by_hand_stops_at_the_ssh_step(race):
    referee, events, _ = race
    by_hand = referee.world.territories["rollout-three"]
    assert not by_hand.milestones["uninterrupted-cutover"].passed and by_hand.milestone_points == 5
    details = failure_details(SimpleNamespace(events=events), "rollout-three", "uninterrupted-cutover")
    assert details[-1] == BY_HAND  # retried (not final): the monitor had passed
    assert set(details) <= {BY_HAND, "public endpoint never cut over to v2"}


def test_monitor_verdicts_replay_from_their_evidence_and_the_log_reduces(race):
    referee, events, _ = race
    monitor = referee.manifest.monitors[0]
    judged = 0
    for event in events:
        if getattr(event, "milestone", None) != "uninterrupted-cutover" or event.kind not in (
            "milestone_passed",
            "milestone_failed",
        ):
            continue
        evidence = (event.to_json().get("evidence") or {}).get("continuity")
        if evidence is None or evidence["ended"] == "running":
            continue  # not yet judged: the wait for v2 ran out (its detail says so)
        verdict = judge(monitor.rules(), MonitorSummary.model_validate(evidence))
        if event.kind == "milestone_passed":
            assert verdict.passed
        elif verdict.passed:
            assert event.detail == BY_HAND  # the monitor passed; the verifier's own SSH step failed
        else:
            assert (verdict.detail, verdict.final) == (event.detail, not event.retryable)
        judged += 1
    assert judged >= 3
    assert reduce(events).to_json() == referee.world.to_json()
    kinds = [e.kind for e in events]
    assert kinds.count("monitor_started") == 3 and kinds.count("monitor_stopped") == 3  # never one per sample
