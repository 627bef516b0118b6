"""The referee: decides, tick by tick, what works in each territory.

Every `rules.tick_ms` each territory that is not already being checked gets
one evaluation task: it verifies the eligible milestones in manifest order
(dependencies passed, not passed, not paused) and keeps chaining while they
pass, so a good build can earn several milestones in one tick. Territories
are checked concurrently; a slow host reboot in one never delays another.

All outcomes are events (through the recorder); the referee's own state is
only what the log cannot hold: running tasks, queued retries, the usage
already charged, when a guest was rebooted.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from pathlib import Path

import asyncssh
import libvirt

from aoe_tui.agents.gateway.metering import Charge
from aoe_tui.agents.protocol import InvalidReport, Usage
from aoe_tui.domain import events as ev
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Budget, Build, Manifest, Milestone
from aoe_tui.domain.world import AgentState
from aoe_tui.engine.agent_handle import AgentHandle
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.evidence_copies import EvidenceCopies
from aoe_tui.engine.monitor import LoopLagMeter, RunningMonitor, settle_and_judge
from aoe_tui.engine.outcomes import AgentOutcome, classify_exit
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.task_failures import failure_recorder
from aoe_tui.engine.territory import RebootFailed, TerritoryHost, TerritoryUnavailable
from aoe_tui.engine.verifier import VerifierOutcome, run_verifier
from aoe_tui.store.manifest_file import VERIFIER_HELPERS
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.rewrite_file import rewrite_in_place

DURABLE_REASON = "first durable deployment"
TIMER_REASON = "match timer expired"
VOID_REASON = "every territory was lost to infrastructure failures: no result"
CANCELLED_DETAIL = "the match ended while this verification was running"
# A milestone that keeps failing is retried less often (up to every 16 ticks): a
# territory stuck on a broken restart or reboot must not starve the guests that
# are still racing of CPU, nor have its service restarted under its builder again
# and again. The first two failures retry on the next tick. The pause is never
# longer than BACKOFF_PER_CHECK_COST times what the failed check took, though: a
# check that costs nothing (a refused GET) runs every tick, so a builder's pass is
# seen within a tick of its fix, not up to 16 ticks later behind a rival who was
# fixed later (a race is timed by these passes).
MAX_BACKOFF_TICKS = 16
BACKOFF_PER_CHECK_COST = 10
# An adapter over its budget gets SIGTERM and this long to hand in before it is killed.
BUDGET_STOP_GRACE_SECONDS = 10.0
# Each distinct reason an adapter's usage.json is rejected is noted, up to this many per agent.
MAX_USAGE_NOTES = 5
# The guest gets this long to come back from a host reboot even when the milestone's own timeout (its
# verifier's) is shorter, as in the original arenas (ARENAS §0: back within 120 s, then the verifier runs).
REBOOT_BACK_SECONDS = 120
CHARGED_FIELDS = ("resource_units", "input_tokens", "output_tokens", "cost_microusd")
# What fails under a check through nobody's play: libvirt (a closed client socket), SSH (a lost connection),
# the referee's own files (ENOSPC). The milestone fails as an arena fault, recorded with the error.
INFRASTRUCTURE_ERRORS = (OSError, asyncssh.Error, libvirt.libvirtError)
# A judging milestone's own verifier gets at least this long after its monitors were judged.
MIN_VERIFIER_SECONDS_AFTER_MONITORS = 5


class Referee:
    needs_build = True  # the conquest referee (engine.conquest) runs without [build]

    def __init__(
        self,
        manifest: Manifest,
        hosts: dict[str, TerritoryHost],
        recorder: MatchRecorder,
        verifiers: dict[str, Path],
        work_dir: Path,
    ) -> None:
        if manifest.build is None and self.needs_build:
            raise AoeError(
                f"arena {manifest.arena.id}: mode {manifest.arena.mode} has no [build]; only build races run"
            )
        self.manifest = manifest
        # A conquest has no [build]: an empty one, so nothing here ever finds a milestone to verify.
        self.build = manifest.build if manifest.build is not None else Build(completion_milestone="", milestones=[])
        self.hosts = hosts
        self.recorder = recorder
        self.clock: MatchClock = recorder.clock
        self.verifiers = verifiers
        self.layout = MatchLayout(Path(work_dir))
        self._evidence = EvidenceCopies(self.layout, failure_recorder(recorder, None, "evidence copies"))
        self.agents: dict[str, AgentHandle] = {}
        self.over = False
        self.finished = asyncio.Event()
        self.reboots: dict[str, list[int]] = {}
        self._busy: dict[str, asyncio.Task] = {}
        self._retries: dict[str, list[str]] = {t.id: [] for t in manifest.territories}
        self._charged: dict[str, Usage] = {}
        self._usage_notes: dict[str, list[str]] = {}
        self._reported: dict[str, Usage] = {}
        self._budget_stops: set[asyncio.Task] = set()
        self._recorded_agents: set[str] = set()
        self._unavailable: set[str] = set()
        self._failures_in_a_row: dict[tuple[str, str], int] = {}
        self._not_before_ms: dict[tuple[str, str], int] = {}
        # Continuous monitors ([[monitors]]): one per (territory, monitor), all timed by one lag meter; a
        # milestone whose monitor verdict is final (a failure list is never cleared) is not retried.
        self._monitors: dict[tuple[str, str], RunningMonitor] = {}
        # A calibrated monitor's check timeout for this match, by monitor id (engine.monitor_calibration).
        self.monitor_timeouts: dict[str, int] = {}
        self._lag = LoopLagMeter(on_done=failure_recorder(recorder, None, "monitor loop-lag meter"))
        self._final: set[tuple[str, str]] = set()
        # Pause waits for running checks (a reboot check can take minutes); a resume
        # arriving meanwhile must wait its turn or the pause would suspend guests after it.
        self._match_control = asyncio.Lock()

    @property
    def world(self):
        return self.recorder.world

    @property
    def duration_ms(self) -> int:
        return self.manifest.rules.duration_seconds * 1000

    # -- opening ---------------------------------------------------------------------------------

    def open_match(self, preflight_order: list[str]) -> None:
        """Start the clock and record the opening exactly like the fixtures: running, building, registered."""
        self.clock.start()
        self.recorder.emit(ev.MatchStateChanged(from_="preparing", to="running"))
        for territory_id in preflight_order:
            self.recorder.emit(
                ev.CompetitorStateChanged(
                    territory=territory_id, from_="preparing", to="building", reason="SSH preflight passed"
                )
            )
        for territory in self.manifest.territories:
            self.recorder.emit(
                ev.TerritoryRegistered(
                    territory=territory.id, class_=territory.class_, agent=self.manifest.agent_for(territory.id).id
                )
            )
        self._make_folders()

    def _make_folders(self) -> None:
        """Make the folders the verifications write into, and each territory's previous-evidence file, as the
        match opens (before any agent starts), so that no tick creates them: creating a file is the dearest
        thing a tick does (about 0.7 ms of CPU on this machine's ext4 without a journal, which passes over
        recently freed inodes when it allocates one; benchmarks/referee_overhead.py)."""
        for territory in self.manifest.territories:
            scratch = self.layout.territory(territory.id).verifier_scratch
            scratch.mkdir(parents=True, exist_ok=True)
            self._write_previous_evidence(territory.id, scratch)
            self.layout.evidence_directory(territory.id).mkdir(parents=True, exist_ok=True)

    def agent_started(self, handle: AgentHandle) -> None:
        spec = next(a for a in self.manifest.agents if a.id == handle.agent_id)
        self.agents[handle.agent_id] = handle
        self.recorder.emit(ev.AgentStarted(agent=spec.id, territory=spec.territory, model=spec.model))
        if handle.reaper is not None:
            handle.reaper.add_done_callback(failure_recorder(self.recorder, spec.territory, f"agent {spec.id} reaper"))

    # -- ticks -------------------------------------------------------------------------------------

    async def tick(self) -> None:
        """One referee tick: charge usage, record agents that handed in, finish on time, start evaluations."""
        if self.over or self.clock.paused:
            return
        self.charge_usage()
        self.record_exited_agents()
        if self.clock.elapsed_ms() >= self.duration_ms:
            await self.finish_on_timer()
            return
        for territory in self.manifest.territories:
            self._start_evaluation(territory.id)

    async def settle(self) -> None:
        """Wait for every running evaluation and its evidence copies (tests tick, then settle, for determinism)."""
        while self._busy or self._budget_stops:
            await asyncio.gather(*list(self._busy.values()), *self._budget_stops, return_exceptions=True)
        await self._evidence.written()

    def _start_evaluation(self, territory_id: str) -> None:
        if territory_id in self._busy or territory_id in self._unavailable:
            return
        if not self._retries[territory_id] and self._next_eligible(territory_id) is None:
            return
        task = asyncio.ensure_future(self._evaluate(territory_id))
        self._busy[territory_id] = task
        task.add_done_callback(lambda _task: self._busy.pop(territory_id, None))
        task.add_done_callback(failure_recorder(self.recorder, territory_id, "referee evaluation"))

    def _next_eligible(self, territory_id: str) -> Milestone | None:
        territory = self.world.territories.get(territory_id)
        if territory is None or territory.competitor_state in ("durable", "unavailable"):
            return None
        for milestone in self.build.milestones:
            state = territory.milestones.get(milestone.id)
            if state is not None and (state.passed or state.evaluating):
                continue
            if (
                self.world.is_milestone_paused(territory_id, milestone.id)
                or (territory_id, milestone.id) in self._final
            ):
                continue
            if self._not_before_ms.get((territory_id, milestone.id), 0) > self.clock.elapsed_ms():
                continue
            if all(self._passed(territory_id, dep) for dep in milestone.depends_on):
                return milestone
        return None

    def _passed(self, territory_id: str, milestone_id: str) -> bool:
        state = self.world.territories[territory_id].milestones.get(milestone_id)
        return state is not None and state.passed

    async def _evaluate(self, territory_id: str) -> None:
        while not self.over and not self.clock.paused:
            queued = self._retries[territory_id]
            milestone = self.manifest.milestone(queued.pop(0)) if queued else self._next_eligible(territory_id)
            if milestone is None or not await self._verify_milestone(territory_id, milestone):
                return

    # -- one milestone -----------------------------------------------------------------------------

    async def _verify_milestone(self, territory_id: str, milestone: Milestone) -> bool:
        territory = self.world.territories[territory_id]
        was_passed = territory.milestones.get(milestone.id) is not None and territory.milestones[milestone.id].passed
        if territory.competitor_state == "building":
            self.recorder.emit(
                ev.CompetitorStateChanged(
                    territory=territory_id, from_="building", to="verifying", reason="milestone verification began"
                )
            )
        self.recorder.emit(ev.MilestoneEvaluationStarted(territory=territory_id, milestone=milestone.id))
        started_ms = self.clock.elapsed_ms()
        try:
            outcome, category = await self._check(territory_id, milestone)
        except asyncio.CancelledError:
            self.recorder.emit(
                ev.MilestoneFailed(
                    territory=territory_id,
                    milestone=milestone.id,
                    category="cancelled",
                    detail=CANCELLED_DETAIL,
                    retryable=False,
                )
            )
            raise
        except TerritoryUnavailable as error:
            await self._arena_fault(territory_id, milestone, f"territory {territory_id}", str(error))
            return False
        except INFRASTRUCTURE_ERRORS as error:  # the hypervisor, SSH or the referee's disk failed under the check
            detail = f"{type(error).__name__}: {error}"
            await self._arena_fault(territory_id, milestone, f"territory {territory_id}", detail)
            return False
        if outcome.verdict == "broken":
            await self._arena_fault(territory_id, milestone, f"verifier {milestone.verifier}", outcome.detail or "")
            return False
        if not outcome.passed and not await (host := self.hosts[territory_id]).alive():
            await self._arena_fault(
                territory_id, milestone, f"territory {territory_id}", f"{await host.down_detail()} ({outcome.detail})"
            )
            return False
        self._note_outcome(territory_id, milestone.id, outcome.passed, started_ms)
        if outcome.passed:
            self._evidence.write(territory_id, milestone.id, outcome.evidence)
            self.recorder.emit(
                ev.MilestonePassed(
                    territory=territory_id, milestone=milestone.id, points=milestone.points, evidence=outcome.evidence
                )
            )
            self._start_monitors(territory_id, milestone.id)
            if milestone.id == self.build.completion_milestone and territory.durable_at_ms is None:
                await self._durable(territory_id)
            return True
        if was_passed:
            self.recorder.emit(
                ev.MilestoneRevoked(
                    territory=territory_id, milestone=milestone.id, reason=f"re-verification failed: {outcome.detail}"
                )
            )
        else:
            self.recorder.emit(
                ev.MilestoneFailed(
                    territory=territory_id,
                    milestone=milestone.id,
                    category=category,
                    detail=outcome.detail,
                    retryable=(territory_id, milestone.id) not in self._final,
                    **({"evidence": outcome.evidence} if outcome.evidence is not None else {}),
                )
            )
        return False

    def _note_outcome(self, territory_id: str, milestone_id: str, passed: bool, started_ms: int) -> None:
        key = (territory_id, milestone_id)
        if passed:
            self._failures_in_a_row.pop(key, None)
            self._not_before_ms.pop(key, None)
            return
        failures = self._failures_in_a_row[key] = self._failures_in_a_row.get(key, 0) + 1
        tick_ms = self.manifest.rules.tick_ms
        backoff_ms = min(2 ** max(failures - 2, 0), MAX_BACKOFF_TICKS) * tick_ms
        cost_ms = self.clock.elapsed_ms() - started_ms
        pause_ms = max(min(backoff_ms, BACKOFF_PER_CHECK_COST * cost_ms), tick_ms)
        self._not_before_ms[key] = started_ms + pause_ms - tick_ms // 2

    async def _check(self, territory_id: str, milestone: Milestone) -> tuple[VerifierOutcome, str]:
        host = self.hosts[territory_id]
        scratch = self.layout.territory(territory_id).verifier_scratch
        env = {
            "AOE_TERRITORY_ID": territory_id,
            "AOE_HOST": host.host,
            "AOE_SSH_PORT": str(host.ssh_port),
            "AOE_SERVICE_PORT": str(host.service_port),
            "AOE_PREVIOUS_EVIDENCE": str(self._write_previous_evidence(territory_id, scratch)),
            "AOE_VERIFY_LIB": str(VERIFIER_HELPERS),
            **host.access_env(),
        }
        evidence_file = scratch / f"{milestone.id}.evidence.json"
        script, timeout = self.verifiers[milestone.id], float(milestone.timeout_seconds)
        monitored: dict = {}
        if self.manifest.monitors_judged_by(milestone.id):
            began = time.monotonic()
            judged = await self._judge_monitors(territory_id, milestone)
            if isinstance(judged, VerifierOutcome):
                return judged, _category(judged)
            monitored = judged
            timeout = max(timeout - (time.monotonic() - began), MIN_VERIFIER_SECONDS_AFTER_MONITORS)
        if milestone.operation == "host_reboot":
            env["AOE_PREPARED_FILE"] = str(scratch / f"{milestone.id}.prepared.json")
            prepared = await run_verifier(script, {**env, "AOE_VERIFY_PHASE": "before_reboot"}, timeout, evidence_file)
            if not prepared.passed:
                return prepared, _category(prepared)
            self.reboots.setdefault(territory_id, []).append(self.clock.elapsed_ms())
            try:
                proof = await self.hosts[territory_id].reboot(max(timeout, REBOOT_BACK_SECONDS))
            except RebootFailed as error:
                return VerifierOutcome("failed", detail=f"host reboot: {error}"), "reboot_failed"
            proof_file = scratch / "reboot-proof.json"
            rewrite_in_place(proof_file, json.dumps(proof.to_json()))
            env.update(AOE_REBOOT_PROOF=str(proof_file), AOE_VERIFY_PHASE="after_reboot")
        outcome = await run_verifier(script, env, timeout, evidence_file)
        if monitored and outcome.passed:
            evidence = outcome.evidence if isinstance(outcome.evidence, dict) else {"verifier": outcome.evidence}
            outcome = VerifierOutcome("passed", evidence={**evidence, **monitored})
        elif monitored:  # the monitors passed, the verifier did not: their summaries still say what they saw
            outcome = VerifierOutcome(outcome.verdict, evidence=monitored, detail=outcome.detail)
        return outcome, _category(outcome)

    # -- continuous monitors -------------------------------------------------------------------------

    def _start_monitors(self, territory_id: str, milestone_id: str) -> None:
        """Start each monitor this milestone's pass starts (once per territory: a re-pass keeps the running one)."""
        host = self.hosts[territory_id]
        for spec in self.manifest.monitors_started_by(milestone_id):
            if (territory_id, spec.id) in self._monitors:
                continue
            if spec.id in self.monitor_timeouts:
                spec = spec.model_copy(update={"timeout_ms": self.monitor_timeouts[spec.id]})
            monitor = RunningMonitor(
                spec,
                f"http://{host.host}:{host.service_port}",
                self.clock,
                self._lag,
                on_cap=functools.partial(self._monitor_capped, territory_id),
            )
            self._monitors[(territory_id, spec.id)] = monitor
            monitor.start().add_done_callback(failure_recorder(self.recorder, territory_id, f"monitor {spec.id}"))
            self.recorder.emit(
                ev.MonitorStarted(
                    territory=territory_id,
                    monitor=spec.id,
                    milestone=milestone_id,
                    interval_ms=spec.interval_ms,
                    max_samples=spec.max_samples,
                )
            )

    def _monitor_capped(self, territory_id: str, monitor: RunningMonitor) -> None:
        self._monitor_stopped(territory_id, monitor, "cap")

    def _monitor_stopped(self, territory_id: str, monitor: RunningMonitor, reason: str) -> None:
        self.recorder.emit(
            ev.MonitorStopped(
                territory=territory_id, monitor=monitor.spec.id, reason=reason, summary=monitor.summary().model_dump()
            )
        )

    async def _judge_monitors(self, territory_id: str, milestone: Milestone) -> dict | VerifierOutcome:
        """Judge each monitor this milestone judges (engine.monitor.settle_and_judge); their summaries are the
        evidence, of the pass or of the failure, so a replay reaches the same verdict from them."""
        evidence: dict = {}
        for spec in self.manifest.monitors_judged_by(milestone.id):
            monitor = self._monitors.get((territory_id, spec.id))
            if monitor is None:
                return VerifierOutcome("broken", detail=f"monitor {spec.id} was never started by {spec.start_after}")
            judged = await settle_and_judge(spec, monitor, self.clock)
            if judged.stopped:
                self._monitor_stopped(territory_id, monitor, "judged")
            if not judged.verdict.passed:
                if judged.verdict.final:
                    self._final.add((territory_id, milestone.id))
                return VerifierOutcome(
                    "failed", detail=judged.verdict.detail, evidence={spec.id: judged.summary.model_dump()}
                )
            evidence[spec.id] = judged.summary.model_dump()
        return evidence

    async def _stop_monitors(self, reason: str) -> None:
        for (territory_id, _), monitor in self._monitors.items():
            if monitor.running:
                await monitor.stop(reason)
                self._monitor_stopped(territory_id, monitor, reason)

    def _write_previous_evidence(self, territory_id: str, scratch: Path) -> Path:
        milestones = self.world.territories[territory_id].milestones
        data = {mid: {"passed": m.passed, "evidence": m.evidence} for mid, m in milestones.items()}
        path = scratch / "previous-evidence.json"
        rewrite_in_place(path, json.dumps(data))
        return path

    async def _arena_fault(self, territory_id: str, milestone: Milestone, component: str, detail: str) -> None:
        self.recorder.emit(
            ev.InfrastructureFailure(component=component, source="arena", detail=detail, territory=territory_id)
        )
        self.recorder.emit(
            ev.MilestoneFailed(
                territory=territory_id,
                milestone=milestone.id,
                category="arena_fault",
                detail=f"arena fault, not counted against the player: {detail}",
                retryable=True,
            )
        )
        if not await self.hosts[territory_id].alive():
            self._unavailable.add(territory_id)
            self.recorder.emit(
                ev.CompetitorStateChanged(
                    territory=territory_id,
                    from_=self.world.territories[territory_id].competitor_state,
                    to="unavailable",
                    reason=detail,
                )
            )
            if len(self._unavailable) == len(self.hosts):
                await self.void(VOID_REASON)

    async def _durable(self, territory_id: str) -> None:
        current = self.world.territories[territory_id].competitor_state
        self.recorder.emit(
            ev.CompetitorStateChanged(
                territory=territory_id, from_=current, to="durable", reason="completion milestone passed"
            )
        )
        self.recorder.emit(ev.DurableDeploymentCompleted(territory=territory_id))
        if self.build.stop_on_first_durable:
            await self.finish(territory_id, DURABLE_REASON)

    # -- the end -----------------------------------------------------------------------------------

    async def finish(self, winner: str | None, reason: str) -> None:
        """End the match: freeze the clock, cancel other verifications, record the result."""
        await self._end("finished", winner, reason)

    async def void(self, reason: str) -> None:
        """End the match without a result: nobody was left to race, and through no player's doing (every
        territory lost to the arena's infrastructure). The state says `void` first, so the `match_finished`
        that follows keeps it and no standings count the match."""
        await self._end("void", None, reason)

    async def _end(self, state: ev.MatchState, winner: str | None, reason: str) -> None:
        if self.over:
            return
        self.over = True
        self.clock.freeze()
        current = asyncio.current_task()
        others = [task for task in self._busy.values() if task is not current]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        await self._stop_monitors("match_end")
        await self._evidence.written()
        self.charge_usage()
        # A finish never wrote a reason on its state change (the fixtures); a void says why on both.
        self.recorder.emit(
            ev.MatchStateChanged(from_=self.world.match_state, to=state, reason=reason if state == "void" else None)
        )
        self.recorder.emit(ev.MatchFinished(winner=winner, reason=reason))
        self.finished.set()

    async def finish_on_timer(self) -> None:
        await self.finish(self.timer_winner(), TIMER_REASON)

    def timer_winner(self) -> str | None:
        """The standings leader, or None on an exact tie at the top."""
        standings = self.world.standings()
        if not standings:
            return None
        if len(standings) > 1 and _rank(self.world, standings[0]) == _rank(self.world, standings[1]):
            return None
        return standings[0]

    async def abort(self, reason: str) -> None:
        """Record that the match was stopped from outside (Ctrl-C, a crash) — the log must say so."""
        if self.world.match_state == "aborted":
            return
        self.over = True
        self.clock.freeze()
        for task in list(self._busy.values()):
            task.cancel()
        await asyncio.gather(*list(self._busy.values()), return_exceptions=True)
        await self._stop_monitors("match_end")
        await self._evidence.written()
        self.recorder.emit(ev.MatchStateChanged(from_=self.world.match_state, to="aborted", reason=reason))
        self.finished.set()

    # -- agents ------------------------------------------------------------------------------------

    def charge_usage(self) -> None:
        """Turn each agent's cumulative usage.json into `usage_charged` deltas, then hold it to its budget.

        Each counter is charged from the highest value seen, so one that resets
        and grows again is never charged twice. An invalid checkpoint charges
        nothing (the last good one stands) and is noted as `usage_rejected`.
        """
        for agent_id, handle in self.agents.items():
            try:
                usage = handle.usage()
            except InvalidReport as error:
                self._note_rejected_usage(agent_id, str(error))
                continue
            if usage is None:
                continue
            if self.world.agents.get(agent_id, None) is not None and self.world.agents[agent_id].metered:
                self._note_reported_usage(agent_id, usage)
                continue
            self._charge(agent_id, usage)
            self._enforce_budget(handle)

    def charge_measured(self, agent_id: str, charge: Charge) -> None:
        """One model round the gateway measured: charged as the referee's own figure, then the budget held."""
        self.recorder.emit(
            ev.UsageCharged(
                agent=agent_id,
                resource_units=charge.rounds,
                input_tokens=charge.input_tokens,
                output_tokens=charge.output_tokens,
                cost_microusd=charge.cost_microusd,
                measured_by="referee",
            )
        )
        if (handle := self.agents.get(agent_id)) is not None:
            self._enforce_budget(handle)

    def budget_refusal(self, agent_id: str, rounds_in_flight: int) -> str | None:
        """Why the gateway must refuse `agent_id` another model round: its budget is spent (one owner: the referee)."""
        spec = next((a for a in self.manifest.agents if a.id == agent_id), None)
        state = self.world.agents.get(agent_id)
        if spec is None or self.over:
            return "the match is over" if spec is not None else f"no agent {agent_id} in this match"
        if agent_id in self._recorded_agents:
            return "this agent's run is over"
        return _budget_spent(spec.budget, state, rounds_in_flight) if state is not None else None

    def budget_spent(self, agent_id: str, reason: str) -> None:
        """The gateway refused a round over budget: the agent ends `budget exceeded` (the player's), and stops."""
        handle = self.agents.get(agent_id)
        if handle is None or agent_id in self._recorded_agents:
            return
        self._stop_for_budget(handle, reason)

    def gateway_failed(self, agent_id: str, detail: str) -> None:
        """The referee's own gateway failed on a request of `agent_id`: the arena's failure, in the log."""
        spec = next((a for a in self.manifest.agents if a.id == agent_id), None)
        self.recorder.emit(
            ev.InfrastructureFailure(
                component="gateway", source="arena", detail=detail, territory=spec.territory if spec else None
            )
        )

    def _note_reported_usage(self, agent_id: str, usage: Usage) -> None:
        """A metered agent's own usage.json: recorded (when it changed) as its secondary figure, never charged."""
        if self._reported.get(agent_id) == usage:
            return
        self._reported[agent_id] = usage
        self.recorder.emit(
            ev.UsageReported(agent=agent_id, **{field: getattr(usage, field) for field in CHARGED_FIELDS})
        )

    def _charge(self, agent_id: str, usage: Usage) -> None:
        high = self._charged.get(agent_id, Usage())

        def grown(field: str) -> int | None:
            now, was = getattr(usage, field), getattr(high, field)
            return None if now is None else max(now - (was or 0), 0)

        charge = ev.UsageCharged(
            agent=agent_id,
            resource_units=grown("resource_units"),
            input_tokens=grown("input_tokens"),
            output_tokens=grown("output_tokens"),
            cost_microusd=grown("cost_microusd"),
        )
        if any(getattr(charge, field) for field in CHARGED_FIELDS):
            self.recorder.emit(charge)
        self._charged[agent_id] = high.model_copy(
            update={
                field: max(getattr(usage, field), getattr(high, field) or 0)
                for field in CHARGED_FIELDS
                if getattr(usage, field) is not None
            }
        )

    def _note_rejected_usage(self, agent_id: str, detail: str) -> None:
        notes = self._usage_notes.setdefault(agent_id, [])
        if detail not in notes and len(notes) < MAX_USAGE_NOTES:
            notes.append(detail)
            self.recorder.emit(ev.UsageRejected(agent=agent_id, detail=detail))

    def _enforce_budget(self, handle: AgentHandle) -> None:
        """The referee holds every agent to its manifest budget itself, whatever its harness does."""
        if handle.agent_id in self._recorded_agents:
            return
        spec = next(a for a in self.manifest.agents if a.id == handle.agent_id)
        state = self.world.agents.get(handle.agent_id)
        overrun = _budget_overrun(spec.budget, state) if state is not None else None
        if overrun is None:
            return
        self._stop_for_budget(handle, overrun)

    def _stop_for_budget(self, handle: AgentHandle, why: str) -> None:
        self.record_agent_outcome(
            handle,
            ev.AgentFinished(
                agent=handle.agent_id,
                source="player",
                success=False,
                detail=f"budget exceeded: {why}; stopped by the referee",
            ),
        )
        task = asyncio.ensure_future(self._stop_over_budget(handle))
        self._budget_stops.add(task)
        task.add_done_callback(self._budget_stops.discard)
        task.add_done_callback(failure_recorder(self.recorder, handle.territory_id, "agent budget stop"))

    async def _stop_over_budget(self, handle: AgentHandle) -> None:
        if handle.exited:
            return
        await handle.request_stop()
        if not await handle.wait(BUDGET_STOP_GRACE_SECONDS):
            await handle.kill()

    def record_exited_agents(self) -> None:
        for agent_id, handle in self.agents.items():
            if agent_id not in self._recorded_agents and handle.exited:
                self.record_agent_outcome(handle)

    def record_agent_outcome(self, handle: AgentHandle, outcome: AgentOutcome | None = None) -> None:
        """Record the one terminal event of an agent (classified from its result unless given)."""
        if handle.agent_id in self._recorded_agents:
            return
        self._recorded_agents.add(handle.agent_id)
        if outcome is None:
            outcome = classify_exit(handle, rebooted=bool(self.reboots.get(handle.territory_id)))
        self.recorder.emit(outcome)

    def outraced_reason(self, winner: str) -> str:
        """Why an agent still at work when `winner` won lost (the drain's `agent_outraced`)."""
        return f"{winner} reached a durable deployment first"

    def unrecorded_agents(self) -> list[AgentHandle]:
        return [h for a, h in self.agents.items() if a not in self._recorded_agents]

    # -- operator controls -------------------------------------------------------------------------

    def _require_running(self) -> None:
        if self.over:
            raise AoeError(f"match is {self.world.match_state}; operator controls only act on a running match")

    def _require_territory(self, territory_id: str | None) -> None:
        if territory_id is not None and territory_id not in self.hosts:
            raise AoeError(f"no territory {territory_id!r} in this match (territories: {', '.join(self.hosts)})")

    def _require_milestone(self, milestone_id: str) -> None:
        if milestone_id not in {m.id for m in self.build.milestones}:
            raise AoeError(
                f"no milestone {milestone_id!r} in arena {self.manifest.arena.id} "
                f"(milestones: {', '.join(m.id for m in self.build.milestones)})"
            )

    async def pause_match(self, reason: str | None = None) -> bool:
        """Freeze the clock, stop new evaluations, suspend guests and agents. False if already paused."""
        async with self._match_control:
            self._require_running()
            if self.clock.paused:
                return False
            self.clock.pause()
            self.recorder.emit(ev.MatchPaused(reason=reason))
            for handle in self.agents.values():
                await handle.suspend()
            await self.settle()
            for host in self.hosts.values():
                await host.suspend()
            return True

    async def resume_match(self) -> bool:
        """Waits for a pause that is still settling, so no guest is suspended after the resume."""
        async with self._match_control:
            self._require_running()
            if not self.clock.paused:
                return False
            for host in self.hosts.values():
                await host.resume()
            for handle in self.agents.values():
                await handle.resume()
            paused_ms = self.clock.resume()
            self.recorder.emit(ev.MatchResumed(paused_ms=paused_ms))
            return True

    def pause_milestone(self, milestone_id: str, territory_id: str | None = None) -> bool:
        """Stop evaluating one milestone for one territory (or all, with None). False if already paused."""
        self._require_running()
        self._require_milestone(milestone_id)
        self._require_territory(territory_id)
        if self.world.is_milestone_paused(territory_id, milestone_id):
            return False
        self.recorder.emit(ev.MilestonePaused(territory=territory_id, milestone=milestone_id))
        return True

    def resume_milestone(self, milestone_id: str, territory_id: str | None = None) -> bool:
        self._require_running()
        self._require_milestone(milestone_id)
        self._require_territory(territory_id)
        if not self.world.pauses_lifted_by(territory_id, milestone_id):
            return False
        self.recorder.emit(ev.MilestoneResumed(territory=territory_id, milestone=milestone_id))
        return True

    def retry_milestone(self, territory_id: str, milestone_id: str) -> None:
        """Verify a milestone again now (a failed re-verification of a passed one revokes it)."""
        self._require_running()
        self._require_territory(territory_id)
        self._require_milestone(milestone_id)
        if territory_id in self._unavailable:
            raise AoeError(f"territory {territory_id} is unavailable; nothing to retry against")
        missing = [d for d in self.manifest.milestone(milestone_id).depends_on if not self._passed(territory_id, d)]
        if missing:
            raise AoeError(f"{territory_id}/{milestone_id} depends on {', '.join(missing)}, which has not passed yet")
        self.recorder.emit(ev.MilestoneRetryRequested(territory=territory_id, milestone=milestone_id))
        if milestone_id not in self._retries[territory_id]:
            self._retries[territory_id].append(milestone_id)
        if not self.clock.paused:
            self._start_evaluation(territory_id)


