"""Wall time of a 4-round series on 1 host against 2 hosts, and the coordinator's CPU per running match.

Both "hosts" are this machine: the second one is reached as a remote hypervisor
through an OpenSSH server of its own on a loopback port (`aoe_tui.testing.
loopback_sshd`), exactly as the scale-out VM tests do. The arena is the 2-guest
starter of `aoe arena init`, each host holding one match at a time, so the 1-host
run plays the rounds one after another and the 2-host run two at once. On one
2-core machine the second host adds no CPU: the ratio shows what the scheduling
gains when guests are not CPU-bound and what TCG costs when they are (4 guests on
2 cores run slower each). The coordinator's CPU is the `aoe series` process's own
(user + system, from /proc, not its adapters or verifiers), per second of match
clock of the rounds it ran.

    flock /tmp/aoe-vm.lock nice -n 19 .venv/bin/python benchmarks/scale_out.py [--rounds 4]

Prints figures; not a test. Real guests (TCG): about 25 minutes here. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.testing.loopback_sshd import loopback_sshd

AOE = [sys.executable, "-m", "aoe_tui.cli.main"]
ENV = {**os.environ, "PYTHONPATH": str(PROJECT)}
LOCAL = '[[hosts]]\nname = "local"\nuri = "qemu:///system"\ncapacity = { vcpus = 2, memory_mib = 1536 }\n\n'
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def own_cpu_seconds(pid: int) -> float | None:
    """utime + stime of the process itself (not its children), or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def run_series(root: Path, hosts: Path, output: str, rounds: int) -> tuple[float, float, float]:
    """(wall s, coordinator CPU s, match-clock s summed over the rounds) of one headless series."""
    started = time.monotonic()
    process = subprocess.Popen(
        [*AOE, "series", "arenas/bench/arena.toml", "--headless", "--rounds", str(rounds)]
        + ["--hosts", str(hosts), "--output", output],
        cwd=root,
        env=ENV,
        stdout=subprocess.DEVNULL,
    )
    cpu = 0.0
    while process.poll() is None:
        cpu = own_cpu_seconds(process.pid) or cpu
        time.sleep(0.5)
    wall = time.monotonic() - started
    if process.returncode != 0:
        raise SystemExit(f"{output}: aoe series exited {process.returncode}")
    checkpoint = json.loads((root / output / "series.json").read_text())
    return wall, cpu, sum(r["duration_ms"] for r in checkpoint["rounds"]) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    with tempfile.TemporaryDirectory(prefix="aoe-scale-out-") as folder:
        root = Path(folder)
        subprocess.run([*AOE, "arena", "init", "bench"], cwd=root, env=ENV, check=True, capture_output=True)
        with loopback_sshd(root / "sshd") as sshd:
            (root / "one.toml").write_text(LOCAL)
            (root / "two.toml").write_text(
                LOCAL + sshd.hosts_entry("second", 2, 1536, root / "second-host", 29600, "127.0.0.2")
            )
            results = {name: run_series(root, root / f"{name}.toml", name, args.rounds) for name in ("one", "two")}
    for name, (wall, cpu, match_s) in results.items():
        print(
            f"{args.rounds} rounds on {name} host(s): {wall:.0f} s wall; coordinator {cpu:.1f} s CPU over "
            f"{match_s:.0f} s of match clock = {100 * cpu / match_s:.1f}% of a core per running match"
        )
    print(f"2 hosts / 1 host wall time: {results['two'][0] / results['one'][0]:.2f}")


if __name__ == "__main__":
    main()
