"""A real race on real VMs (TCG): the oracle against two builders that attack the referee's reading.

`cheat-flood` (endless /health body, 1 GiB systemctl/cat wrappers, a flooded
serial console, `yes | head -c 50G`) and `cheat-markup` (records and errors in
Rich markup and terminal escapes) really do it as root in their guests. The
oracle must still win durable with 100, the referee process must stay small,
every console log must stay under virtlogd's cap, the cheats' failure details
must be short and free of escape characters, guests must run as the
unprivileged qemu user, and the saved match must replay. One race per module.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.qemu_user import configured_user
from aoe_tui.store.saved_match import load_match
from tests.fixture_paths import PROJECT
from tests.engine.helpers import arena_data, write_arena
from tests.engine.vm_race import race_events

pytestmark = pytest.mark.vm
BASE_PORT = 32400  # 32400-32599 is this module's range
CHEATS = {"builder-two": "cheat-flood", "builder-three": "cheat-markup"}
CONSOLE_CAP = 2 * 1024 * 1024  # virtlogd's default max_size (/etc/libvirt/virtlogd.conf)
MIB = 1024 * 1024


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class Watch:
    """What the test sees while the race runs: the referee's memory and the uid of each guest's QEMU."""

    def __init__(self) -> None:
        self.baseline: int | None = None
        self.peak = 0
        self.qemu_uids: dict[str, int] = {}

    async def sample(self) -> None:
        while True:
            if self.baseline is not None:
                self.peak = max(self.peak, _rss())
            for pid_file in Path("/var/run/libvirt/qemu").glob("aoe-*.pid"):
                try:
                    self.qemu_uids[pid_file.stem] = os.stat(f"/proc/{int(pid_file.read_text())}").st_uid
                except (OSError, ValueError):
                    pass
            await asyncio.sleep(0.5)


async def _operate(runner: MatchRunner, updates: asyncio.Queue, watch: Watch) -> None:
    """Hold the oracle's reboot until both cheats have been judged on what they attack."""
    waiting = {("builder-two", "service-up"), ("builder-three", "write-read")}
    held = False
    async for kind, where, _ in race_events(updates):
        if kind == "agent_started" and not held:
            held = True
            watch.baseline = watch.peak = _rss()
            runner.pause_milestone("host-reboot", "builder-one")
        if kind == "milestone_failed":
            waiting.discard(where)
            if not waiting and held:
                held = None
                runner.resume_milestone("host-reboot", "builder-one")


async def _race(manifest: Path, output: Path, watch: Watch) -> float:
    runner = MatchRunner(manifest, output, LibvirtProvider(base_port=BASE_PORT), ProcessLauncher(), drain_seconds=10)
    tasks = [asyncio.ensure_future(_operate(runner, runner.queue(), watch)), asyncio.ensure_future(watch.sample())]
    started = time.monotonic()
    try:
        await asyncio.wait_for(runner.run(), 2400)
    finally:
        for task in tasks:
            task.cancel()
    return time.monotonic() - started


@pytest.fixture(scope="module")
def race():
    subprocess.run([str(PROJECT / "scripts" / "services")], check=True)
    # Not under pytest's private tmp (0700): the qemu user must be able to enter the match directory.
    work = Path(tempfile.mkdtemp(prefix="aoe-vm-flood-", dir="/var/tmp"))
    work.chmod(0o755)
    data = arena_data(duration_seconds=1500)
    for agent in data["agents"]:
        if agent["territory"] in CHEATS:
            agent["id"] = agent["adapter"] = CHEATS[agent["territory"]]
            agent["model"] = f"scripted/{agent['adapter']}"
    output = work / "vm-flood-match"
    watch = Watch()
    wall = asyncio.run(_race(write_arena(work, data), output, watch))
    print(
        f"\nreal race against cheat-flood and cheat-markup: {wall:.0f} s wall, referee grew "
        f"{(watch.peak - (watch.baseline or 0)) / MIB:.1f} MiB, qemu uids {sorted(set(watch.qemu_uids.values()))}"
    )
    yield output, load_match(output), watch
    shutil.rmtree(work, ignore_errors=True)


def _failures(match, territory: str) -> list[str]:
    return [
        e.to_json()["detail"]
        for e in match.events
        if e.kind == "milestone_failed" and e.to_json()["territory"] == territory
    ]


def test_the_oracle_still_wins_durable_with_100(race):
    world = race[1].world
    assert world.winner == "builder-one" and world.finish_reason == "first durable deployment"
    assert world.territories["builder-one"].competitor_state == "durable"
    assert world.territories["builder-one"].milestone_points == 100


def test_the_cheats_earn_only_what_they_did(race):
    world = race[1].world
    assert world.territories["builder-two"].milestone_points == 0  # /health never answers just "ready"
    markup = world.territories["builder-three"]
    assert markup.milestones["service-up"].passed and markup.milestone_points == 10


def test_failure_details_are_short_and_carry_no_escape_characters(race):
    output, match, _ = race
    flood, markup = _failures(match, "builder-two"), _failures(match, "builder-three")
    assert flood and markup
    assert any("/health" in detail for detail in flood)
    assert any("[bold red]pwned[/]" in detail for detail in markup), markup  # markup kept, as text
    for detail in flood + markup:
        assert len(detail) <= 1000 and "\x1b" not in detail and "\x07" not in detail
    log = (output / "events.jsonl").read_text()
    assert "\x1b" not in log and "\\u001b" not in log.lower() and "\\u0007" not in log.lower()


def test_the_referee_process_stays_small(race):
    _, _, watch = race
    assert watch.baseline is not None
    assert watch.peak - watch.baseline < 64 * MIB, f"referee grew by {(watch.peak - watch.baseline) / MIB:.1f} MiB"


def test_the_fifty_gigabyte_step_was_cut_by_its_own_adapter(race):
    trace = race[1].tool_trace("cheat-flood")
    step = next(call for call in trace if call.input["command"] == "yes | head -c 50G")
    assert "[killed: more than 8 MiB of output]" in step.output and len(step.output) < 5000


def test_console_logs_stay_under_virtlogds_cap(race):
    output = race[0]
    flooded = sorted((output / "territories" / "builder-two").glob("console.log*"))
    assert len(flooded) >= 2, "the console flood never made virtlogd rotate"
    for territory in ("builder-one", "builder-two", "builder-three"):
        logs = list((output / "territories" / territory).glob("console.log*"))
        assert 1 <= len(logs) <= 4, logs  # the log and virtlogd's max_backups (3)
        assert all(log.stat().st_size <= CONSOLE_CAP for log in logs), [(log.name, log.stat().st_size) for log in logs]


def test_guests_ran_as_the_unprivileged_qemu_user(race):
    _, _, watch = race
    expected = configured_user()
    assert expected.unprivileged, expected.reason
    ours = {name: uid for name, uid in watch.qemu_uids.items() if "vm-flood-match" in name}
    assert len(ours) == 3 and set(ours.values()) == {expected.uid}, watch.qemu_uids


def test_the_match_replays_as_json(race):
    output = race[0]
    result = subprocess.run(
        [str(PROJECT / ".venv" / "bin" / "aoe"), "replay", "--json", str(output)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    world = json.loads(result.stdout)
    assert world["winner"] == "builder-one"
