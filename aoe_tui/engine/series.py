"""A seat-rotated series: one manifest raced round after round, unattended and resumable.

Each round is an ordinary match, run by a `MatchRunner` the caller's factory
builds (libvirt guests for `aoe series`, scripted territories in the tests),
into `round-NNN/` with the round's seat-rotated manifest as its `arena.json`.
`series.json` is replaced atomically after every decided round, so a crash,
`kill -9` or a signal never leaves a broken checkpoint; re-running resumes:
decided rounds are kept, a round left behind is kept as
`round-NNN.interrupted-N` and run again.

Unattended means a round is not wasted on a failure that is nobody's play: a
round in which an agent was unavailable for reasons not its own is set aside
as `round-NNN.unavailable-N` and replayed (`replays` times, default once); if
the agent is still unavailable the round stands and its seat forfeits (a
forfeit never counts as a loss, see `analysis.standings`). A round that
cannot be played at all (guests fail to boot) is set aside as
`round-NNN.failed-N` and retried the same way.

With a host pool (`--hosts`), rounds run at once, as many as the hosts' free
capacity takes, each whole match on one host (`engine.placement`); they may end
out of order, so `series.json` lists the decided rounds by number and
`rounds_completed` counts them, and a resumed run plays exactly the rounds it
does not list. A round whose host drops mid-match is nobody's play: it is set
aside as `round-NNN.host-lost-N` (its log ends with the infrastructure failure),
the host is out for the rest of the run, and the round is queued again for the
other hosts, without using up a replay.

Whoever shows the series (the app) subscribes: it hears each round attempt
begin (with its runner, before the match starts, so nothing of it is missed)
and end (once its folder is recorded or set aside).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.agents.protocol import write_json_atomic
from aoe_tui.analysis.standings import (
    series_seats,
    series_standings,
    unavailable_agents,
)
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.world import World
from aoe_tui.domain.hosts import Capacity
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.engine.placement import match_need
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.stop_signals import Stoppable
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.series_files import (
    SERIES_FILE,
    SERIES_SCHEMA,
    read_checkpoint,
    round_dirs,
    round_name,
    set_aside_name,
)
from aoe_tui.store.series_source import SeriesSource, series_folder

DEFAULT_REPLAYS = 1


@dataclass(frozen=True)
class RoundPlan:
    """What the factory needs to build one attempt of one round."""

    number: int
    attempt: int  # 1 = the first try; 2, 3, ... = replays
    manifest: Manifest  # seat-rotated
    output: Path
    host: str | None = None  # the pool's host that runs it (None: this machine, no `--hosts`)


RunnerFactory = Callable[[RoundPlan], MatchRunner]
Report = Callable[[str], None]


@dataclass(frozen=True)
class RoundStarted:
    """An attempt of a round is about to run: `runner` has not started yet."""

    plan: RoundPlan
    runner: MatchRunner


@dataclass(frozen=True)
class RoundEnded:
    """An attempt of a round is over and settled: recorded in `series.json`, or set aside to be played again."""

    plan: RoundPlan


SeriesUpdate = RoundStarted | RoundEnded
SeriesListener = Callable[[SeriesUpdate], None]


class SeriesStopped(Exception):
    """The series was stopped from outside (a signal); `series.json` holds every decided round."""


def rotate(manifest: Manifest, round_number: int) -> Manifest:
    """Round r seats every agent r-1 territories further along the manifest's order (round 1 = as written)."""
    order = [t.id for t in manifest.territories]
    shift = round_number - 1
    agents = [
        {
            **a.model_dump(mode="json", by_alias=True),
            "territory": order[(order.index(a.territory) + shift) % len(order)],
        }
        for a in manifest.agents
    ]
    return Manifest.model_validate({**manifest.to_json(), "agents": agents})


def seats_of(manifest: Manifest) -> dict[str, str]:
    """agent -> territory, by agent id."""
    return {a.id: a.territory for a in sorted(manifest.agents, key=lambda a: a.id)}


def compatibility_key_of(manifest: Manifest, manifest_path: Path) -> str:
    return provenance(manifest, manifest_path)["compatibility_key"]


