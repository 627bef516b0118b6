"""A cup: a field of entrants raced in heats, round after round, to one winner; unattended and resumable.

The rules are `domain.cup_rules` (and docs/cups.md). Each attempt of a heat is an ordinary match, run by a
`MatchRunner` the caller's factory builds (libvirt guests for `aoe cup`, scripted territories in the tests),
into `round-R/heat-H/attempt-A/` with the heat's manifest (the arena with the heat's entrants in their drawn
seats) as its `arena.json`, and named in the published format (`cup-heat.json`).

`cup.json` is replaced atomically before each attempt starts (the attempt marked `running`) and after each
heat is settled, so a crash or `kill -9` never leaves a broken checkpoint: re-running the same command finds
the `running` attempt, marks it `interrupted` and plays the heat again as the next attempt. Everything
decided stays decided: the draw of a round is written once, with its seed, and read back on resume.

With a host pool (`--hosts`), the heats of a round run at once, as many as the hosts take.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from aoe_tui.agents.protocol import write_json_atomic
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.cup_rules import (
    CUP_SCHEMA,
    CupSpec,
    advance,
    attempt_path,
    decide_heat,
    default_seed,
    draw,
    heat_name,
    heat_slug,
    round_seed,
    seat_results,
    season_label,
    utc_stamp,
)
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.world import World
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.engine.placement import match_need
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.series import SeriesStopped, compatibility_key_of
from aoe_tui.engine.stop_signals import Stoppable
from aoe_tui.store.cup_files import CUP_FILE, HEAT_FILE, read_cup_checkpoint, read_cup_spec
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.series_files import set_aside_name

Report = Callable[[str], None]


@dataclass(frozen=True)
class HeatPlan:
    """What the factory needs to build one attempt of one heat."""

    round: int
    heat: int
    attempt: int
    manifest: Manifest  # the heat's entrants in their seats
    output: Path
    name: str
    slug: str
    host: str | None = None


HeatFactory = Callable[[HeatPlan], MatchRunner]


@dataclass(frozen=True)
class HeatStarted:
    plan: HeatPlan
    runner: MatchRunner


@dataclass(frozen=True)
class HeatEnded:
    plan: HeatPlan


CupUpdate = HeatStarted | HeatEnded
CupListener = Callable[[CupUpdate], None]


def heat_manifest(manifest: Manifest, spec: CupSpec, entrants: list[str]) -> Manifest:
    """The arena with the heat's entrants: the n-th drawn in the n-th territory (a smaller heat uses the first)."""
    territories = manifest.territories[: len(entrants)]
    data = manifest.to_json()
    data["territories"] = [t.model_dump(mode="json", by_alias=True) for t in territories]
    data["agents"] = [spec.entrant(e).agent_table(t.id) for e, t in zip(entrants, territories, strict=True)]
    return Manifest.model_validate(data)


