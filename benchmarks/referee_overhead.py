"""Referee overhead per tick, with 3 and 30 scripted territories, against a same-run baseline.

Every milestone's verifier is a trivial script, so what is measured is the
referee's own work (eligibility, events through the fsync'ing log writer,
world fold, evidence files, env files) on top of spawning verifier processes.
The baseline spawns exactly the same processes the same way (sequential per
territory, concurrent across territories; a host-reboot milestone runs its
verifier twice, before and after the reboot) with no referee around them.

    .venv/bin/python benchmarks/referee_overhead.py [--repeats N] [--real]

It runs twice: with the match folders on the temporary folder's disk, as a
match's are, and in memory (tmpfs). The difference is what the filesystem
charges for the files a match creates (territory folders, evidence copies, the
log): on an ext4 without a journal, such as this machine's root, creating a file
scans past every inode deleted in the last minutes, so that cost depends on what
else deleted files lately. The in-memory figure is the referee's own work.
Each run times a first pass, in which every territory's files are created, and
the same verifications again (every milestone retried), as in the rest of a
long match. The territory folders exist before, as the runtime makes them when
it boots the guests; the verifiers write the same evidence files in both
(one per milestone of a territory). CPU is this process and the verifiers it
waited for; each referee figure also counts the fsyncs of the events it logged
(`FsyncMeter`), which the log runs a moment later on its own thread.

--real also times a full 3-territory headless match on real VMs (minutes).
Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from collections.abc import Awaitable, Callable

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.domain.manifest import Manifest, Milestone
from aoe_tui.testing.scripted_agent import ScriptedAgent
from aoe_tui.testing.clock import ManualSource
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.referee import Referee
from aoe_tui.engine.territory import RebootProof
from aoe_tui.testing.scripted_host import ScriptedPlan
from aoe_tui.engine.verifier import run_verifier
from aoe_tui.store.manifest_file import read_manifest_data
from aoe_tui.store.event_log import SYNC_GATHER_SECONDS
from aoe_tui.store.match_layout import MatchLayout

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
TRIVIAL = '#!/bin/sh\necho \'{"ok": true}\' > "$AOE_EVIDENCE_FILE"\n'


class IdleTerritory:
    """A territory host no verifier here talks to (the trivial verifier only writes its evidence).

    The scripted territory of the tests serves a real guest on loopback: two server threads per territory,
    each waking 20 times a second. With 30 territories those 60 threads' CPU and their fights for the GIL
    were counted as the referee's own cost, so the benchmark's host does nothing at all.
    """

    host = "127.0.0.1"
    ssh_port = 0
    service_port = 0

    def __init__(self, territory_id: str) -> None:
        self.territory_id = territory_id
        self.boots = 0

    def access_env(self) -> dict[str, str]:
        return {}

    def ssh_command(self) -> None:
        return None

    async def run(self, command: str, timeout: float) -> NoReturn:
        raise AssertionError("the trivial verifier runs nothing in the guest")

    async def reboot(self, timeout: float) -> RebootProof:
        self.boots += 1
        return RebootProof("acpi", ("boot-id",), str(self.boots - 1), str(self.boots), 0.0, "")

    async def suspend(self) -> None:
        pass

    async def resume(self) -> None:
        pass

    async def alive(self) -> bool:
        return True

    def console_tail(self, lines: int = 40) -> str:
        return ""


def manifest_with(territories: int, verifier: Path) -> Manifest:
    data = read_manifest_data(ARENA)
    template_territory, template_agent = data["territories"][0], data["agents"][0]
    data["territories"] = [{**template_territory, "id": f"t-{i}"} for i in range(territories)]
    data["agents"] = [{**template_agent, "id": f"a-{i}", "territory": f"t-{i}"} for i in range(territories)]
    data["build"]["stop_on_first_durable"] = False
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(verifier)
    return Manifest.model_validate(data)


@dataclass(frozen=True)
class Tick:
    """Wall and CPU seconds (this process and the verifiers) of the same verifier runs, twice: first in a new
    match folder, then again once every file the runs write exists (a re-verification in a long match)."""

    first: float
    first_cpu: float
    again: float
    again_cpu: float
    idle: float = 0.0  # a referee tick with nothing to verify


async def referee_tick(territories: int, verifier: Path, work: Path) -> Tick:
    """A tick in which every territory chains all four milestones, an idle tick, then every milestone of every
    territory retried at once (the operator's retry). `work` is a new, empty folder."""
    manifest = manifest_with(territories, verifier)
    assert manifest.build is not None, "the benchmark's arena is a build race"
    source = ManualSource()
    clock = MatchClock(source)
    recorder = MatchRecorder(clock, work / "events.jsonl")
    hosts = {t.id: IdleTerritory(t.id) for t in manifest.territories}
    for territory_id in hosts:  # made by the runtime as it boots a guest (its disk overlay, its console log)
        MatchLayout(work).territory_directory(territory_id).mkdir(parents=True)
    referee = Referee(manifest, hosts, recorder, {m.id: verifier for m in manifest.build.milestones}, work)
    referee.open_match(sorted(hosts))
    for agent in manifest.agents:
        referee.agent_started(ScriptedAgent(agent.id, agent.territory, source.now, None))

    async def one_tick() -> None:
        await referee.tick()
        await referee.settle()

    async def retry_everything() -> None:
        for territory in manifest.territories:
            for milestone in manifest.build.milestones:
                referee.retry_milestone(territory.id, milestone.id)
        await referee.settle()

    source.advance(2)
    first, first_cpu = await with_its_fsyncs(one_tick)
    source.advance(2)
    idle, _ = await with_its_fsyncs(one_tick)
    source.advance(2)
    again, again_cpu = await with_its_fsyncs(retry_everything)
    recorder.close()
    return Tick(first, first_cpu, again, again_cpu, idle)


async def measured(work: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """Wall and CPU seconds until `work` returns."""
    started, cpu = time.perf_counter(), cpu_seconds()
    await work()
    return time.perf_counter() - started, cpu_seconds() - cpu


async def with_its_fsyncs(work: Callable[[], Awaitable[None]]) -> tuple[float, float]:
    """`measured(work)`, its CPU with the fsyncs of the events it logged: the log's syncer runs them a moment
    later on its own thread, so the meter is read once that moment (the syncer's gathering, twice) is over."""
    fsyncs = FSYNCS.seconds
    wall, cpu = await measured(work)
    await asyncio.sleep(2 * SYNC_GATHER_SECONDS)
    return wall, cpu + FSYNCS.seconds - fsyncs


class FsyncMeter:
    """CPU seconds of every fsync in this process, on whichever thread it runs.

    The event log fsyncs a verdict a moment later on its own thread, gathering the requests of that moment
    into one (store.event_log.SYNC_GATHER_SECONDS), so a phase's fsyncs may run after the phase is timed: each
    referee figure counts those that run until the gathering after it is over (`with_its_fsyncs`).
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self._fsync = os.fsync

    def __call__(self, descriptor: int) -> None:
        started = time.thread_time()
        try:
            self._fsync(descriptor)
        finally:
            self.seconds += time.thread_time() - started


FSYNCS = FsyncMeter()
os.fsync = FSYNCS


def fresh(scratch: str, name: str) -> Path:
    """A new folder for one repeat. Every repeat's files stay until the whole run ends: an ext4 without a
    journal (this machine's root) passes over every inode freed in the last minutes when it allocates one, so a
    repeat that followed the deletion of the one before would pay for that cleanup, and the referee, which
    creates more files (territory folders, evidence copies, the log), more than the baseline."""
    folder = Path(scratch) / name
    folder.mkdir()
    return folder


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have been waited for (the verifiers), user and system:
    what the work costs, whatever else the machine is doing (a wall clock also measures the neighbours)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def runs_of(milestone: Milestone) -> int:
    """How many verifier processes one check of `milestone` spawns: a host reboot's verifier runs before and after."""
    return 2 if milestone.operation == "host_reboot" else 1


def verifier_runs(manifest: Manifest) -> int:
    """How many verifier processes one territory's chain through every milestone spawns."""
    assert manifest.build is not None, "the benchmark's arena is a build race"
    return sum(runs_of(m) for m in manifest.build.milestones)


async def baseline(territories: int, verifier: Path, work: Path) -> Tick:
    """The same verifier runs with no referee, in a new folder and then again over the files they wrote."""
    manifest = manifest_with(territories, verifier)
    assert manifest.build is not None, "the benchmark's arena is a build race"
    milestones = manifest.build.milestones

    async def one_territory(index: int) -> None:
        for milestone in milestones:  # one evidence file per milestone, as the referee's: a reboot's runs share it
            for _ in range(runs_of(milestone)):
                env = {"AOE_TERRITORY_ID": f"t-{index}"}
                await run_verifier(verifier, env, 30, work / f"{index}-{milestone.id}.json")

    async def all_territories() -> None:
        await asyncio.gather(*(one_territory(i) for i in range(territories)))

    return Tick(*await measured(all_territories), *await measured(all_territories))


async def scripted_match_wall() -> float:
    from aoe_tui.engine.runner import MatchRunner
    from aoe_tui.testing.scripted_provider import AgentScript, ScriptedLauncher, ScriptedProvider

    plans = {
        "builder-one": ScriptedPlan(6000, "disk"),
        "builder-two": ScriptedPlan(2000, "memory"),
        "builder-three": ScriptedPlan(4000, "tmpfs"),
    }
    with tempfile.TemporaryDirectory() as scratch:
        runner = MatchRunner(
            ARENA,
            Path(scratch) / "match",
            ScriptedProvider(plans),
            ScriptedLauncher({"oracle": AgentScript(1)}),
            source=ManualSource(),
            drain_seconds=5,
        )
        started = time.perf_counter()
        await runner.run()
        return time.perf_counter() - started


async def real_match_wall() -> float:
    from aoe_tui.engine.libvirt_host import LibvirtProvider
    from aoe_tui.engine.provider import ProcessLauncher
    from aoe_tui.engine.runner import MatchRunner

    output = Path(tempfile.mkdtemp(prefix="aoe-bench-")) / "bench-match"
    runner = MatchRunner(ARENA, output, LibvirtProvider(base_port=27190), ProcessLauncher(), drain_seconds=20)
    started = time.perf_counter()
    world = await runner.run()
    wall = time.perf_counter() - started
    print(f"  winner {world.winner} at match time {world.elapsed_ms / 1000:.0f} s; directory {output}")
    return wall


def places() -> list[tuple[str, str]]:
    """Where the match folders go: the temporary folder's disk, as a match's would; and memory (tmpfs), where
    creating a file costs the same every time, so what remains is the referee's own work."""
    found = [(tempfile.gettempdir(), "on disk")]
    if Path("/dev/shm").is_dir():
        found.append(("/dev/shm", "in memory"))
    return found


async def compare(territories: int, verifier: Path, scratch: str, repeats: int, runs: int) -> None:
    ticks, bases = [], []
    for repeat in range(repeats):  # interleaved, so a change in the machine's load hits both alike
        ticks.append(await referee_tick(territories, verifier, fresh(scratch, f"referee-{territories}-{repeat}")))
        bases.append(await baseline(territories, verifier, fresh(scratch, f"baseline-{territories}-{repeat}")))

    def median(figure: str, of: list[Tick]) -> float:
        return statistics.median(getattr(tick, figure) for tick in of)

    print(f"  {territories:>2} territories (idle tick {median('idle', ticks) * 1000:.2f} ms):")
    for label, wall, cpu in (("first pass", "first", "first_cpu"), ("again", "again", "again_cpu")):
        busy, base = median(wall, ticks), median(wall, bases)
        busy_cpu, base_cpu = median(cpu, ticks), median(cpu, bases)
        print(
            f"      {label:<10} wall: tick {busy * 1000:7.1f} ms, baseline {base * 1000:7.1f} ms, ratio "
            f"{busy / base:4.2f} ({(busy - base) / (territories * runs) * 1000:.2f} ms per verifier run); CPU: "
            f"tick {busy_cpu * 1000:7.1f} ms, baseline {base_cpu * 1000:7.1f} ms, ratio {busy_cpu / base_cpu:4.2f} "
            "(target < 1.5x)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--real", action="store_true", help="also time a full 3-territory match on real VMs")
    args = parser.parse_args()
    for place, label in places():
        with tempfile.TemporaryDirectory(dir=place) as scratch:
            verifier = Path(scratch) / "trivial.sh"
            verifier.write_text(TRIVIAL)
            verifier.chmod(0o755)
            runs = verifier_runs(manifest_with(1, verifier))
            print(
                f"referee tick {label} ({place}): every territory chains 4 milestones ({runs} trivial verifier "
                f"runs), first in a new match folder, then again (all retried); median of {args.repeats}"
            )
            for territories in (3, 30):
                await compare(territories, verifier, scratch, args.repeats, runs)
    print(f"scripted 3-territory match through the runner (virtual clock): {await scripted_match_wall():.2f} s wall")
    if args.real:
        print(f"real 3-territory headless match: {await real_match_wall():.0f} s wall")


if __name__ == "__main__":
    asyncio.run(main())
