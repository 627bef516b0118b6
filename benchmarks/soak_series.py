"""An unattended First Build series on real VMs: does the referee leak across rounds?

Plays a 12-round seat-rotated series headless (the built-in builders, the series runner in this process, as
`aoe series` runs it), and after each round samples this process: resident memory (after a full garbage
collection), open file descriptors, live threads and child processes. Prints round 2 against round 12 with the
change in percent (target: each within 10%; round 1 pays for imports, caches and the warm-start template), and at
the end any stray process or guest left behind (target: none).

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/soak_series.py [--rounds 12] [--duration 240]

Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.series import RoundPlan, SeriesRunner
from benchmarks.series_rounds import short_first_build

TOLERANCE = 0.10


def sample() -> dict[str, float]:
    gc.collect()
    status = Path("/proc/self/status").read_text()
    rss_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    own = str(os.getpid())
    children = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == own:
                    children += 1
            except (OSError, IndexError):
                pass
    return {
        "rss_mib": rss_kib / 1024,
        "open_fds": len(os.listdir("/proc/self/fd")),
        "threads": threading.active_count(),
        "children": children,
    }


def leftovers() -> tuple[list[str], list[str]]:
    guests = subprocess.run(["virsh", "list", "--all", "--name"], capture_output=True, text=True).stdout.split()
    processes = subprocess.run(["pgrep", "-af", "aoe_tui.agents|aoe-verify"], capture_output=True, text=True).stdout
    own = str(os.getpid())
    return [g for g in guests if g.startswith("aoe-")], [p for p in processes.splitlines() if not p.startswith(own)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--duration", type=int, default=240, help="match clock in seconds (default 240)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aoe-soak-"))
    arena = short_first_build(work, args.duration)
    samples: list[dict[str, float]] = []

    def make(plan: RoundPlan) -> MatchRunner:
        runner = MatchRunner(arena, plan.output, LibvirtProvider(), ProcessLauncher(), manifest=plan.manifest)
        play = runner.run

        async def play_and_sample():
            try:
                return await play()
            finally:
                samples.append({"round": plan.number, "at": time.monotonic(), **sample()})
                s = samples[-1]
                print(
                    f"round {plan.number:2}: rss {s['rss_mib']:6.1f} MiB  fds {s['open_fds']:4.0f}  "
                    f"threads {s['threads']:3.0f}  children {s['children']:3.0f}",
                    flush=True,
                )

        runner.run = play_and_sample  # type: ignore[method-assign]
        return runner

    started = time.monotonic()
    asyncio.run(SeriesRunner(arena, work / "series", make, rounds=args.rounds).run())
    guests, processes = leftovers()
    print(f"\n{len(samples)} rounds in {time.monotonic() - started:.0f} s (folder {work})")
    if len(samples) >= 2:
        second, last = samples[1], samples[-1]
        print(f"{'':12} {'round 2':>10} {'round ' + str(int(last['round'])):>10} {'change':>8}  (target within 10%)")
        for key in ("rss_mib", "open_fds", "threads", "children"):
            change = (last[key] - second[key]) / second[key] if second[key] else 0.0
            verdict = "ok" if abs(change) <= TOLERANCE or last[key] <= second[key] else "OVER"
            print(f"{key:12} {second[key]:10.1f} {last[key]:10.1f} {change:+8.1%}  {verdict}")
    print(f"guests left: {guests or 'none'}; stray processes: {processes or 'none'}")


if __name__ == "__main__":
    main()
