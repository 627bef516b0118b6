"""A whole match, start to finish: the engine the CLI and the TUI both run.

`MatchRunner.run()` is a plain coroutine, so it runs on whoever's loop (a
Textual worker, `asyncio.run` in the CLI). Everything it does is reported
through `subscribe()`/`queue()`: setup progress first, then every event.
Operator controls are methods on the runner and act on the live referee.

Whatever happens — a failed boot, a crashed territory, Ctrl-C (task
cancellation) — the log ends in a final state (`aborted` unless the match
finished), agents are stopped, territories are torn down and `world.json`
is written.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from aoe_tui.domain import events as ev
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.world import World
from aoe_tui.engine.clock import MatchClock, MonotonicSource
from aoe_tui.engine.conquest import ConquestPreflightFailed, ConquestReferee
from aoe_tui.engine.drain import drain_agents
from aoe_tui.engine.fog import audit
from aoe_tui.engine.match_dir import MatchDirectory
from aoe_tui.engine.model_gateway import MatchGateway
from aoe_tui.engine.model_providers import provider_problems
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.provider import AgentLauncher, TerritoryProvider, WatchedInfrastructure
from aoe_tui.engine.monitor_calibration import calibrate_monitors
from aoe_tui.engine.provisioning import ArenaSetupFailed, load_bundle, provision
from aoe_tui.engine.recorder import MatchRecorder, MatchUpdate, Subscriber
from aoe_tui.engine.referee import Referee
from aoe_tui.engine.stop_signals import Stoppable
from aoe_tui.store.event_log import LogWriteFailed
from aoe_tui.store.manifest_file import load_manifest, resolve_verifier

INTERRUPTED_REASON = "interrupted by the operator"


class MatchAborted(AoeError):
    """The match failed on something of its own (a file system, a guest's connection, a bug) and was aborted
    naming it: the record says why, so the operator gets that one line rather than a traceback."""


class InfrastructureLost(AoeError):
    """The hardware under a running match went away (its host dropped): recorded as the arena's failure."""


class MatchRunner(Stoppable):
    def __init__(
        self,
        manifest_path: Path,
        output: Path,
        provider: TerritoryProvider,
        launcher: AgentLauncher,
        source: MonotonicSource | None = None,
        drain_seconds: float | None = None,
        manifest: Manifest | None = None,
    ) -> None:
        self.manifest_path = Path(manifest_path)
        # A series passes the round's seat-rotated manifest; verifiers and the brief still come from manifest_path.
        self.manifest: Manifest = manifest if manifest is not None else load_manifest(self.manifest_path)
        if self.manifest.build is None and self.manifest.arena.mode != "conquest":
            raise AoeError(f"{manifest_path}: arena mode {self.manifest.arena.mode} cannot be run here (no [build])")
        if problems := provider_problems(
            self.manifest, arena_dir=self.manifest_path.parent
        ):  # before anything is written or booted
            raise AoeError(problems[0])
        self.match_dir = MatchDirectory(output)
        self.provider = provider
        if isinstance(provider, WatchedInfrastructure):
            provider.on_infrastructure_lost = self.infrastructure_lost
        self.launcher = launcher
        self.clock = MatchClock(source)
        self.drain_seconds = self.manifest.rules.post_match_drain_seconds if drain_seconds is None else drain_seconds
        self._pending_subscribers: list[Subscriber] = []
        self.recorder: MatchRecorder | None = None
        self.referee: Referee | None = None
        self.gateway: MatchGateway | None = None
        self._lost: tuple[str, str] | None = None
        self._monitor_timeouts: dict[str, int] = {}  # calibrated on the guests before any agent acts

    # -- observation -------------------------------------------------------------------------------

    def subscribe(self, subscriber: Subscriber) -> None:
        """Receive every progress update and event from now on (call before `run()` to see them all)."""
        if self.recorder is not None:
            self.recorder.subscribe(subscriber)
        else:
            self._pending_subscribers.append(subscriber)

    def queue(self) -> asyncio.Queue[MatchUpdate]:
        updates: asyncio.Queue[MatchUpdate] = asyncio.Queue()
        self.subscribe(updates.put_nowait)
        return updates

    @property
    def world(self) -> World:
        return self.recorder.world if self.recorder is not None else World()

    # -- the match ---------------------------------------------------------------------------------

    async def run(self) -> World:
        self._task = asyncio.current_task()
        self.match_dir.prepare(self.manifest, provenance(self.manifest, self.manifest_path))
        self.recorder = MatchRecorder(self.clock, self.match_dir.events)
        self.recorder.on_log_failure = self._log_failed
        for subscriber in self._pending_subscribers:
            self.recorder.subscribe(subscriber)
        try:
            await self._play()
        except BaseException as error:  # Ctrl-C arrives as CancelledError; the log must still end
            if (failure := self.recorder.log_failure) is not None:  # it cannot: stop everything, say why once
                if isinstance(error, asyncio.CancelledError):
                    self._take_back_cancel()
                with contextlib.suppress(LogWriteFailed):
                    await self._abort(str(failure))  # stops the referee's work; its event is refused, never retried
                raise failure from None
            if self._lost is not None and isinstance(error, asyncio.CancelledError):
                self._take_back_cancel()
                component, detail = self._lost
                self.recorder.emit(ev.InfrastructureFailure(component=component, source="arena", detail=detail))
                await self._abort(detail)
                raise InfrastructureLost(detail) from None
            stopped = isinstance(error, (asyncio.CancelledError, KeyboardInterrupt))
            reason = (self.stop_reason or INTERRUPTED_REASON) if stopped else f"{type(error).__name__}: {error}"
            await self._abort(reason)
            if stopped or isinstance(error, AoeError) or not isinstance(error, Exception):
                raise
            raise MatchAborted(f"match aborted: {reason}") from error  # recorded: one line, not a traceback
        finally:
            await self._teardown()
        return self.recorder.world

    async def _play(self) -> None:
        assert self.recorder is not None
        self.gateway = gateway = MatchGateway(self.manifest, self.match_dir, self.clock)
        await gateway.start()  # a provider missing for an agent refuses the match before any guest boots
        self.recorder.progress("match", f"booting {len(self.manifest.territories)} territories")
        hosts, ready_order = await self.provider.boot(self.manifest, self.match_dir, self.recorder, self.clock)
        await self._prepare_guests(hosts)
        self.referee = referee = self._referee(hosts)
        referee.monitor_timeouts = self._monitor_timeouts
        gateway.attach(referee)
        if isinstance(referee, ConquestReferee):
            await self._conquest_preflight(referee)
        referee.open_match(ready_order)
        for agent in self.manifest.agents:
            host = hosts[agent.territory]
            self.match_dir.write_instruction(self.manifest, self.manifest_path, agent, host.host, host.ssh_port)
            files = self.match_dir.agent_files(agent.id)
            handle = await self.launcher.start(
                agent, files, host, self.clock, self.manifest_path.resolve().parent, gateway.access(agent.id)
            )
            self.recorder.progress("agent", f"started adapter {agent.adapter}", agent.territory)
            referee.agent_started(handle)
        await self._tick_until_over(referee)
        self.recorder.progress("match", f"post-match drain (up to {self.drain_seconds:g} s)")
        await drain_agents(referee, self.drain_seconds)

    async def _prepare_guests(self, hosts: dict) -> None:
        """Provision the guests, run the fog-of-war leak audit, then calibrate the monitors' timeouts: all before
        any agent or agent event.

        A failure is the arena's: it is recorded as an `infrastructure_failure` naming the territory
        and the match is aborted with that detail."""
        assert self.recorder is not None
        bundle = load_bundle(self.manifest, self.manifest_path)
        fog = self.manifest.fog_of_war
        leak = fog.guest_leak_audit if fog is not None else None
        try:
            if bundle is not None:
                self.recorder.progress("match", f"provisioning {len(hosts)} guests")
                await provision(hosts, bundle)
            if leak is not None:
                self.recorder.progress("match", f"fog-of-war leak audit of {len(hosts)} guests")
                await audit(hosts, leak)
            if any(m.calibration is not None for m in self.manifest.monitors or []):
                self.recorder.progress("match", f"calibrating the monitors' timeouts on {len(hosts)} guests")
                calibration = await calibrate_monitors(self.manifest, hosts, self.clock)
                self.match_dir.add_provenance(
                    {"monitor_calibration": {name: record.model_dump() for name, record in calibration.items()}}
                )
                self._monitor_timeouts = {name: record.timeout_ms for name, record in calibration.items()}
        except ArenaSetupFailed as error:
            self.recorder.emit(
                ev.InfrastructureFailure(
                    component=error.component, source="arena", detail=error.detail, territory=error.territory_id
                )
            )
            await self._abort(error.detail)
            raise AoeError(error.detail) from None

    def _referee(self, hosts: dict) -> Referee:
        assert self.recorder is not None
        if self.manifest.build is None:
            return ConquestReferee(self.manifest, hosts, self.recorder, self.match_dir.root)
        verifiers = {m.id: resolve_verifier(self.manifest_path, m.verifier) for m in self.manifest.build.milestones}
        return Referee(self.manifest, hosts, self.recorder, verifiers, self.match_dir.root)

    async def _conquest_preflight(self, referee: ConquestReferee) -> None:
        """All health probes healthy within 120 s, else no match: recorded as the arena's failure, then aborted."""
        assert self.recorder is not None
        self.recorder.progress("match", f"health preflight of {len(referee.ids)} territories")
        try:
            await referee.preflight()
        except ConquestPreflightFailed as error:
            self.recorder.emit(ev.InfrastructureFailure(component="preflight", source="arena", detail=str(error)))
            await self._abort(str(error))
            raise AoeError(str(error)) from None

    async def _tick_until_over(self, referee: Referee) -> None:
        tick_ms = self.manifest.rules.tick_ms
        next_tick_ms = tick_ms
        while not referee.over:
            wait_ms = tick_ms if self.clock.paused else max(next_tick_ms - self.clock.elapsed_ms(), 0)
            await self._sleep_or_finish(referee, wait_ms / 1000)
            if referee.over or self.clock.paused or self.clock.elapsed_ms() < next_tick_ms:
                continue
            await referee.tick()
            if self.clock.source.virtual:
                await referee.settle()
            next_tick_ms = (self.clock.elapsed_ms() // tick_ms + 1) * tick_ms

    async def _sleep_or_finish(self, referee: Referee, seconds: float) -> None:
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        finished = asyncio.ensure_future(referee.finished.wait())
        try:
            await asyncio.wait([sleeper, finished], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sleeper, finished):
                task.cancel()

    async def _abort(self, reason: str) -> None:
        assert self.recorder is not None
        if self.referee is not None:
            if self.referee.world.match_state not in ev.FINAL_MATCH_STATES:
                await self.referee.abort(reason)
        elif self.recorder.world.match_state != "aborted":
            self.recorder.emit(ev.MatchStateChanged(from_=self.recorder.world.match_state, to="aborted", reason=reason))

    async def _teardown(self) -> None:
        assert self.recorder is not None
        try:
            if self.referee is not None:
                for handle in self.referee.agents.values():
                    if not handle.exited:
                        await handle.kill()
            if self.gateway is not None:
                await asyncio.shield(self.gateway.close())
            self.recorder.progress("teardown", "destroying territories")
            await asyncio.shield(self.provider.teardown())
        finally:
            try:
                if self.recorder.log_failure is None:  # else the log, a valid prefix, is the whole record
                    self.match_dir.write_world(self.recorder.world.to_json())
            except OSError as error:  # world.json is the log's fold: `aoe replay` folds the log without it
                self.recorder.progress("teardown", f"world.json not written ({error.strerror}); the event log stands")
            finally:
                self.recorder.close()

    def _log_failed(self, failure: LogWriteFailed) -> None:
        """The event log's file system refused a write, maybe in a referee task: the match stops (`run` raises it)."""
        if self._task is not None and not self._task.done() and self._task is not asyncio.current_task():
            self._task.cancel()

    def infrastructure_lost(self, component: str, detail: str) -> bool:
        """Stop the match because what it runs on failed (a host dropped): never a player's fault.

        The log gets an `infrastructure_failure` (source arena) and `aborted`, and `run()` raises
        `InfrastructureLost`, so a series plays the round again elsewhere. False when the match is not running
        or is already being stopped."""
        if self._lost is not None or self.stop_reason is not None or self._task is None or self._task.done():
            return False
        self._lost = (component, detail)
        self._task.cancel()
        return True

    # -- operator controls (each one is an event) ----------------------------------------------------

    def _live(self) -> Referee:
        if self.referee is None:
            raise AoeError("the match has not started yet; operator controls act on a running match")
        return self.referee

    async def pause_match(self, reason: str | None = None) -> bool:
        return await self._live().pause_match(reason)

    async def resume_match(self) -> bool:
        return await self._live().resume_match()

    def pause_milestone(self, milestone: str, territory: str | None = None) -> bool:
        return self._live().pause_milestone(milestone, territory)

    def resume_milestone(self, milestone: str, territory: str | None = None) -> bool:
        return self._live().resume_milestone(milestone, territory)

    def retry_milestone(self, territory: str, milestone: str) -> None:
        self._live().retry_milestone(territory, milestone)
