"""First Contact (conquest) without VMs: the arena's ids and rules, the health machine against the published match,
the timer ranking, and whole matches through the real runner and referee against health servers on loopback."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from aoe_tui.domain import conquest as cq
from aoe_tui.domain import events as ev
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.reducer import reduce
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.conquest import ConquestReferee
from aoe_tui.engine.health_probe import MAX_RESPONSE_BYTES, ProbeResult, probe_http
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_provider import AgentScript, ScriptedLauncher
from tests.engine.conquest_fakes import FakeConquestHost, FakeConquestProvider, quick_manifest
from tests.fixture_paths import MATCH_DIRS

ARENA = Path(__file__).resolve().parents[2] / "arenas" / "first-contact"
MANIFEST = ARENA / "arena.toml"
FIXTURE = next(p for p in MATCH_DIRS if p.name.startswith("first-contact"))
TOKENS = {"gatekeeper": "gatekeeper:ok", "archivist": "archivist:ok", "courier": "courier:ok"}


def kinds(events, kind):
    return [e for e in events if e.kind == kind]


# -- the arena --------------------------------------------------------------------------------------------


def test_ids_rules_and_classes_are_the_originals():
    m = load_manifest(MANIFEST)
    assert (m.arena.id, m.arena.category, m.arena.mode, m.build, m.fog_of_war) == (
        "first-contact",
        "adversarial-systems",
        "conquest",
        None,
        None,
    )
    assert m.network.cidr == "10.77.0.0/24"
    r = m.rules
    assert (r.duration_seconds, r.tick_ms, r.healthy_resources_per_tick, r.minimum_territories) == (300, 1000, 1, 3)
    assert {c.id: (c.resources.vcpus, c.resources.memory_mib, c.resources.disk_mib) for c in m.classes} == {
        "gatekeeper": (1, 768, 2048),
        "archivist": (1, 1024, 3072),
        "courier": (1, 768, 2048),
    }
    for t in m.territories:
        s = t.service
        assert (t.class_, s.port, s.path, s.expected_status, s.expected_body) == (
            t.id,
            8080,
            "/health",
            200,
            TOKENS[t.id],
        )
        assert (s.health.poll_interval_ms, s.health.consecutive_failures, s.health.recovery_window_seconds) == (
            1000,
            3,
            60,
        )
    assert {a.id: (a.territory, a.budget.resource_units) for a in m.agents} == {f"{t}-agent": (t, 900) for t in TOKENS}


def test_each_territory_is_told_its_own_token_and_role(tmp_path):
    from aoe_tui.engine.instructions import render_instruction

    m = load_manifest(MANIFEST)
    for agent in m.agents:
        text = render_instruction(m, MANIFEST, agent, "127.0.0.1", 33200)
        assert TOKENS[agent.territory] in text and "10.77.0.0/24" in text and "-p 33200" in text
        assert all(token not in text for t, token in TOKENS.items() if t != agent.territory)


# -- the health machine -----------------------------------------------------------------------------------


def machine(n=3, window_ms=60_000):
    return cq.HealthMachine("courier", n, window_ms)


def moves(m, probes):
    return [(t.from_, t.to, t.reason) for at, healthy in probes for t in m.observe(healthy, at)]


def test_three_failures_degrade_one_healthy_probe_recovers_three_make_it_durable():
    m = machine()
    assert moves(m, [(1000, False), (2000, False)]) == []
    assert moves(m, [(3000, False)]) == [("healthy", "degraded", "failure threshold reached")]
    assert m.deadline_ms == 63_000
    assert moves(m, [(4000, True)]) == [("degraded", "recovering", "healthy probe during recovery window")]
    assert moves(m, [(5000, True), (6000, True)]) == [("recovering", "healthy", "durable recovery")]
    assert m.deadline_ms is None and m.degraded_time_ms(10_000) == 3000


def test_a_healthy_probe_between_failures_resets_the_count():
    m = machine()
    assert moves(m, [(1000, False), (2000, False), (3000, True), (4000, False), (5000, False)]) == []
    assert m.state == "healthy"


def test_a_relapse_keeps_the_deadline_and_the_window_eliminates():
    m = machine(window_ms=10_000)
    moves(m, [(1000, False), (2000, False), (3000, False), (4000, True)])
    assert moves(m, [(5000, False)]) == [("recovering", "degraded", "recovery did not survive verification")]
    assert m.deadline_ms == 13_000
    assert moves(m, [(12_000, True)]) == [("degraded", "recovering", "healthy probe during recovery window")]
    assert moves(m, [(13_000, True)]) == [("recovering", "eliminated", "recovery window expired")]
    assert m.out and m.observe(True, 14_000) == [] and m.expire(99_000) == []


def test_the_window_expires_on_a_tick_without_a_probe():
    m = machine(window_ms=5000)
    moves(m, [(1000, False), (2000, False), (3000, False)])
    assert m.expire(7999) == []
    assert [(t.from_, t.to) for t in m.expire(8000)] == [("degraded", "eliminated")]
    assert m.degraded_time_ms(9000) == 5000


def test_a_recovery_completed_at_the_deadline_saves_the_territory():
    m = machine(n=2, window_ms=3000)
    moves(m, [(1000, False), (2000, False), (3000, True)])
    assert moves(m, [(5000, True)]) == [("recovering", "healthy", "durable recovery")]


def test_the_published_match_replays_through_the_machine_with_its_recorded_transitions():
    match = load_match(FIXTURE)
    replayed, machines = cq.replay_transitions(match.events, 3, 60_000)
    assert replayed == cq.recorded_transitions(match.events)
    assert {tid: m.state for tid, m in machines.items()} == {t: "healthy" for t in TOKENS}
    assert {t: match.world.territories[t].resources for t in TOKENS} == {t: 1186 for t in TOKENS}


def test_a_synthetic_log_replays_to_its_own_transitions():
    """Events a live referee writes (degraded, recovering, eliminated) come back out of the machine unchanged."""
    m, log = machine(window_ms=4000), []
    seq = 0

    def emit(event):
        nonlocal seq
        log.append(event.model_copy(update={"sequence": seq}))
        seq += 1

    emit(
        ev.TerritoryStateChanged(
            territory="courier", from_="provisioning", to="healthy", reason="preflight passed", elapsed_ms=0
        )
    )
    for at, healthy in [
        (1000, True),
        (2000, False),
        (3000, False),
        (4000, False),
        (5000, True),
        (6000, False),
        (7000, False),
        (8000, False),
    ]:
        emit(ev.HealthObserved(territory="courier", healthy=healthy, elapsed_ms=at))
        for t in m.observe(healthy, at):
            emit(ev.TerritoryStateChanged(territory="courier", from_=t.from_, to=t.to, reason=t.reason, elapsed_ms=at))
    replayed, _ = cq.replay_transitions(log, 3, 4000)
    assert replayed == cq.recorded_transitions(log)
    assert [t.to for t in replayed] == ["healthy", "degraded", "recovering", "degraded", "eliminated"]


# -- the timer ranking ------------------------------------------------------------------------------------


def standing(tid, out=False, up=10, res=900, degraded=0):
    return cq.Standing(tid, out, up, res, degraded)


def test_ranking_not_eliminated_then_uptime_resources_least_degraded_then_id():
    ranked, winner = cq.timer_ranking(
        [
            standing("archivist", up=9, res=2000),
            standing("courier", out=True, up=99),
            standing("gatekeeper", up=10, res=10),
        ]
    )
    assert [s.territory for s in ranked] == ["gatekeeper", "archivist", "courier"] and winner == "gatekeeper"
    ranked, winner = cq.timer_ranking([standing("b", degraded=5), standing("a", degraded=9)])
    assert winner == "b"
    ranked, winner = cq.timer_ranking([standing("b"), standing("a"), standing("c", res=1)])
    assert [s.territory for s in ranked] == ["a", "b", "c"] and winner is None  # top two equal on all four


# -- the probe ----------------------------------------------------------------------------------------------


async def test_probe_bodies_are_bounded_and_literal_and_errors_are_details():
    clock = iter(range(0, 10**9, 1000))
    host = FakeConquestHost("courier", "courier:ok", [(0, "flood")], lambda: next(clock))
    try:
        flooded = await probe_http(host.host, host.service_port, "/health", 200, "courier:ok")
        assert not flooded.healthy and flooded.status == 200
        assert "\x1b" not in flooded.detail and "\x07" not in flooded.detail and len(flooded.detail) < 400
        assert MAX_RESPONSE_BYTES < 1 << 20
        host.schedule = [(0, "ok")]
        good = await probe_http(host.host, host.service_port, "/health", 200, "courier:ok")
        assert (good.healthy, good.status, good.detail) == (True, 200, "courier:ok")
        host.schedule = [(0, "wrong")]
        wrong = await probe_http(host.host, host.service_port, "/health", 200, "courier:ok")
        assert (wrong.healthy, wrong.detail) == (False, "pwned by gatekeeper")
    finally:
        host.close()
    refused = await probe_http(host.host, host.service_port, "/health", 200, "courier:ok")
    assert not refused.healthy and refused.status is None and "refused" in refused.detail.lower()


async def test_a_slow_probe_never_delays_another_territorys_verdict(tmp_path):
    manifest = quick_manifest(load_manifest(MANIFEST))
    manifest.rules.tick_ms = 200
    gate = asyncio.Event()

    async def probe(tid, host):
        if tid == "archivist":
            await gate.wait()  # hangs until the test lets it go
        return ProbeResult(True, 200, 1, TOKENS[tid])

    clock = MatchClock(ManualSource())
    recorder = MatchRecorder(clock)
    referee = ConquestReferee(manifest, {t: object() for t in TOKENS}, recorder, tmp_path, probe=probe)
    referee.open_match(sorted(TOKENS))
    loop = asyncio.get_running_loop()
    started = loop.time()
    await referee.tick()
    assert loop.time() - started < 1.0  # waited at most part of a tick, not the hung probe
    observed = [t for t, s in referee.world.territories.items() if s.last_health is not None]
    assert sorted(observed) == ["courier", "gatekeeper"]
    gate.set()
    clock.source.advance(0.2)
    await referee.tick()
    assert referee.world.territories["archivist"].last_health.healthy
    await referee.abort("test over")


# -- whole matches ------------------------------------------------------------------------------------------


def runner(tmp_path, schedules, **quick):
    manifest = quick_manifest(load_manifest(MANIFEST), **quick)
    provider = FakeConquestProvider(schedules)
    launcher = ScriptedLauncher({f"{t}-agent": AgentScript(finishes_after=4.0) for t in TOKENS})
    return (
        MatchRunner(MANIFEST, tmp_path / "match", provider, launcher, source=ManualSource(), manifest=manifest),
        provider,
    )


async def test_the_courier_is_eliminated_after_its_window_and_powered_off_then_last_standing_wins(tmp_path):
    race, provider = runner(tmp_path, {"courier": [(3000, "down")], "archivist": [(8000, "closed")]}, window_seconds=5)
    world = await race.run()
    match = load_match(tmp_path / "match")
    events = match.events
    opening = [(e.kind, e.territory_id) for e in events[:7]]
    assert opening == [
        ("match_state_changed", None),
        ("territory_state_changed", "archivist"),
        ("territory_state_changed", "courier"),
        ("territory_state_changed", "gatekeeper"),
        ("territory_registered", "gatekeeper"),
        ("territory_registered", "archivist"),
        ("territory_registered", "courier"),
    ]
    courier = [
        (e.to_json()["from"], e.to, e.reason, e.elapsed_ms)
        for e in kinds(events, "territory_state_changed")
        if e.territory == "courier"
    ]
    assert [c[:3] for c in courier] == [
        ("provisioning", "healthy", "preflight passed"),
        ("healthy", "degraded", "failure threshold reached"),
        ("degraded", "eliminated", "recovery window expired"),
    ]
    assert courier[2][3] - courier[1][3] == 5000
    eliminated = kinds(events, "territory_eliminated")
    assert [(e.territory, e.source, e.detail) for e in eliminated] == [
        ("courier", "player", "recovery window expired"),
        ("archivist", "player", "recovery window expired"),
    ]
    assert provider.hosts == {}  # torn down
    finished = kinds(events, "match_finished")[0]
    assert (finished.winner, finished.reason) == ("gatekeeper", "last territory standing")
    assert (world.winner, world.finish_reason, world.match_state) == (
        "gatekeeper",
        "last territory standing",
        "finished",
    )
    # no probe of an eliminated territory, and each tick's observations come in id order
    after = [
        e for e in events if e.kind == "health_observed" and e.territory == "courier" and e.elapsed_ms > courier[2][3]
    ]
    assert after == []
    first_tick = [e.territory for e in kinds(events, "health_observed") if e.elapsed_ms == 1000]
    assert first_tick == ["archivist", "courier", "gatekeeper"]
    down = [e for e in kinds(events, "health_observed") if e.territory == "courier" and not e.healthy][0]
    assert (down.status, down.detail) == (503, "queue unavailable")
    assert reduce(events).to_json() == json.loads((tmp_path / "match" / "world.json").read_text())


async def test_the_economy_pays_healthy_ticks_and_charges_inference_never_below_zero(tmp_path):
    race, _ = runner(tmp_path, {"courier": [(2000, "down")]}, window_seconds=60, duration_seconds=10)
    await race.run()
    events = load_match(tmp_path / "match").events
    changes = [e for e in kinds(events, "resources_changed") if e.territory == "gatekeeper"]
    ticks = [e for e in changes if e.reason == "healthy tick"]
    charges = [e for e in changes if e.reason == "agent inference"]
    assert ticks[0].delta == 1 and ticks[0].remaining == 901
    assert sum(e.delta for e in charges) == -4  # four seconds of a scripted agent at one unit a second
    running = 900
    for change in changes:
        running += change.delta
        assert change.remaining == running >= 0
    courier_ticks = [
        e for e in kinds(events, "resources_changed") if e.territory == "courier" and e.reason == "healthy tick"
    ]
    assert len(courier_ticks) < len(ticks)  # degraded territories earn nothing
    agent_order = [
        e.kind for e in events if e.kind in ("agent_finished", "usage_charged") and e.agent_id == "gatekeeper-agent"
    ]
    assert agent_order[:1] == ["agent_finished"] or "usage_charged" in agent_order


async def test_the_timer_ranks_survivors_and_an_equal_top_two_has_no_winner(tmp_path):
    race, _ = runner(
        tmp_path / "a", {"courier": [(2000, "down"), (5000, "ok")]}, window_seconds=60, duration_seconds=12
    )
    world = await race.run()
    assert world.finish_reason == "match timer expired" and world.winner is None  # archivist = gatekeeper on all four
    race, _ = runner(
        tmp_path / "b",
        {"courier": [(2000, "down")], "archivist": [(1000, "wrong"), (4500, "ok")]},
        window_seconds=60,
        duration_seconds=12,
    )
    world = await race.run()
    assert (world.finish_reason, world.winner) == ("match timer expired", "gatekeeper")


async def test_no_match_when_a_territory_is_never_healthy_in_preflight(tmp_path):
    race, provider = runner(tmp_path, {"archivist": [(0, "wrong")]})
    with pytest.raises(AoeError, match="conquest preflight: not every territory was healthy within 120 s"):
        await race.run()
    events = load_match(tmp_path / "match").events
    assert [e.kind for e in events] == ["infrastructure_failure", "match_state_changed"]
    assert "archivist: 200 'pwned by gatekeeper'" in events[0].detail
    assert events[-1].to == "aborted" and provider.hosts == {}


def test_operator_milestone_controls_say_a_conquest_has_none(tmp_path):
    manifest = load_manifest(MANIFEST)
    referee = ConquestReferee(manifest, {}, MatchRecorder(MatchClock(ManualSource())), tmp_path)
    with pytest.raises(AoeError, match="conquest"):
        referee.pause_milestone("anything")


def test_headless_lines_skip_every_tick_probes_and_healthy_ticks():
    from aoe_tui.engine.narration import Narrator

    narrator = Narrator()

    def line(event):
        return narrator.line(event.model_copy(update={"sequence": 1, "elapsed_ms": 1000}))

    ok = ev.HealthObserved(territory="courier", healthy=True, status=200, latency_ms=3, detail="courier:ok")
    down = ev.HealthObserved(territory="courier", healthy=False, status=503, latency_ms=3, detail="queue unavailable")
    assert line(ok) is not None and line(ok) is None and line(down) is not None and line(down) is None
    assert line(ev.ResourcesChanged(territory="courier", delta=1, remaining=901, reason="healthy tick")) is None
    assert line(ev.ResourcesChanged(territory="courier", delta=-3, remaining=898, reason="agent inference"))


def test_the_scripted_players_are_registered_and_their_steps_are_valid_bash():
    import subprocess

    from aoe_tui.agents.registry import resolve_adapter
    from aoe_tui.agents.scripted.plans import PLANS

    for agent in load_manifest(MANIFEST).agents:
        assert agent.adapter in PLANS and resolve_adapter(agent.adapter, ARENA).builtin
        for step in PLANS[agent.adapter].steps:
            parsed = subprocess.run(["bash", "-n", "-c", step.command], capture_output=True, text=True)
            assert parsed.returncode == 0, (agent.adapter, step.description, parsed.stderr)
    attack = " ".join(s.command for s in PLANS["contact-attacker"].steps)
    assert "redis-cli -h 10.77.0.12 -p 6379 shutdown nosave" in attack
    assert "shutdown" not in " ".join(s.command for s in PLANS["contact-careless"].steps)
