"""The referee's host-reboot check against the same guest's own reboot to SSH, in one run.

One First Build guest (warm-started, as in a match) serving the scripted oracle's durable service. In turn,
`--repeats` times each:

- the referee's check: its host_reboot operation exactly as a race runs it (`Referee._check`: the verifier's
  before_reboot phase, the reboot through libvirt proven from outside, the after_reboot phase);
- the guest's bare reboot: `systemctl reboot` inside the guest, then a fresh kernel on the serial console,
  then the SSH port watched until sshd sends its greeting (no login, no command): the least any reboot
  check can wait.

Each run's timeline is printed too (seconds after the request): the guest's reset as libvirt saw it, and
the console's milestones (the old kernel's last line, the new kernel, root mounted, systemd's multi-user
target, the login prompt), so where the check's time goes can be read off. Ends with p50 and max of both
and the ratio of the maxima against the target.

    flock /tmp/aoe-vm.lock .venv/bin/python benchmarks/reboot.py [--repeats N]

Needs libvirtd (`scripts/services`) and the guest image (`aoe image build`). Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.agents.scripted.apps import app_source
from aoe_tui.domain.manifest import Manifest
from aoe_tui.engine.clock import MatchClock
from aoe_tui.engine.libvirt_host import LibvirtTerritory
from aoe_tui.engine.recorder import MatchRecorder
from aoe_tui.engine.referee import Referee
from aoe_tui.runtime.guest import TerritoryVM
from aoe_tui.runtime.guest_recipe import SLOT_APP, SLOT_UNIT
from aoe_tui.runtime.image import require_image
from aoe_tui.runtime.match_runtime import MatchRuntime, TerritorySpec
from aoe_tui.runtime.ports import LOOPBACK
from aoe_tui.runtime.reboot import LOGIN_PROMPT, ConsoleWatch
from aoe_tui.runtime.ssh_greeting import first_greeting
from aoe_tui.store.manifest_file import read_manifest_data, resolve_verifier

ARENA = PROJECT / "arenas" / "first-build" / "arena.toml"
TERRITORY = "builder-one"
MEMORY_MIB = 768  # the First Build class
TARGET_RATIO = 1.3
BARE_TIMEOUT_S = 240.0
POLL_S = 0.1
# Console lines that mark a reboot's stages, first occurrence after the request.
MARKERS = (
    ("old kernel restarts", b"reboot: Restarting system"),
    ("new kernel", b"] Linux version "),
    ("root mounted", b"EXT4-fs (vda): mounted"),
    ("multi-user", b"Reached target multi-user.target"),
    ("login prompt", b"login:"),
)


class Timeline:
    """Host-side times (seconds after `start`) at which the console first showed each marker after its offset."""

    def __init__(self, vm: TerritoryVM) -> None:
        self.vm = vm
        self.offset = vm.console_path.stat().st_size
        self.events_seen = len(vm.lifecycle_events)
        self.start = time.monotonic()
        self.wall = time.time()
        self.seen: dict[str, float] = {}
        self._task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        text = b""
        while True:
            with open(self.vm.console_path, "rb") as log:
                log.seek(self.offset)
                text += log.read()
            for name, marker in MARKERS:
                if name not in self.seen and marker in text:
                    self.seen[name] = time.monotonic() - self.start
            await asyncio.sleep(POLL_S)

    def close(self) -> str:
        self._task.cancel()
        events = [(when - self.wall, event) for when, event in self.vm.lifecycle_events[self.events_seen :]]
        marks = sorted([(seconds, name) for name, seconds in self.seen.items()] + events)
        return ", ".join(f"{name} {seconds:.1f}" for seconds, name in marks)


def _manifest() -> tuple[Manifest, dict[str, Path]]:
    data = read_manifest_data(ARENA)
    manifest = Manifest.model_validate(data)
    assert manifest.build is not None
    return manifest, {m.id: resolve_verifier(ARENA, m.verifier) for m in manifest.build.milestones}


async def _deploy_oracle(vm: TerritoryVM) -> None:
    """The scripted oracle's durable service in the guest's slot, up before the first reboot."""
    await vm.ssh.write_file(SLOT_APP, app_source("sqlite").encode())
    await _service_up(vm, f"systemctl start {SLOT_UNIT} && ")


async def _service_up(vm: TerritoryVM, first: str = "") -> None:
    """Wait (untimed) until the service answers: a race checks host-reboot only once it has passed before."""
    loop = "for i in $(seq 300); do curl -fs localhost:8080/health && exit 0; sleep 0.2; done; exit 1"
    answered = await vm.run(first + loop, timeout=90)
    if answered.exit_status != 0:
        raise SystemExit(f"the oracle's service did not answer: {answered.stderr.strip()}")


async def _referee_check(referee: Referee, vm: TerritoryVM) -> tuple[float, str]:
    milestone = next(m for m in referee.build.milestones if m.operation == "host_reboot")
    timeline = Timeline(vm)
    outcome, category = await referee._check(TERRITORY, milestone)
    seconds = time.monotonic() - timeline.start
    if not outcome.passed:
        raise SystemExit(f"the referee's check did not pass ({category}): {outcome.detail}")
    evidence = outcome.evidence
    reboot = evidence["reboot_seconds"]
    phases = ", ".join(f"{name} {at:.1f}" for name, at in evidence["reboot_phases"].items())
    return (
        seconds,
        f"{timeline.close()}; the reboot itself {reboot:.1f} s ({phases}), verifiers {seconds - reboot:.1f} s",
    )


async def _bare_reboot(vm: TerritoryVM) -> tuple[float, str]:
    """The guest reboots itself; seconds until its sshd greets again (after a fresh kernel, so never the old one).

    The greeting is watched for as the referee does (runtime.ssh_greeting, told by the console's login prompt
    when the guest is up): a probe opened every fraction of a second finds sshd later, not sooner, since each
    one the forward held while the guest was down reaches sshd afterwards."""
    console = ConsoleWatch.from_now(vm.console_path)
    booted_from = console.offset
    timeline = Timeline(vm)
    await vm.run("systemctl --no-block reboot", timeout=15)
    vm.ssh.drop()
    deadline = timeline.start + BARE_TIMEOUT_S
    while not console.saw_banner():
        if time.monotonic() > deadline:
            raise SystemExit(f"the guest's own reboot showed no fresh kernel within {BARE_TIMEOUT_S:g} s")
        await asyncio.sleep(POLL_S)
    up = ConsoleWatch(vm.console_path, booted_from, pattern=LOGIN_PROMPT).saw_banner
    greeted = await first_greeting(LOOPBACK, vm.ssh_port, deadline - time.monotonic(), up)
    if greeted is None:
        raise SystemExit(f"the guest's own reboot did not reach SSH within {BARE_TIMEOUT_S:g} s")
    greeted.close()
    seconds = time.monotonic() - timeline.start
    await _service_up(vm)
    return seconds, timeline.close()


async def measure(repeats: int, work: Path) -> dict[str, list[float]]:
    runtime = MatchRuntime(
        work / "match",
        "bench-reboot",
        [TerritorySpec(TERRITORY, 1, MEMORY_MIB)],
        image=require_image(),
        warm_start=True,
        on_progress=lambda line: print(f"... {line}", file=sys.stderr, flush=True),
    )
    figures: dict[str, list[float]] = {"check": [], "bare": []}
    try:
        await runtime.start()
        vm = runtime.vm(TERRITORY)
        await _deploy_oracle(vm)
        manifest, verifiers = _manifest()
        referee = Referee(
            manifest, {TERRITORY: LibvirtTerritory(vm)}, MatchRecorder(MatchClock()), verifiers, work / "referee"
        )
        referee.open_match([TERRITORY])
        for repeat in range(repeats):
            for name, run in (("check", functools.partial(_referee_check, referee)), ("bare", _bare_reboot)):
                seconds, timeline = await run(vm)
                figures[name].append(seconds)
                print(f"... {repeat + 1} {name} {seconds:5.1f} s: {timeline}", file=sys.stderr, flush=True)
    finally:
        await runtime.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=10, help="reboots of each kind (alternating)")
    args = parser.parse_args()
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    with tempfile.TemporaryDirectory(prefix="aoe-reboot-bench-") as scratch:
        figures = asyncio.run(measure(args.repeats, Path(scratch)))
    for name, label in (("bare", "guest's own reboot to SSH banner"), ("check", "referee's host-reboot check")):
        values = figures[name]
        print(f"{label:34s} p50 {statistics.median(values):6.1f} s   max {max(values):6.1f} s   (n={len(values)})")
    ratio = max(figures["check"]) / max(figures["bare"])
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"ratio of maxima (check / bare): {ratio:.2f}x   target <= {TARGET_RATIO}x: {verdict}")
    print(
        f"ratio of p50s   (check / bare): {statistics.median(figures['check']) / statistics.median(figures['bare']):.2f}x"
    )


if __name__ == "__main__":
    main()