class SeriesRunner(Stoppable):
    def __init__(
        self,
        manifest_path: Path,
        output: Path,
        make_runner: RunnerFactory,
        rounds: int | None = None,
        fresh: bool = False,
        replays: int = DEFAULT_REPLAYS,
        report: Report = print,
        wall_clock: Callable[[], float] = time.monotonic,
        pool: HostPool | None = None,
    ) -> None:
        if rounds is not None and rounds < 1:
            raise AoeError(f"--rounds {rounds}: must be 1 or more")
        if replays < 0:
            raise AoeError(f"--replays {replays}: must be 0 or more")
        self.manifest_path = Path(manifest_path)
        self.manifest = load_manifest(self.manifest_path)
        self.output = Path(output)
        self.make_runner = make_runner
        self.rounds = rounds
        self.fresh = fresh
        self.replays = replays
        self.report = report
        self.wall_clock = wall_clock
        self.pool = pool
        self.key = compatibility_key_of(self.manifest, self.manifest_path)
        self.checkpoint: dict[str, Any] = {}
        self.current: MatchRunner | None = None
        self._round_seconds: list[float] = []
        self._started_at = 0.0
        self._listeners: list[SeriesListener] = []
        self._running: dict[int, tuple[RoundPlan, MatchRunner]] = {}  # the rounds in flight (several with a pool)
        self._host_failures: dict[int, list[dict[str, str]]] = {}

    @property
    def path(self) -> Path:
        return self.output / SERIES_FILE

    def subscribe(self, listener: SeriesListener) -> None:
        """Hear every round attempt begin and end from now on (call before `run()` to hear them all)."""
        self._listeners.append(listener)

    def _publish(self, update: SeriesUpdate) -> None:
        for listener in self._listeners:
            listener(update)

    # -- what is left ----------------------------------------------------------------------------------

    def undecided(self) -> list[int]:
        """The round numbers `series.json` does not list yet, in order."""
        decided = {entry["round"] for entry in self.checkpoint["rounds"]}
        return [n for n in range(1, self.checkpoint["rounds_requested"] + 1) if n not in decided]

    def in_flight(self) -> dict[int, str | None]:
        """The rounds whose match is under way, each with the host that runs it (None: this machine)."""
        return {number: plan.host for number, (plan, _) in sorted(self._running.items())}

    def upcoming(self) -> list[tuple[int, dict[str, str]]]:
        """The rounds not decided yet, in the order they will be played, each with its seats."""
        return [(number, seats_of(rotate(self.manifest, number))) for number in self.undecided()]

    def seconds_left(self) -> float | None:
        """The wall time the undecided rounds should take at this run's mean per round (None before the first)."""
        if not self._round_seconds:
            return None
        mean = sum(self._round_seconds) / len(self._round_seconds)
        return (self.checkpoint["rounds_requested"] - self.checkpoint["rounds_completed"]) * mean

    # -- the series ----------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        """Play every round not yet decided; returns the final `series.json`. Raises `SeriesStopped` when stopped."""
        self._task = asyncio.current_task()
        self._started_at = self.wall_clock()
        if not self.checkpoint:
            self.open()
        try:
            if self.pool is None:
                for number in self.undecided():
                    await self._play_round(number)
            else:
                await self._play_on_pool(self.pool)
        except asyncio.CancelledError:
            if self.stop_reason is None:
                raise
            self._take_back_cancel()
            self._set_aside_leftovers()
            self.report(
                f"series stopped ({self.stop_reason}): {self.checkpoint['rounds_completed']}/"
                f"{self.checkpoint['rounds_requested']} rounds decided; run the same command to resume"
            )
            raise SeriesStopped(self.stop_reason) from None
        self.report(f"series complete: {self.checkpoint['rounds_completed']} rounds; {self.path}")
        return self.checkpoint

    def open(self) -> None:
        """Start a new checkpoint or resume a compatible one; set aside whatever an interrupted run left.

        `run()` opens the series itself; the app opens it first, so a folder that cannot be resumed is one
        line on the terminal before any screen is drawn."""
        existing = read_checkpoint(self.path, SERIES_SCHEMA) if self.path.exists() else None
        if existing is not None and self.fresh:
            kept = set_aside_name(self.output, "previous")
            os.replace(self.output, kept)
            self.report(f"--fresh: the earlier series is kept as {kept}")
            existing = None
        elif existing is not None and existing.get("compatibility_key") != self.key:
            raise AoeError(
                f"{self.path}: cannot resume, the contest changed since this series began (compatibility key "
                f"{str(existing.get('compatibility_key'))[:12]}… is now {self.key[:12]}…: rules, milestones, "
                f"territories, brief or verifier scripts differ); rerun with --fresh to start a new series "
                f"(this one is kept) or choose another --output"
            )
        if existing is None and self.output.exists() and any(self.output.iterdir()):
            raise AoeError(f"{self.output}: exists and holds no {SERIES_FILE}; choose another --output")
        if existing is None:
            self.checkpoint = {
                "schema_version": SERIES_SCHEMA,
                "arena_id": self.manifest.arena.id,
                "rounds_requested": self.rounds or len(self.manifest.territories),
                "rounds_completed": 0,
                "rounds": [],
                "standings": [],
                "compatibility_key": self.key,
                "manifest": str(self.manifest_path),
            }
            self.output.mkdir(parents=True, exist_ok=True)
            self._save()
            self.report(
                f"series {self.manifest.arena.id}: {self.checkpoint['rounds_requested']} rounds with seat "
                f"rotation into {self.output}"
            )
            return
        self.checkpoint = existing
        if self.rounds is not None:
            if self.rounds < existing["rounds_completed"]:
                raise AoeError(
                    f"--rounds {self.rounds}: {existing['rounds_completed']} rounds are already decided "
                    f"in {self.output}"
                )
            self.checkpoint["rounds_requested"] = self.rounds
        self._set_aside_leftovers()
        self.report(
            f"resuming series {existing['arena_id']} in {self.output}: {existing['rounds_completed']}/"
            f"{self.checkpoint['rounds_requested']} rounds already decided (kept)"
        )

    def _set_aside_leftovers(self) -> None:
        """A round folder without its checkpoint entry was interrupted: keep it as `round-NNN.interrupted-N`."""
        decided = {entry["round"] for entry in self.checkpoint["rounds"]}
        for number, folder in round_dirs(self.output):
            if number not in decided:
                kept = set_aside_name(folder, "interrupted")
                os.replace(folder, kept)
                self.report(f"round {number}: the interrupted attempt is kept as {kept.name}; it will be run again")

    def request_stop(self, reason: str) -> bool:
        """With a pool several rounds run at once: the series' own task is stopped, and hands it to each."""
        if self.pool is None:
            return super().request_stop(reason)
        if self.stop_reason is not None or self._task is None or self._task.done():
            return False
        self.stop_reason = reason
        self._task.cancel()
        return True

    async def _play_on_pool(self, pool: HostPool) -> None:
        """Preflight the hosts, play every undecided round over them, let go of the hosts."""
        try:
            await pool.open(self.manifest)
            await self._play_spread(self.undecided(), pool)
        finally:
            await asyncio.shield(pool.close())

    async def _play_spread(self, numbers: list[int], pool: HostPool) -> None:
        """Every round in `numbers`, as many at once as the hosts take; a round whose host was lost goes back
        in the queue for the others."""
        need = match_need(self.manifest)
        queue = list(numbers)
        running: dict[asyncio.Task, tuple[int, str]] = {}
        try:
            while queue or running:
                while queue and (host := pool.place(queue[0], need)) is not None:
                    number = queue.pop(0)
                    running[asyncio.create_task(self._play_round(number, host))] = (number, host)
                if not running:
                    raise AoeError(
                        f"round {queue[0]} needs {need.vcpus} vCPUs and {need.memory_mib} MiB on one host; "
                        + ("no host is left" if not pool.could_ever_fit(need) else "no host has that")
                    )
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in sorted(done, key=lambda t: running[t][0]):
                    number, host = running.pop(task)
                    pool.release(host, need)
                    if not task.result():
                        queue.insert(0, number)
        except BaseException:
            await self._stop_running(running, need, pool)
            raise

    async def _stop_running(self, running: dict[asyncio.Task, tuple[int, str]], need: Capacity, pool: HostPool) -> None:
        """The series is stopping (or failed): every round still in flight records the stop and tears down."""
        reason = self.stop_reason or "the series stopped"
        for task, (number, _host) in running.items():
            runner = self._running[number][1] if number in self._running else None
            if runner is None or not runner.request_stop(reason):
                task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        for _number, host in running.values():
            pool.release(host, need)

    async def _play_round(self, number: int, host: str | None = None) -> bool:
        """Play the round until it is decided (True); False: its host was lost, play it again elsewhere."""
        manifest = rotate(self.manifest, number)
        seats = seats_of(manifest)
        total = self.checkpoint["rounds_requested"]
        began = self.wall_clock()
        for attempt in range(1, self.replays + 2):
            plan = RoundPlan(number, attempt, manifest, self.output / round_name(number), host)
            self.report(
                f"round {number}/{total}"
                + (f" (replay {attempt - 1})" if attempt > 1 else "")
                + " started"
                + (f" on host {host}" if host is not None else "")
                + ": "
                + ", ".join(f"{agent} @ {territory}" for agent, territory in seats.items())
            )
            world = await self._attempt(plan)
            if self._host_lost(plan, world):
                self._publish(RoundEnded(plan))
                return False
            decided = self._settle(plan, seats, world, last=attempt == self.replays + 1, began=began)
            self._publish(RoundEnded(plan))
            if decided:
                return True
        return True  # unreachable: the last attempt is always settled (recorded, or it raises)

    def _host_lost(self, plan: RoundPlan, world: World | None) -> bool:
        """An unfinished attempt whose host is gone is set aside as the host's failure (never a player's)."""
        if self.pool is None or plan.host is None or (world is not None and world.match_state == "finished"):
            return False
        why = self.pool.lost(plan.host)
        if why is None:
            return False
        kept = set_aside_name(plan.output, "host-lost")
        os.replace(plan.output, kept)
        self._host_failures.setdefault(plan.number, []).append({"host": plan.host, "detail": why, "kept_as": kept.name})
        self.report(
            f"round {plan.number}: infrastructure failure, host {plan.host} lost ({why}); kept as {kept.name}, "
            "playing it again on another host"
        )
        return True

    def _settle(self, plan: RoundPlan, seats: dict[str, str], world: World | None, last: bool, began: float) -> bool:
        """Record the attempt (True), or set it aside to be played again (False); the last failed attempt stops
        the series."""
        number, output = plan.number, plan.output
        if world is None or world.match_state != "finished":
            why = "could not be played" if world is None else f"ended {world.match_state}"
            if last:
                raise AoeError(
                    f"round {number} {why} {plan.attempt} times; the series stops here "
                    f"(run the same command to try again)"
                )
            kept = set_aside_name(output, "failed")
            os.replace(output, kept)
            self.report(f"round {number}: {why}; kept as {kept.name}, playing it again")
            return False
        missing = unavailable_agents(world)
        if missing and not last:
            kept = set_aside_name(output, "unavailable")
            os.replace(output, kept)
            self.report(
                f"round {number}: unavailable through no fault of their own: {', '.join(missing)} "
                f"({_sources(world, missing)}); kept as {kept.name}, replaying the round"
            )
            return False
        self._record(number, output, seats, world, missing, plan.attempt, plan.host)
        self._round_seconds.append(self.wall_clock() - began)
        self._progress(number, world, missing)
        return True

    async def _attempt(self, plan: RoundPlan) -> World | None:
        """One match; None when it could not be played (a boot or infrastructure error, named in the report)."""
        runner = self.make_runner(plan)
        self.current = runner
        self._running[plan.number] = (plan, runner)
        self._publish(RoundStarted(plan, runner))
        try:
            return await runner.run()
        except Exception as error:  # noqa: BLE001 - a boot or infrastructure failure ends the round, not the series
            self.report(
                f"round {plan.number}: {type(error).__name__ + ': ' if not isinstance(error, AoeError) else ''}{error}"
            )
            return None
        finally:
            self.current = None
            self._running.pop(plan.number, None)

    def _record(
        self,
        number: int,
        output: Path,
        seats: dict[str, str],
        world: World,
        forfeits: list[str],
        attempt: int,
        host: str | None,
    ) -> None:
        winner = world.territories[world.winner].agent if world.winner in world.territories else None
        placed = {"host": host} if host is not None else {}
        failures = {"host_failures": self._host_failures[number]} if number in self._host_failures else {}
        self.checkpoint["rounds"].append(
            {
                "round": number,
                "output": str(output),
                "seats": seats,
                "winner_territory": world.winner,
                "winner_agent": winner,
                "duration_ms": world.elapsed_ms,
                "usage_agents": sorted(a for a, s in world.agents.items() if s.tokens_known or s.cost_known),
                "forfeits": forfeits,
                "attempts": attempt,
                **placed,
                **failures,
            }
        )
        self.checkpoint["rounds"].sort(key=lambda entry: entry["round"])
        self.checkpoint["rounds_completed"] = len(self.checkpoint["rounds"])
        self.checkpoint["standings"] = series_standings(series_seats(self._decided_folder()))
        self._save()

    def _decided_folder(self) -> SeriesSource:
        """The series folder limited to the rounds `series.json` lists (others may still be in flight)."""
        decided = {entry["round"] for entry in self.checkpoint["rounds"]}
        source = series_folder(self.output)
        return dataclasses.replace(source, rounds=[r for r in source.rounds if r.number in decided])

    def _save(self) -> None:
        write_json_atomic(self.path, self.checkpoint)

    def _progress(self, number: int, world: World, forfeits: list[str]) -> None:
        total, done = self.checkpoint["rounds_requested"], self.checkpoint["rounds_completed"]
        winner = world.territories[world.winner].agent if world.winner in world.territories else None
        forfeit_text = f"; forfeits: {', '.join(forfeits)}" if forfeits else ""
        self.report(
            f"round {number}/{total} decided in {format_clock(world.elapsed_ms)}: winner "
            f"{winner or 'none'}" + (f" ({world.winner})" if world.winner else "") + forfeit_text
        )
        elapsed = self.wall_clock() - self._started_at
        left = self.seconds_left() or 0.0
        self.report(
            f"progress: {done}/{total} rounds done, {format_clock(int(elapsed * 1000))} elapsed, "
            f"about {format_clock(int(left * 1000))} left"
        )


def _sources(world: World, agents: list[str]) -> str:
    return ", ".join(f"{a}: {world.agents[a].failure_source or 'territory unavailable'}" for a in agents)
