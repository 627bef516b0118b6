"""The conquest referee (ARENAS §5): health every tick, the elimination window, the economy, last standing.

It is the build referee (`engine.referee.Referee`) with another tick: agents,
usage and budget, the post-match drain, pause and finishing are the build
referee's own code, inherited. What differs:

- preflight: every territory's health probe (3 s timeout) healthy within
  120 s, else no match (`ConquestPreflightFailed`);
- the opening: running, then provisioning -> healthy `preflight passed` in id
  order, then registered;
- each tick, in id order: the probe's `health_observed`, the health machine
  (`domain.conquest`, the one owner of the transitions), power off on
  elimination; then the economy (+`healthy_resources_per_tick` and one
  uptime tick per healthy territory); agents' usage charges their
  territory's resources (`agent inference`, never below 0);
- last standing, or at the timer the ranking of `domain.conquest.timer_ranking`.

Probes run concurrently, each with its own deadline; a tick waits for them
only `PROBE_WAIT_FRACTION` of a tick, so one slow guest never delays the
others' verdicts: a probe still running then is recorded at the first tick
after it ends (its latency says how long it took), and that territory gets
no second probe meanwhile. The window's deadline is looked at every tick,
probe or not. A probe that raises (the referee's own socket, a libvirt or SSH
error of a custom probe) observed nothing: it is recorded as the arena's
`infrastructure_failure` (engine.task_failures) and that territory's tick is
judged as one without a probe; in the preflight it is a failing answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from aoe_tui.agents.protocol import Usage
from aoe_tui.domain import conquest as cq
from aoe_tui.domain import events as ev
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.health_probe import PROBE_TIMEOUT_SECONDS, ProbeResult, probe_http
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.referee import Referee
from aoe_tui.engine.task_failures import failure_of, failure_recorder
from aoe_tui.engine.territory import TerritoryHost

PREFLIGHT_SECONDS = 120.0
PREFLIGHT_RETRY_SECONDS = 1.0
PROBE_WAIT_FRACTION = 0.6
ELIMINATION_SOURCE = "player"

Probe = Callable[[str, TerritoryHost], Awaitable[ProbeResult]]


class ConquestPreflightFailed(Exception):
    """Not every territory was healthy within the preflight window: there is no match."""


class ConquestReferee(Referee):
    needs_build = False

    def __init__(
        self,
        manifest: Manifest,
        hosts: dict[str, TerritoryHost],
        recorder: MatchRecorder,
        work_dir: Path,
        probe: Probe | None = None,
    ) -> None:
        super().__init__(manifest, hosts, recorder, {}, work_dir)
        self.probe: Probe = probe or self.http_probe
        self.ids = sorted(t.id for t in manifest.territories)
        self.machines = {
            tid: cq.HealthMachine(
                tid,
                manifest.territory(tid).service.health.consecutive_failures,
                manifest.territory(tid).service.health.recovery_window_seconds * 1000,
            )
            for tid in self.ids
        }
        self.resources = {tid: manifest.agent_for(tid).budget.resource_units or 0 for tid in self.ids}
        self.uptime_ticks = {tid: 0 for tid in self.ids}
        self._probes: dict[str, asyncio.Task[ProbeResult]] = {}

    # -- probes ------------------------------------------------------------------------------------

    async def http_probe(self, territory_id: str, host: TerritoryHost) -> ProbeResult:
        service = self.manifest.territory(territory_id).service
        return await probe_http(
            host.host, host.service_port, service.path, service.expected_status, service.expected_body
        )

    async def _probe_safely(self, territory_id: str) -> ProbeResult:
        started = time.monotonic()
        try:
            return await asyncio.wait_for(self.probe(territory_id, self.hosts[territory_id]), PROBE_TIMEOUT_SECONDS)
        except TimeoutError:
            return ProbeResult(False, None, int((time.monotonic() - started) * 1000), "probe timed out")

    async def preflight(self, seconds: float = PREFLIGHT_SECONDS) -> None:
        """Probe every territory until all answer healthy in one round; ConquestPreflightFailed after `seconds`."""
        source = self.clock.source
        deadline = source.now() + seconds
        while True:
            answers = await asyncio.gather(*(self._probe_safely(tid) for tid in self.ids), return_exceptions=True)
            results = [_as_result(answer) for answer in answers]
            failing = {tid: r for tid, r in zip(self.ids, results) if not r.healthy}
            if not failing:
                return
            if source.now() >= deadline:
                details = "; ".join(
                    f"{tid}: {r.status if r.status is not None else 'no answer'} {r.detail!r}"
                    for tid, r in failing.items()
                )
                raise ConquestPreflightFailed(
                    f"conquest preflight: not every territory was healthy within {seconds:g} s ({details})"
                )
            await source.sleep(PREFLIGHT_RETRY_SECONDS)

    # -- opening -----------------------------------------------------------------------------------

    def open_match(self, preflight_order: list[str]) -> None:
        """Running, each territory healthy after preflight (id order), registered (manifest order)."""
        self.clock.start()
        self.recorder.emit(ev.MatchStateChanged(from_="preparing", to="running"))
        for territory_id in self.ids:
            self.recorder.emit(
                ev.TerritoryStateChanged(
                    territory=territory_id, from_=cq.PROVISIONING, to=cq.HEALTHY, reason=cq.PREFLIGHT_REASON
                )
            )
        for territory in self.manifest.territories:
            self.recorder.emit(
                ev.TerritoryRegistered(
                    territory=territory.id, class_=territory.class_, agent=self.manifest.agent_for(territory.id).id
                )
            )

    # -- ticks -------------------------------------------------------------------------------------

    async def tick(self) -> None:
        if self.over or self.clock.paused:
            return
        for tid in self.ids:
            if not self.machines[tid].out and tid not in self._probes:
                self._probes[tid] = asyncio.ensure_future(self._probe_safely(tid))
                self._probes[tid].add_done_callback(failure_recorder(self.recorder, tid, "health probe"))
        running = [task for task in self._probes.values() if not task.done()]
        if running:
            await asyncio.wait(running, timeout=self.manifest.rules.tick_ms / 1000 * PROBE_WAIT_FRACTION)
        if self.over or self.clock.paused:
            return
        for tid in self.ids:
            await self._judge(tid)
        self._economy()
        self.record_exited_agents()
        self.charge_usage()
        over, winner = cq.last_standing(self.machines.values())
        if over:
            await self.finish(winner, cq.LAST_STANDING_REASON)
        elif self.clock.elapsed_ms() >= self.duration_ms:
            await self.finish_on_timer()

    async def _judge(self, territory_id: str) -> None:
        machine = self.machines[territory_id]
        if machine.out:
            return
        now = self.clock.elapsed_ms()
        task = self._probes.get(territory_id)
        if task is not None and task.done():
            del self._probes[territory_id]
        if task is not None and task.done() and failure_of(task) is None:
            result = task.result()
            self.recorder.emit(
                ev.HealthObserved(
                    territory=territory_id,
                    healthy=result.healthy,
                    status=result.status,
                    latency_ms=result.latency_ms,
                    detail=result.detail,
                )
            )
            moves = machine.observe(result.healthy, now)
        else:
            moves = machine.expire(now)
        for move in moves:
            self.recorder.emit(
                ev.TerritoryStateChanged(territory=territory_id, from_=move.from_, to=move.to, reason=move.reason)
            )
            if move.eliminated:
                self.recorder.emit(
                    ev.TerritoryEliminated(territory=territory_id, source=ELIMINATION_SOURCE, detail=move.reason)
                )
                await self._power_off(territory_id)

    async def _power_off(self, territory_id: str) -> None:
        probe = self._probes.pop(territory_id, None)
        if probe is not None:
            probe.cancel()
        power_off = getattr(self.hosts[territory_id], "power_off", None)
        if power_off is not None:
            await power_off()

    def _economy(self) -> None:
        per_tick = self.manifest.rules.healthy_resources_per_tick
        for tid in self.ids:
            if self.machines[tid].state != cq.HEALTHY:
                continue
            self.uptime_ticks[tid] += 1
            self._change_resources(tid, per_tick, cq.HEALTHY_TICK_REASON)

    def _change_resources(self, territory_id: str, delta: int, reason: str) -> None:
        before = self.resources[territory_id]
        after = max(before + delta, 0)
        self.resources[territory_id] = after
        if delta:
            self.recorder.emit(
                ev.ResourcesChanged(territory=territory_id, delta=after - before, remaining=after, reason=reason)
            )

    def _charge(self, agent_id: str, usage: Usage) -> None:
        """The build referee's charge, then the units spent leave the agent's territory's resources."""
        state = self.world.agents.get(agent_id)
        before = state.resource_units_used if state is not None else 0
        super()._charge(agent_id, usage)
        state = self.world.agents.get(agent_id)
        spent = (state.resource_units_used if state is not None else 0) - before
        territory_id = self._territory_of(agent_id)
        if spent > 0 and territory_id in self.resources:
            self._change_resources(territory_id, -spent, cq.INFERENCE_REASON)

    def _territory_of(self, agent_id: str) -> str | None:
        return next((a.territory for a in self.manifest.agents if a.id == agent_id), None)

    # -- the end -----------------------------------------------------------------------------------

    def standings(self) -> list[cq.Standing]:
        now = self.clock.elapsed_ms()
        return [
            cq.Standing(
                tid,
                self.machines[tid].out,
                self.uptime_ticks[tid],
                self.resources[tid],
                self.machines[tid].degraded_time_ms(now),
            )
            for tid in self.ids
        ]

    def timer_winner(self) -> str | None:
        return cq.timer_ranking(self.standings())[1]

    def outraced_reason(self, winner: str) -> str:
        return f"{winner} won the conquest ({self.world.finish_reason})"

    async def _stop_probes(self) -> None:
        probes, self._probes = list(self._probes.values()), {}
        for task in probes:
            task.cancel()
        await asyncio.gather(*probes, return_exceptions=True)

    async def finish(self, winner: str | None, reason: str) -> None:
        if not self.over:
            await self._stop_probes()
        await super().finish(winner, reason)

    async def abort(self, reason: str) -> None:
        await self._stop_probes()
        await super().abort(reason)

    async def settle(self) -> None:
        await asyncio.gather(*list(self._probes.values()), return_exceptions=True)
        await super().settle()

    def _require_milestone(self, milestone_id: str) -> None:
        raise AoeError(f"arena {self.manifest.arena.id} is a conquest: it has no milestones to pause or retry")


def _as_result(answer: ProbeResult | BaseException) -> ProbeResult:
    """A preflight probe that raised is a failing answer naming the error (no latency was measured)."""
    if isinstance(answer, BaseException):
        return ProbeResult(False, None, 0, f"probe failed: {type(answer).__name__}: {answer}")
    return answer
