"""The live app under stress: matches played one after another while a random operator works the screen.

Each round is a scripted First Build match (random guest plans, so some are
won early and some run to the timer) on a fast clock, watched by the live app
headless. Until a random moment the script scrubs (bursts of seeks, as a
drag posts them), steps and jumps, pauses and resumes the match or a
milestone, opens dialogs and the drill-down, selects territories and resizes
the terminal; then it quits (confirming the abort when the match is still on).

It fails — exit status 1 with the first problem on one line (or the app's
own traceback when it raised) — when the engine stops on an error, the screen ever shows an event the
recorder did not make or in another order, the screen does not catch up with
the recorder, or the log on disk differs from what the recorder made.

    .venv/bin/python benchmarks/live_stress.py [--minutes M | --seconds S] [--seed N] [--speed X]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from aoe_tui.app.screens.dialogs import ConfirmScreen
from aoe_tui.app.live_app import LiveApp
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.preparation import PreparationScreen
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.testing.scripted_host import ScriptedPlan
from aoe_tui.testing.scripted_provider import ScriptedLauncher, ScriptedProvider
from aoe_tui.store.event_log import read_event_log

ARENA = Path(__file__).resolve().parents[1] / "arenas" / "first-build" / "arena.toml"
TERRITORIES = ("builder-one", "builder-two", "builder-three")
SIZES = [(80, 24), (120, 40), (160, 48), (200, 60), (100, 30)]
KEYS = [
    "left",
    "right",
    "home",
    "end",
    "shift+left",
    "shift+right",
    "space",
    "s",
    "left_square_bracket",
    "right_square_bracket",
    "1",
    "2",
    "3",
    "e",
    "c",
    "k",
    "t",
    "x",
]
CATCH_UP_S = 10.0
LEAVE_S = 60.0
MIN_ACTING_S = 2.0  # the least a round may be worked while no operator move has been made yet


class StressFailure(AssertionError):
    """What the operator saw go wrong, in one line."""


class FastSource:
    """Match time `speed` times faster than the wall clock, virtual (each tick's checks settle before the
    clock moves on) but really waiting, so the UI and the engine interleave as in a real match."""

    virtual = True

    def __init__(self, speed: float) -> None:
        self.speed = speed
        self._now = 0.0

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        seconds = max(seconds, 0.0)
        await asyncio.sleep(seconds / self.speed)
        self._now += seconds


@dataclass
class Tally:
    rounds: int = 0
    finished: int = 0
    aborted: int = 0
    events: int = 0
    actions: int = 0
    max_lag: int = 0

    def line(self, seconds: float) -> str:
        return (
            f"{self.rounds} rounds in {seconds:.0f} s: {self.finished} finished, {self.aborted} aborted, "
            f"{self.events} events checked, {self.actions} operator actions, largest screen lag "
            f"{self.max_lag} events; no exception, no lost or reordered event"
        )


def random_plans(rng: random.Random) -> dict[str, ScriptedPlan]:
    """Guests that come up early, late or never (then the timer decides), with honest or flawed storage."""
    return {
        tid: ScriptedPlan(
            ready_at_ms=rng.choice([0, 4_000, 10_000, 24_000, 10**9]),
            storage=rng.choice(["disk", "disk", "memory", "tmpfs"]),
            reboot_fails=rng.random() < 0.15,
        )
        for tid in TERRITORIES
    }


def check_screen(app: LiveApp, tally: Tally) -> None:
    """What the screen shows is exactly the start of what the recorder made: same events, same order."""
    screen, recorder = app.match_screen, app.runner.recorder
    if screen is None or recorder is None:
        return
    shown = screen.session.timeline.events
    made = recorder.events
    if len(shown) > len(made):
        raise StressFailure(f"the screen shows {len(shown)} events, the recorder made {len(made)}")
    for position, event in enumerate(shown):
        if event is not made[position]:
            raise StressFailure(
                f"screen event {position} is #{event.sequence} {event.kind}, "
                f"the recorder's is #{made[position].sequence} {made[position].kind}"
            )
    tally.max_lag = max(tally.max_lag, len(made) - len(shown))


async def act(pilot, app: LiveApp, rng: random.Random, tally: Tally) -> None:
    """One random operator move on whatever is on top."""
    tally.actions += 1
    screen = app.screen
    if not isinstance(screen, LiveMatchScreen):
        await pilot.press("escape")  # a dialog, the drill-down or the preparation view: back out
        return
    roll = rng.random()
    if roll < 0.30:  # a drag: a burst of seeks, coalesced by the screen
        scrubber = screen.query_one(TimelineScrubber)
        for _ in range(rng.randint(1, 30)):
            scrubber.post_message(TimelineScrubber.Seek(rng.randint(0, max(scrubber.duration_ms, 1))))
    elif roll < 0.60:
        await pilot.press(*rng.choices(KEYS, k=rng.randint(1, 4)))
    elif roll < 0.70:
        await pilot.press("p", "y")  # pause (ignored when disabled: then "y" does nothing)
    elif roll < 0.80:
        await pilot.press("r")
    elif roll < 0.85:
        await pilot.press(rng.choice(["m", "n", "y"]))
        await pilot.pause(0.01)
        await pilot.press(*rng.choice([["enter"], ["down", "enter"], ["escape"]]))
    elif roll < 0.90:
        await pilot.press("d")
        await pilot.pause(rng.uniform(0, 0.05))
        await pilot.press("escape")
    else:
        await pilot.resize_terminal(*rng.choice(SIZES))


async def wait_for(pilot, condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise StressFailure(what)
        await pilot.pause(0.02)


async def one_round(directory: Path, rng: random.Random, speed: float, tally: Tally, remaining: float) -> None:
    """One match, watched and worked until a random moment (never past `remaining` seconds), then quit."""
    output = directory / f"round-{tally.rounds:04d}"
    runner = MatchRunner(
        ARENA,
        output,
        ScriptedProvider(random_plans(rng)),
        ScriptedLauncher(),
        source=FastSource(speed),
        drain_seconds=rng.choice([0, 1, 3]),
    )
    app = LiveApp(runner, clock=time.monotonic)
    quit_after = min(rng.choice([0.0, rng.uniform(0, 2), rng.uniform(0, 20), rng.uniform(5, 40)]), remaining)
    async with app.run_test(size=rng.choice(SIZES)) as pilot:
        started = time.monotonic()
        while time.monotonic() - started < quit_after and app.engine_running:
            await act(pilot, app, rng, tally)
            await pilot.pause(rng.uniform(0, 0.03))
            check_screen(app, tally)
        if app.match_screen is not None and app.match_screen.is_attached:
            recorder = app.runner.recorder
            await wait_for(
                pilot,
                lambda: len(app.match_screen.session.timeline) == len(recorder.events),
                CATCH_UP_S,
                "the screen never caught up with the recorder",
            )
            check_screen(app, tally)
        for _ in range(5):  # close whatever dialog is open, so "q" reaches the view
            if isinstance(app.screen, (LiveMatchScreen, PreparationScreen)) or not app.is_running:
                break
            await pilot.press("escape")
        await pilot.press("q")
        await pilot.pause()
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("y")
        await wait_for(
            pilot,
            lambda: not app.is_running,
            LEAVE_S,
            f"the app did not leave after quitting (showing {type(app.screen).__name__}, "
            f"engine {'running' if app.engine_running else 'stopped'})",
        )
    if app.engine_error is not None:
        raise StressFailure(f"the engine stopped on an error: {app.engine_error}")
    check_screen(app, tally)
    on_disk = [event.to_json() for event in read_event_log(runner.match_dir.events)]
    made = [event.to_json() for event in runner.recorder.events] if runner.recorder else []
    if on_disk != made:
        raise StressFailure(f"{runner.match_dir.events}: {len(on_disk)} events on disk, {len(made)} made")
    final = runner.world.match_state
    if final not in ("finished", "aborted"):
        raise StressFailure(f"{output}: the log ends in {final!r}")
    crashed = [e for e in on_disk if "the app crashed" in str(e.get("reason", ""))]
    if crashed:
        raise StressFailure(f"{output}: {crashed[0]['reason']}")
    tally.rounds += 1
    tally.events += len(on_disk)
    tally.finished += final == "finished"
    tally.aborted += final == "aborted"


async def stress(seconds: float, seed: int, speed: float, directory: Path) -> Tally:
    """Rounds until `seconds` have passed and the operator has acted at least once (a round may quit at once:
    a short run of such rounds would check no operator move at all)."""
    rng, tally = random.Random(seed), Tally()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or tally.actions == 0:
        remaining = max(deadline - time.monotonic(), 0.0)
        await one_round(directory, rng, speed, tally, remaining if tally.actions else max(remaining, MIN_ACTING_S))
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    span = parser.add_mutually_exclusive_group()
    span.add_argument("--minutes", type=float, help="how long to keep playing rounds (default 1)")
    span.add_argument("--seconds", type=float, help="the same in seconds")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the time, printed)")
    parser.add_argument("--speed", type=float, default=40.0, help="match seconds per wall second (default 40)")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else 60 * (args.minutes or 1)
    seed = args.seed if args.seed is not None else int(time.time())
    print(f"live stress: seed {seed}, {seconds:.0f} s, speed {args.speed:g}x", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="aoe-live-stress-") as directory:
        try:
            tally = asyncio.run(stress(seconds, seed, args.speed, Path(directory)))
        except StressFailure as failure:
            print(f"live stress FAILED (seed {seed}): {failure}", file=sys.stderr)
            return 1
    print(tally.line(time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
