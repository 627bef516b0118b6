"""Zero-Downtime Rollout on real VMs, N races in a row: does the verdict depend on the host's speed?

Each race is the arena's real-VM test module (`tests/engine/test_vm_zero_downtime_rollout.py`: the oracle,
the blip builder and the hand-run v2 in three TCG guests, the operator holding the oracle's reboot until
both flawed builders were judged), run as its own pytest process with its own folder. After each race the
saved match is read back and one line printed: the oracle's state and points, the blip builder's
uninterrupted-cutover verdict (final or not), the hand-run v2's, the monitor's calibrated check timeout and
the slowest answer it was calibrated from, each territory's worst check latency during the race, and
whether the module's tests passed. Ends with the tallies: the oracle durable with 100 in N of N, the blip
failed for good in N of N.

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/rollout_verdicts.py [--races 5]

Needs libvirtd (`scripts/services`) and the guest image (`aoe image build`). Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from aoe_tui.store.saved_match import load_match

PROJECT = Path(__file__).resolve().parent.parent

MODULE = "tests/engine/test_vm_zero_downtime_rollout.py"
CUTOVER = "uninterrupted-cutover"


def race(index: int, work: Path) -> dict:
    """One race as its own pytest process; the verdicts read back from the match it saved."""
    base = work / f"race-{index}"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "vm", MODULE, "-q", "-p", "no:cacheprovider", f"--basetemp={base}"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        env={**os.environ, "AOE_ALL_VM": "1"},  # the module is outside CI's time budget
    )
    wall = time.monotonic() - started
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    found = sorted(base.glob("rollout-race*/rollout-match"))
    if not found:
        return {"tests": tail, "wall": wall, "match": None}
    match = load_match(found[0])
    world = match.world
    cutover = {t: world.territories[t].milestones[CUTOVER] for t in ("rollout-one", "rollout-two", "rollout-three")}
    failed = {  # each territory's first failure of the cutover that was judged (not cut short by the match's end)
        f["territory"]: f
        for f in reversed([e.to_json() for e in match.events if e.kind == "milestone_failed"])
        if f["milestone"] == CUTOVER and f["category"] != "cancelled"
    }
    stopped = {e.to_json()["territory"]: e.to_json()["summary"] for e in match.events if e.kind == "monitor_stopped"}
    blip_final = [
        e.to_json()
        for e in match.events
        if e.kind == "milestone_failed" and e.to_json()["territory"] == "rollout-two" and not e.to_json()["retryable"]
    ]
    oracle = world.territories["rollout-one"]
    return {
        "tests": tail,
        "wall": wall,
        "match": str(found[0]),
        "oracle": (oracle.competitor_state, oracle.milestone_points),
        "oracle_durable": oracle.competitor_state == "durable" and oracle.milestone_points == 100,
        "blip_failed_for_good": not cutover["rollout-two"].passed and bool(blip_final),
        "blip_detail": blip_final[0]["detail"] if blip_final else failed.get("rollout-two", {}).get("detail"),
        "by_hand_detail": failed.get("rollout-three", {}).get("detail"),
        "calibration": (match.provenance or {}).get("monitor_calibration", {}).get("continuity"),
        "worst_latency": {t: (s.get("check_latency_ms") or {}).get("max") for t, s in stopped.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rollout-verdicts-"))
    print(f"{args.races} Zero-Downtime Rollout races on real VMs, one after another (folders under {work})")
    results = []
    for index in range(1, args.races + 1):
        result = race(index, work)
        results.append(result)
        calibration = result.get("calibration") or {}
        print(
            f"race {index}: {result['wall']:.0f} s; tests: {result['tests']}\n"
            f"  oracle {result.get('oracle')}; blip failed for good: {result.get('blip_failed_for_good')} "
            f"({result.get('blip_detail')}); by hand: {result.get('by_hand_detail')}\n"
            f"  calibrated timeout {calibration.get('timeout_ms')} ms from a slowest answer of "
            f"{calibration.get('slowest_ms')} ms; worst check latency in the race {result.get('worst_latency')}",
            flush=True,
        )
    durable = sum(bool(r.get("oracle_durable")) for r in results)
    blips = sum(bool(r.get("blip_failed_for_good")) for r in results)
    print(f"oracle durable with 100: {durable} of {len(results)}; blip failed for good: {blips} of {len(results)}")
    return 0 if durable == blips == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
