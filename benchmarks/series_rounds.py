"""Series throughput on real VMs: overhead between rounds and rounds per hour.

Runs a seat-rotated series of First Build (three territories, the built-in
builders; by default 3 rounds and a 240 s clock, the match ends at the first
durable deployment) headless on libvirt guests, then prints per round its
wall time, winner, and the overhead between rounds: from the end of one
round's teardown to the next round's first boot step. With `--suite` it runs
a benchmark suite instead (e.g. suites/first-build.toml, both arenas).

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/series_rounds.py [--rounds N] [--suite SUITE]

Prints figures; not a test. Ports are allocated automatically.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.engine.benchmark import BenchmarkRunner
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.recorder import Progress
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.series import RoundPlan, SeriesRunner
from aoe_tui.store.manifest_file import read_manifest_data, resolve_verifier

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"


class Timed:
    """A round factory on libvirt that stamps each round's first boot step and the end of its teardown."""

    def __init__(self) -> None:
        self.rounds: list[dict] = []

    def factory(self, manifest_path: Path):
        def make(plan: RoundPlan) -> MatchRunner:
            runner = MatchRunner(
                manifest_path, plan.output, LibvirtProvider(), ProcessLauncher(), manifest=plan.manifest
            )
            entry = {
                "arena": plan.manifest.arena.id,
                "round": plan.number,
                "attempt": plan.attempt,
                "created": time.monotonic(),
                "first_boot": None,
                "ended": None,
            }
            self.rounds.append(entry)

            def stamp(update) -> None:
                if isinstance(update, Progress) and update.stage == "boot" and entry["first_boot"] is None:
                    entry["first_boot"] = time.monotonic()

            runner.subscribe(stamp)
            play = runner.run

            async def run_and_stamp():
                try:
                    return await play()
                finally:
                    entry["ended"] = time.monotonic()

            runner.run = run_and_stamp  # type: ignore[method-assign]
            return runner

        return make


def short_first_build(directory: Path, duration_seconds: int) -> Path:
    data = read_manifest_data(ARENA)
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(resolve_verifier(ARENA, milestone["verifier"]))
    data["rules"].update(duration_seconds=duration_seconds, post_match_drain_seconds=5)
    path = directory / "arena.json"
    path.write_text(json.dumps(data))
    return path


def report(timed: Timed, started: float) -> None:
    total = time.monotonic() - started
    overheads = []
    for before, after in zip(timed.rounds, timed.rounds[1:]):
        if before["ended"] is not None and after["first_boot"] is not None:
            overheads.append(after["first_boot"] - before["ended"])
    for entry, gap in zip(timed.rounds, [None, *overheads]):
        wall = (entry["ended"] or time.monotonic()) - entry["created"]
        print(
            f"{entry['arena']} round {entry['round']} (attempt {entry['attempt']}): {wall:.1f} s"
            + (f", overhead since the previous round's teardown: {gap:.2f} s" if gap is not None else "")
        )
    if overheads:
        print(f"overhead between rounds: max {max(overheads):.2f} s, mean {sum(overheads) / len(overheads):.2f} s")
    print(f"{len(timed.rounds)} rounds in {total:.0f} s: {3600 * len(timed.rounds) / total:.1f} rounds per hour")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=240, help="match clock in seconds (default 240)")
    parser.add_argument("--suite", type=Path, help="run this benchmark suite instead of one series")
    args = parser.parse_args()
    timed = Timed()
    work = Path(tempfile.mkdtemp(prefix="aoe-series-bench-"))
    started = time.monotonic()
    if args.suite is not None:
        runner = BenchmarkRunner(args.suite, work / "benchmark", timed.factory)
    else:
        arena = short_first_build(work, args.duration)
        runner = SeriesRunner(arena, work / "series", timed.factory(arena), rounds=args.rounds)
    asyncio.run(runner.run())
    report(timed, started)
    print(f"folder: {work}")


if __name__ == "__main__":
    main()