class CupRunner(Stoppable):
    def __init__(
        self,
        cup_path: Path,
        output: Path,
        make_runner: HeatFactory,
        season: str | None = None,
        fresh: bool = False,
        report: Report = print,
        pool: HostPool | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        wall_clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.cup_path = Path(cup_path)
        self.spec, self.manifest_path = read_cup_spec(self.cup_path)
        self.manifest = load_manifest(self.manifest_path)
        self.output = Path(output)
        self.make_runner = make_runner
        self.fresh = fresh
        self.report = report
        self.pool = pool
        self.now = now
        self.wall_clock = wall_clock
        started = now()
        self.season = season or season_label(started)
        self.stamp = utc_stamp(started)
        territories = len(self.manifest.territories)
        minimum = self.manifest.rules.minimum_territories
        self.heat_size = self.spec.cup.heat_size or territories
        if not minimum <= self.heat_size <= territories:
            raise AoeError(
                f"{self.cup_path}: field cup.heat_size: {self.heat_size} is outside the arena's {minimum} to "
                f"{territories} territories"
            )
        if len(self.spec.entrants) < minimum:
            raise AoeError(
                f"{self.cup_path}: a field of {len(self.spec.entrants)} entrants is too small: the arena needs at "
                f"least {minimum} in a heat"
            )
        self.key = compatibility_key_of(self.manifest, self.manifest_path)
        self.checkpoint: dict[str, Any] = {}
        self.current: MatchRunner | None = None
        self._listeners: list[CupListener] = []
        self._running: dict[tuple[int, int], tuple[HeatPlan, MatchRunner]] = {}
        self._heat_seconds: list[float] = []
        self._started_at = 0.0

    @property
    def path(self) -> Path:
        return self.output / CUP_FILE

    def subscribe(self, listener: CupListener) -> None:
        self._listeners.append(listener)

    def _publish(self, update: CupUpdate) -> None:
        for listener in self._listeners:
            listener(update)

    # -- opening --------------------------------------------------------------------------------------------

    def open(self) -> None:
        """Start a new cup or resume this folder's; a `running` attempt left behind becomes `interrupted`."""
        existing = read_cup_checkpoint(self.path) if self.path.exists() else None
        if existing is not None and self.fresh:
            kept = set_aside_name(self.output, "previous")
            self.output.rename(kept)
            self.report(f"--fresh: the earlier cup is kept as {kept}")
            existing = None
        elif existing is not None and existing.get("compatibility_key") != self.key:
            raise AoeError(
                f"{self.path}: cannot resume, the arena changed since this cup began (compatibility key "
                f"{str(existing.get('compatibility_key'))[:12]}… is now {self.key[:12]}…); rerun with --fresh to "
                f"start a new run (this one is kept) or choose another --output"
            )
        if existing is None and self.output.exists() and any(self.output.iterdir()):
            raise AoeError(f"{self.output}: exists and holds no {CUP_FILE}; choose another --output")
        if existing is None:
            seed = self.spec.cup.seed if self.spec.cup.seed is not None else default_seed(self.spec.cup.id, self.season)
            self.checkpoint = {
                "schema_version": CUP_SCHEMA,
                "cup_id": self.spec.cup.id,
                "display_name": self.spec.cup.display_name or self.spec.cup.id,
                "season": self.season,
                "run": f"{self.season}-{self.stamp}",
                "seed": seed,
                "seed_source": "cup.seed" if self.spec.cup.seed is not None else "derived from the cup id and season",
                "arena_id": self.manifest.arena.id,
                "manifest": str(self.manifest_path),
                "compatibility_key": self.key,
                "heat_size": self.heat_size,
                "minimum_territories": self.manifest.rules.minimum_territories,
                "attempts": self.spec.cup.attempts,
                "entrants": [{"entrant": e.id, **e.config} for e in self.spec.entrants],
                "state": "running",
                "rounds": [],
                "winner": None,
                "winner_reason": None,
            }
            self.output.mkdir(parents=True, exist_ok=True)
            self._draw(1, [e.id for e in self.spec.entrants], "the whole field")
            self.report(
                f"cup {self.spec.cup.id} season {self.season}: {len(self.spec.entrants)} entrants, heats of up to "
                f"{self.heat_size} into {self.output}"
            )
            return
        self.checkpoint = existing
        self._mark_interrupted(
            "interrupted before it was decided (the process stopped); played again as a later attempt"
        )
        self._save()
        decided = sum(h["winner_decided"] for r in existing["rounds"] for h in r["heats"])
        self.report(
            f"resuming cup {existing['cup_id']} season {existing['season']} in {self.output}: {decided} heats "
            f"already decided (kept)"
        )

    def _mark_interrupted(self, reason: str) -> None:
        """Every attempt still marked `running` was cut short: `interrupted`, to be played again."""
        for entry in self.checkpoint["rounds"]:
            for heat in entry["heats"]:
                for attempt in heat["attempts"]:
                    if attempt["outcome"] == "running":
                        attempt["outcome"] = "interrupted"
                        attempt["reason"] = reason
                        self.report(
                            f"round {entry['round']} heat {heat['heat']}: attempt {attempt['attempt']} was "
                            "interrupted; it will be played again as the next attempt"
                        )

    def _draw(self, number: int, field: list[str], why: str) -> None:
        heats = draw(field, number, self.checkpoint["seed"], self.heat_size, self.checkpoint["minimum_territories"])
        territories = [t.id for t in self.manifest.territories]
        self.checkpoint["rounds"].append(
            {
                "round": number,
                "field": sorted(field),
                "field_reason": why,
                "draw_seed": round_seed(self.checkpoint["seed"], number),
                "final": len(heats) == 1,
                "heats": [
                    {
                        "heat": index,
                        "entrants": entrants,
                        "seats": dict(zip(entrants, territories, strict=False)),
                        "attempts": [],
                        "winner_decided": False,
                        "winner": None,
                        "order": [],
                        "forfeits": [],
                        "reason": None,
                    }
                    for index, entrants in enumerate(heats, 1)
                ],
                "advanced": [],
            }
        )
        self._save()
        self.report(
            f"round {number} drawn ({'the final' if len(heats) == 1 else f'{len(heats)} heats'}): "
            + "; ".join(f"heat {i}: {', '.join(h)}" for i, h in enumerate(heats, 1))
        )

    # -- what is left -------------------------------------------------------------------------------------

    def heats_left(self) -> int:
        """Heats still to decide, counting the rounds not drawn yet (from the field's size)."""
        rounds = self.checkpoint.get("rounds") or []
        if not rounds or self.checkpoint.get("state") == "complete":
            return 0
        last = rounds[-1]
        left = sum(not h["winner_decided"] for h in last["heats"])
        winners = len(last["heats"])
        while winners > 1:
            heats = math.ceil(winners / self.heat_size)
            left += heats
            winners = heats
        return left

    def seconds_left(self) -> float | None:
        if not self._heat_seconds:
            return None
        return self.heats_left() * sum(self._heat_seconds) / len(self._heat_seconds)

    def in_flight(self) -> list[HeatPlan]:
        return [plan for plan, _ in self._running.values()]

    # -- the cup ------------------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        """Play every heat not yet decided, round by round; returns the final `cup.json`."""
        self._task = asyncio.current_task()
        self._started_at = self.wall_clock()
        if not self.checkpoint:
            self.open()
        try:
            if self.pool is not None:
                await self.pool.open(self.manifest)
            try:
                while self.checkpoint["state"] != "complete":
                    await self._play_round(self.checkpoint["rounds"][-1])
            finally:
                if self.pool is not None:
                    await asyncio.shield(self.pool.close())
        except asyncio.CancelledError:
            if self.stop_reason is None:
                raise
            self._take_back_cancel()
            self._mark_interrupted(f"stopped ({self.stop_reason}); played again as a later attempt")
            self._save()
            self.report(f"cup stopped ({self.stop_reason}); run the same command to resume")
            raise SeriesStopped(self.stop_reason) from None
        self.report(f"cup complete: winner {self.checkpoint['winner'] or 'none'}; {self.path}")
        return self.checkpoint

    async def _play_round(self, entry: dict[str, Any]) -> None:
        pending = [h for h in entry["heats"] if not h["winner_decided"]]
        if self.pool is None:
            for heat in pending:
                await self._play_heat(entry, heat, None)
        else:
            await self._play_spread(entry, pending, self.pool)
        if entry["final"]:
            heat = entry["heats"][0]
            self.checkpoint["winner"] = heat["winner"]
            self.checkpoint["winner_reason"] = f"won the final (round {entry['round']}): {heat['reason']}"
            self.checkpoint["state"] = "complete"
            self._save()
            return
        going = advance(entry["heats"], self.heat_size)
        entry["advanced"] = going
        if not going:
            self.checkpoint["state"] = "complete"
            self.checkpoint["winner_reason"] = f"nobody raced in round {entry['round']}"
            self._save()
            return
        self._save()
        for row in going:
            self.report(f"round {entry['round']}: {row['entrant']} goes on ({row['why']})")
        self._draw(entry["round"] + 1, [row["entrant"] for row in going], f"advanced from round {entry['round']}")

    async def _play_spread(self, entry: dict[str, Any], heats: list[dict[str, Any]], pool: HostPool) -> None:
        need = match_need(self.manifest)
        queue = list(heats)
        running: dict[asyncio.Task, str] = {}
        try:
            while queue or running:
                while queue and (host := pool.place(entry["round"] * 1000 + queue[0]["heat"], need)) is not None:
                    heat = queue.pop(0)
                    running[asyncio.create_task(self._play_heat(entry, heat, host))] = host
                if not running:
                    raise AoeError(
                        f"round {entry['round']}: a heat needs {need.vcpus} vCPUs and {need.memory_mib} MiB on one "
                        "host; no host has that"
                    )
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    pool.release(running.pop(task), need)
                    task.result()
        except BaseException:
            for _plan, runner in list(self._running.values()):
                runner.request_stop(self.stop_reason or "the cup stopped")
            await asyncio.gather(*running, return_exceptions=True)
            for host in running.values():
                pool.release(host, need)
            raise

    async def _play_heat(self, entry: dict[str, Any], heat: dict[str, Any], host: str | None) -> None:
        number, index = entry["round"], heat["heat"]
        manifest = heat_manifest(self.manifest, self.spec, heat["entrants"])
        attempts = self.checkpoint["attempts"]
        began = self.wall_clock()
        while not heat["winner_decided"]:
            attempt = len(heat["attempts"]) + 1
            voids = sum(a["outcome"] == "void" for a in heat["attempts"])
            failed = sum(a["outcome"] == "failed" for a in heat["attempts"])
            if failed >= attempts:
                raise AoeError(
                    f"round {number} heat {index} could not be played {failed} times; the cup stops here "
                    "(run the same command to try again)"
                )
            run = self.checkpoint["run"]
            cup_id = self.checkpoint["cup_id"]
            relative = attempt_path(number, index, attempt)
            plan = HeatPlan(
                number,
                index,
                attempt,
                manifest,
                self.output / relative,
                heat_name(cup_id, run, number, index, attempt),
                heat_slug(cup_id, run, number, index, attempt),
                host,
            )
            record: dict[str, Any] = {
                "attempt": attempt,
                "output": relative,
                "name": plan.name,
                "slug": plan.slug,
                "outcome": "running",
                "reason": None,
            }
            if host is not None:
                record["host"] = host
            heat["attempts"].append(record)
            self._save()
            plan.output.mkdir(parents=True, exist_ok=True)
            write_json_atomic(
                plan.output / HEAT_FILE,
                {
                    "name": plan.name,
                    "slug": plan.slug,
                    "cup": cup_id,
                    "season": self.checkpoint["season"],
                    "run": run,
                    "round": number,
                    "heat": index,
                    "attempt": attempt,
                },
            )
            self.report(
                f"round {number} heat {index} attempt {attempt} started"
                + (f" on host {host}" if host is not None else "")
                + ": "
                + ", ".join(f"{e} @ {t}" for e, t in heat["seats"].items())
            )
            world = await self._attempt(plan)
            if self.stop_reason is not None:
                record["outcome"] = "interrupted"
                record["reason"] = f"stopped ({self.stop_reason}); played again as a later attempt"
                self._save()
                self._publish(HeatEnded(plan))
                self.report(f"cup stopped ({self.stop_reason}); run the same command to resume")
                raise SeriesStopped(self.stop_reason)
            self._settle(heat, record, world, voids, attempts)
            self._save()
            self._publish(HeatEnded(plan))
            self.report(f"round {number} heat {index} attempt {attempt}: {record['outcome']}: {record['reason']}")
        self._heat_seconds.append(self.wall_clock() - began)
        left = self.seconds_left() or 0.0
        elapsed = self.wall_clock() - self._started_at
        self.report(
            f"progress: {self.heats_left()} heats left, {format_clock(int(elapsed * 1000))} elapsed, about "
            f"{format_clock(int(left * 1000))} left"
        )

    def _settle(
        self, heat: dict[str, Any], record: dict[str, Any], world: World | None, voids: int, attempts: int
    ) -> None:
        if world is None or world.match_state != "finished":
            record["outcome"] = "failed"
            record["reason"] = (
                "could not be played" if world is None else f"ended {world.match_state}"
            ) + "; played again as the next attempt"
            return
        decision = decide_heat(seat_results(world), voids, attempts)
        record["unavailable"] = list(decision.unavailable)
        if not decision.stands:
            record["outcome"] = "void"
            record["reason"] = decision.reason
            return
        record["outcome"] = "decided"
        record["reason"] = decision.reason
        heat.update(
            winner_decided=True,
            winner=decision.winner,
            order=list(decision.order),
            forfeits=list(decision.forfeits),
            reason=decision.reason,
            decided_by=record["attempt"],
        )

    async def _attempt(self, plan: HeatPlan) -> World | None:
        runner = self.make_runner(plan)
        self.current = runner
        self._running[(plan.round, plan.heat)] = (plan, runner)
        self._publish(HeatStarted(plan, runner))
        try:
            return await runner.run()
        except Exception as error:  # noqa: BLE001 - a boot or infrastructure failure ends the attempt, not the cup
            self.report(f"round {plan.round} heat {plan.heat}: {error}")
            return None
        finally:
            self.current = None
            self._running.pop((plan.round, plan.heat), None)

    def _save(self) -> None:
        write_json_atomic(self.path, self.checkpoint)
