"""Territory start-up on real libvirt guests: boot to SSH for one guest alone and for three together, cold
and warm (restored from a saved template, `runtime.warm_start`), and a guest reboot to SSH, each against
the issue's target.

Uses the runtime exactly as a match does (`MatchRuntime`: overlays, per-match keys through systemd
credentials, loopback forwards, the accelerator probe, and for the warm start the identity step), so the
figure is what a round waits for before its agents start. The three-guest start is the one that matters
for a series (three territories start together on two cores under TCG); the single cold boot is the
baseline measured in the same run. The template is made once before the runs (its time is printed: a
machine pays it once per image and class).

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/guest_boot.py [--repeats N]

Needs libvirtd (`scripts/services`) and the guest image (`aoe image build`). Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.runtime.image import require_image
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec

TARGET_THREE_S = 10.0
REBOOT_TIMEOUT_S = 240.0
MEMORY_MIB = 768  # the First Build class


async def boot(count: int, name: str, reboot: bool = False, warm: bool = False) -> dict[str, float | list[float]]:
    """Start `count` guests together; each one's seconds from the first `create` to SSH (and one reboot)."""
    with tempfile.TemporaryDirectory(prefix="aoe-boot-bench-") as scratch:
        runtime = MatchRuntime(
            Path(scratch) / "match",
            name,
            [TerritorySpec(f"t{index}", 1, MEMORY_MIB) for index in range(count)],
            image=require_image(),
            warm_start=warm,
            on_progress=lambda line: print(f"... {line}", file=sys.stderr, flush=True),
        )
        started = time.monotonic()
        try:
            await runtime.start()
            figures: dict[str, float | list[float]] = {
                "each": sorted(runtime.boot_seconds.values()),
                "all": time.monotonic() - started,
            }
            if reboot:
                proof = await runtime.vm("t0").reboot(REBOOT_TIMEOUT_S)
                figures["reboot"] = proof.seconds
            return figures
        finally:
            await runtime.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (the median is printed)")
    args = parser.parse_args()
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    made = time.monotonic()
    asyncio.run(boot(1, "bench-template", warm=True))  # makes the template when there is none
    template_s = time.monotonic() - made
    runs: dict[str, list[float]] = {"one": [], "three": [], "reboot": [], "warm three": [], "warm reboot": []}
    for repeat in range(args.repeats):
        single = asyncio.run(boot(1, f"bench-one-{repeat}", reboot=True))
        three = asyncio.run(boot(3, f"bench-three-{repeat}"))
        warm = asyncio.run(boot(3, f"bench-warm-{repeat}", reboot=True, warm=True))
        for name, value in (
            ("one", single["all"]),
            ("reboot", single["reboot"]),
            ("three", three["all"]),
            ("warm three", warm["all"]),
            ("warm reboot", warm["reboot"]),
        ):
            runs[name].append(value)  # type: ignore[arg-type]
        print(
            f"... run {repeat + 1}: one {single['all']:.1f} s, three {three['each']}, warm three {warm['each']}",
            file=sys.stderr,
            flush=True,
        )
    median = {name: statistics.median(values) for name, values in runs.items()}
    one = median["one"]
    print(f"one warm start before the runs (it makes the template when the machine has none): {template_s:6.1f} s")
    print(f"guest boot to SSH, one guest alone (cold):      {one:6.1f} s   (median of {args.repeats})")
    for name in ("three", "warm three"):
        seconds = median[name]
        label = "three together, cold (last up)" if name == "three" else "three together, warm (last up)"
        print(
            f"guest start to SSH, {label}: {seconds:6.1f} s   ratio to one cold {seconds / one:.2f}x; "
            f"target < {TARGET_THREE_S:.0f} s: {'met' if seconds < TARGET_THREE_S else 'NOT met'}"
        )
    print(f"guest reboot to SSH (referee's reboot), cold-booted guest: {median['reboot']:6.1f} s")
    print(f"guest reboot to SSH (referee's reboot), warm-started guest: {median['warm reboot']:6.1f} s")


if __name__ == "__main__":
    main()