def _budget_spent(budget: Budget, used: AgentState, rounds_in_flight: int) -> str | None:
    """What of the budget is used up before one more round (counting those already under way), or None."""
    rounds = used.resource_units_used + rounds_in_flight
    if budget.resource_units is not None and rounds >= budget.resource_units:
        return f"budget spent: {rounds} of {budget.resource_units} model rounds used or under way"
    if budget.max_cost_microusd is not None and used.cost_known and used.cost_microusd >= budget.max_cost_microusd:
        return f"budget spent: cost {used.cost_microusd} µUSD of {budget.max_cost_microusd} µUSD"
    tokens = used.input_tokens + used.output_tokens
    if budget.max_tokens is not None and used.tokens_known and tokens >= budget.max_tokens:
        return f"budget spent: {tokens} tokens of {budget.max_tokens}"
    return None


def _budget_overrun(budget: Budget, used: AgentState) -> str | None:
    """What the agent has spent beyond its budget, or None while it is within it."""
    if budget.resource_units is not None and used.resource_units_used > budget.resource_units:
        return f"{used.resource_units_used} resource units used of {budget.resource_units}"
    if budget.max_cost_microusd is not None and used.cost_known and used.cost_microusd > budget.max_cost_microusd:
        return f"cost {used.cost_microusd} µUSD, limit {budget.max_cost_microusd} µUSD"
    tokens = used.input_tokens + used.output_tokens
    if budget.max_tokens is not None and used.tokens_known and tokens > budget.max_tokens:
        return f"{tokens} tokens used of {budget.max_tokens}"
    return None


def _category(outcome: VerifierOutcome) -> str:
    return "timeout" if outcome.verdict == "timeout" else "verification_failed"


def _rank(world, territory_id: str) -> tuple:
    territory = world.territories[territory_id]
    return (territory.durable_at_ms, territory.milestone_points, sum(m.passed for m in territory.milestones.values()))
