"""Live matches for the app tests: the scripted provider on a clock the test holds back.

The match runs on a `ManualSource` with a `limit`: virtual time that runs
instantly up to the limit and then waits until the test moves it, so
whatever is on screen at a given limit is the same on every run — no wall
clock in any snapshot. The app's own clock stands still.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.scripted_host import ScriptedPlan
from aoe_tui.testing.clock import ManualSource
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
from aoe_tui.app.live_app import LiveApp
from tests.fixture_paths import PROJECT
from tests.engine.helpers import ARENA, arena_data

# Slower than the engine tests' race so there is a race to watch: the oracle's guest comes up last.
LIVE_RACE = {
    "builder-one": ScriptedPlan(ready_at_ms=24_000, storage="disk"),
    "builder-two": ScriptedPlan(ready_at_ms=4_000, storage="memory"),
    "builder-three": ScriptedPlan(ready_at_ms=10_000, storage="tmpfs"),
}
# The same race four times sooner, for tests whose point is not when the guests come up (the snapshots keep
# LIVE_RACE): builder-two passes two milestones and fails the restart at 2 s, builder-three fails the reboot
# at 4 s, builder-one wins at 6 s. Every tick runs real verifier scripts, so fewer ticks is what makes it cheap.
QUICK_RACE = {
    "builder-one": ScriptedPlan(ready_at_ms=6_000, storage="disk"),
    "builder-two": ScriptedPlan(ready_at_ms=1_000, storage="memory"),
    "builder-three": ScriptedPlan(ready_at_ms=2_500, storage="tmpfs"),
}


class GatedBootProvider(ScriptedProvider):
    """Scripted territories that report booting and then wait for `gate` (the preparation view's moment)."""

    def __init__(self, plans: dict[str, ScriptedPlan]) -> None:
        super().__init__(plans)
        self.gate = asyncio.Event()

    async def boot(self, manifest, match_dir, recorder, clock):
        recorder.progress("image", "guest image ready (scripted)")
        for territory in manifest.territories:
            recorder.progress("boot", "booting scripted territory", territory.id)
        recorder.progress("ssh", "SSH preflight passed after 12.5 s", manifest.territories[0].id)
        await self.gate.wait()
        return await super().boot(manifest, match_dir, recorder, clock)


class RivalsFirstProvider(ScriptedProvider):
    """`winner`'s guest reboots only once no rival is being checked, so the rivals' checks of the winning tick
    end before the match does, as a real reboot's minute lets them, and a finished screen is the same on every
    run (else a rival's check, cut by the end of the match, is recorded as cancelled or not by a process race)."""

    def __init__(self, plans: dict[str, ScriptedPlan], winner: str) -> None:
        super().__init__(plans)
        self.winner = winner

    async def boot(self, manifest, match_dir, recorder, clock):
        booted = await super().boot(manifest, match_dir, recorder, clock)
        host = self.hosts[self.winner]
        reboot = host.reboot

        def rival_checked() -> bool:
            return any(
                milestone.evaluating
                for territory_id, territory in recorder.world.territories.items()
                if territory_id != self.winner
                for milestone in territory.milestones.values()
            )

        async def after_the_rivals(timeout: float):
            while rival_checked():
                await asyncio.sleep(0.01)
            return await reboot(timeout)

        host.reboot = after_the_rivals  # type: ignore[method-assign]  # this one host's reboot waits for the rivals
        return booted


class SlowTeardownProvider(ScriptedProvider):
    """Destroying the territories waits for `gate` (real guests take seconds to go)."""

    def __init__(self, plans: dict[str, ScriptedPlan]) -> None:
        super().__init__(plans)
        self.gate = asyncio.Event()
        self.tearing_down = False

    async def teardown(self) -> None:
        self.tearing_down = True
        await self.gate.wait()
        await super().teardown()


class FailingBootProvider(ScriptedProvider):
    """One guest never answers SSH: the runner must abort before the match opens."""

    CONSOLE = [
        "[    0.000000] Linux version 6.1.0-cloud-amd64",
        "[    2.100000] EXT4-fs (vda): mounted filesystem",
        "[   31.500000] systemd[1]: Failed to start ssh.service - OpenBSD Secure Shell server.",
    ]

    async def boot(self, manifest, match_dir, recorder, clock):
        for territory in manifest.territories:
            recorder.progress("boot", "booting VM", territory.id)
        failing = manifest.territories[1].id
        console = match_dir.territory(failing).console_log
        console.parent.mkdir(parents=True, exist_ok=True)
        console.write_text("\n".join(self.CONSOLE) + "\n")
        recorder.progress("ssh", "SSH preflight passed after 16.0 s", manifest.territories[0].id)
        raise AoeError(f"{failing}: SSH did not answer within 240 s")


def live_app(
    output: Path,
    source: ManualSource,
    provider: ScriptedProvider | None = None,
    manifest: Path = ARENA,
    launcher: ScriptedLauncher | None = None,
) -> LiveApp:
    """The live app racing `manifest` (the LIVE_RACE plans by default) into `output`, its match on `source`."""
    runner = MatchRunner(
        manifest,
        output,
        provider or ScriptedProvider(dict(LIVE_RACE)),
        launcher or ScriptedLauncher(),
        source=source,
        drain_seconds=4,
    )
    return LiveApp(runner, clock=ManualSource().now)


async def until(pilot, condition, seconds: float = 90.0) -> None:
    """Let the app and the engine run until `condition()` holds (generous: a whole scripted race runs real
    verifier scripts, and two test workers share two cores)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition never held")
        await asyncio.sleep(0.02)
    await pilot.pause()


async def hold_at(pilot, source: ManualSource, seconds: float) -> None:
    """Run the match to `seconds` of match-source time and wait there with the screen up to date."""
    source.limit = seconds
    await until(pilot, lambda: source.held and source.now() >= seconds)
    await pilot.pause()


def repeatable_arena(directory: Path) -> Path:
    """First Build with verifiers whose "fresh" record ids are all zeros, so failure details and
    evidence read the same on every run (the real ones draw from /dev/urandom)."""
    verify = directory / "verify"
    shutil.copytree(PROJECT / "verify", verify)
    lib = verify / "lib.sh"
    lib.write_text(
        lib.read_text().replace(
            "hex() { od -An -tx1 -N\"$1\" /dev/urandom | tr -d ' \\n'; }", "hex() { printf '%0*d' \"$(($1 * 2))\" 0; }"
        )
    )
    assert "/dev/urandom" not in lib.read_text()
    data = arena_data()
    for milestone in data["build"]["milestones"]:
        milestone["verifier"] = str(verify / Path(milestone["verifier"]).name)
    path = directory / "arena.json"
    path.write_text(json.dumps(data))
    return path
