"""Territory start-up on real libvirt guests: boot to SSH for one guest alone and for three together, and a
guest reboot to SSH, each against the issue's target.

Uses the runtime exactly as a match does (`MatchRuntime`: overlays, per-match keys through systemd
credentials, loopback forwards, the accelerator probe), so the figure is what a round waits for before
its agents start. The three-guest boot is the one that matters for a series (three territories boot
together on two cores under TCG); the single boot is the baseline measured in the same run.

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


async def boot(count: int, name: str, reboot: bool = False) -> dict[str, float | list[float]]:
    """Boot `count` guests together; each one's seconds from the first `create` to SSH (and one reboot)."""
    with tempfile.TemporaryDirectory(prefix="aoe-boot-bench-") as scratch:
        runtime = MatchRuntime(
            Path(scratch) / "match",
            name,
            [TerritorySpec(f"t{index}", 1, MEMORY_MIB) for index in range(count)],
            image=require_image(),
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
    alone, together, reboots = [], [], []
    for repeat in range(args.repeats):
        single = asyncio.run(boot(1, f"bench-one-{repeat}", reboot=True))
        alone.append(single["all"])
        reboots.append(single["reboot"])
        three = asyncio.run(boot(3, f"bench-three-{repeat}"))
        together.append(three["all"])
        print(f"... run {repeat + 1}: one {single['all']:.1f} s, three {three['each']}", file=sys.stderr, flush=True)
    one, three_s = statistics.median(alone), statistics.median(together)
    print(f"guest boot to SSH, one guest alone:          {one:6.1f} s   (median of {args.repeats})")
    print(
        f"guest boot to SSH, three together (last up): {three_s:6.1f} s   "
        f"ratio to one alone {three_s / one:.2f}x; target < {TARGET_THREE_S:.0f} s: "
        f"{'met' if three_s < TARGET_THREE_S else 'NOT met'}"
    )
    print(f"guest reboot to SSH (referee's reboot):      {statistics.median(reboots):6.1f} s")


if __name__ == "__main__":
    main()
