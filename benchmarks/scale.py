"""Performance at scale: synthetic build races of 10^4, 10^5 and 10^6 events, ratios against same-run baselines.

For each size (`benchmarks/synthetic_match.py`, cached) it prints:
- load + validate + reduce (`load_match`: one pass that also keeps keyframes) against a bare `json.loads`
  loop over the same file, best of a few runs of each, interleaved;
- the same load with every body distinct (the body cache off): a log that never repeats an event;
- load throughput in events per second;
- seek (`state_at`) p50/p99 over random positions, against a fold from event zero;
- peak RSS of a child process that loads the match and everything the app derives from it, against the
  file size;
- the app (a child process, headless): `aoe replay`'s load to the first frame of the match screen, the
  whole log read in the background, then the time of each frame stepping (from mid-match), seeking to
  random moments (a click on the scrubber), End, Home, the space key that starts playing, and playing at 60x;
- the app as a user meets it, `aoe replay` in a real terminal (tmux), wall time against a json.loads loop
  over the same file measured beside it: the first frame, the whole log counted, End, a seek and Home pressed
  1 s after the first frame (End followed to the true last event), and a log of distinct bodies counted.
Then the browser (`aoe open`, headless) on 30 saved matches never seen: when every match is listed (each row
"reading…" until read) and when every row is filled in; the listing's read alone, cold and with the summary
cache warm; and the series view of the same 30 rounds.

The load, seek and fold figures are CPU time (`time.process_time`), each the best of interleaved runs: on a
shared machine a wall clock measures the neighbours, while the ratio of two CPU times in one process holds.
The app's figures are wall time, what a user waits for, and each frame's CPU time too: the app's process
runs alone, so on a quiet machine the two agree, and on a busy one the CPU time is the fair figure. A frame's
CPU is counted from the key's action until the app is idle again, its wall time until the update's bytes are
made (what a user waits for); both include making those bytes (a real terminal's driver does that; headless
Textual skips it, so the child does it as the driver would). Neither includes the test pilot's own wait (a
message to every widget, then waiting for each to answer): no user's app runs that, and at a hundred widgets
it was a third of a step's frame.

    nice -n 19 .venv/bin/python benchmarks/scale.py [--quick]      # --quick: 10^4 and 10^5 only
    nice -n 19 .venv/bin/python benchmarks/scale.py --only app --sizes 100000 [--profile app.prof]

`--only app` measures the app's frames alone (the quick loop while working on them); `--profile FILE` writes
a cProfile of the app child's timed frames (`python -m pstats FILE`).

Prints figures; not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import re
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

from aoe_tui.domain.reducer import apply_at
from aoe_tui.domain.world import World
from aoe_tui.store.saved_match import load_match
from benchmarks.synthetic_match import distinct_match, synthetic_match

SIZES = (10_000, 100_000, 1_000_000)
QUICK_SIZES = (10_000, 100_000)
SEEKS = 200
CATALOG_MATCHES = 30
# The app's frames: (what the table calls it, the child's name for it). "space" is the key that starts the
# playback (its own frame: the status line and the footer change); "play 60x" the playback's ticks after it.
FRAME_KINDS = (
    ("step", "step"),
    ("seek", "seek"),
    ("End", "end"),
    ("Home", "home"),
    ("space", "space"),
    ("play 60x", "play"),
)


def best(function, repeats: int, clock=time.process_time) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        function()
        times.append(clock() - start)
    return min(times)


def json_loads_loop(path: Path) -> None:
    with open(path, "rb") as log:
        for line in log:
            json.loads(line)


def load_figures(folder: Path, count: int) -> dict[str, float]:
    """Load against the json.loads loop, each the best of interleaved runs (the machine's load drifts)."""
    path = folder / "events.jsonl"
    repeats = 3 if count <= 100_000 else 2
    baseline, load = float("inf"), float("inf")
    for _ in range(repeats):
        baseline = min(baseline, best(lambda: json_loads_loop(path), 1))
        load = min(load, best(lambda: load_match(folder), 1))
    # Every body different (`distinct_match`: each event with a field of its own), against its own loop.
    distinct_folder = distinct_match(count)
    distinct_baseline, distinct = float("inf"), float("inf")
    for _ in range(repeats):
        distinct_baseline = min(distinct_baseline, best(lambda: json_loads_loop(distinct_folder / "events.jsonl"), 1))
        distinct = min(distinct, best(lambda: load_match(distinct_folder), 1))
    return {"baseline": baseline, "load": load, "distinct": distinct, "distinct_baseline": distinct_baseline}


def seek_figures(folder: Path, count: int) -> dict[str, float]:
    timeline = load_match(folder).timeline
    assert timeline is not None
    rng = random.Random(5)
    seeks = []
    for position in rng.sample(range(count), SEEKS):
        start = time.process_time()
        timeline.state_at(position)
        seeks.append(time.process_time() - start)
    seeks.sort()

    def fold_from_zero(position: int) -> None:
        world = World()
        for at in range(position + 1):
            apply_at(world, *timeline.events.split(at))  # type: ignore[attr-defined]

    folds = [best(partial(fold_from_zero, p), 1) for p in rng.sample(range(count), 2)]
    return {
        "seek_p50": seeks[len(seeks) // 2],
        "seek_p99": seeks[int(len(seeks) * 0.99) - 1],
        "fold": statistics.median(folds),
    }


def child(script: str, *args: str) -> dict:
    """Run this file's `script` mode in a fresh interpreter (its peak memory is its own) and read its JSON."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", script, *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{script} {args}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def high_water() -> int:
    """This process's peak resident memory: VmHWM (ru_maxrss would count the forking parent's peak too)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


def child_memory(folder: str) -> None:
    from aoe_tui.app.view.session import MatchSession

    imported = high_water()  # the interpreter and the app's modules
    session = MatchSession(load_match(folder))  # keyframes, columns, markers, the event list's rows
    session.timeline.state_at(len(session.timeline) // 2)
    print(json.dumps({"peak_rss": high_water(), "imported": imported}))


def child_app(folder: str, frames: str, profile: str = "") -> None:
    """`aoe replay FOLDER`'s own path (preview load, app) headless; times `frames` frames of each kind
    (profiled into the file `profile` when one is named)."""
    import asyncio
    import cProfile

    from textual._wait import wait_for_idle

    from aoe_tui.app.app import AoeApp
    from aoe_tui.app.screens.match_screen import MatchScreen
    from aoe_tui.store.saved_match import PREVIEW_BYTES

    figures: dict[str, float | list[float]] = {}
    read_whole_log = MatchScreen._read_whole_log

    def first_frame_drawn(screen: MatchScreen):  # the screen starts the read once its first frame is drawn
        figures.setdefault("first_frame", time.perf_counter() - started)
        return read_whole_log(screen)

    MatchScreen._read_whole_log = first_frame_drawn  # type: ignore[method-assign]
    started = time.perf_counter()

    async def run() -> None:
        app = AoeApp(load_match(folder, preview_bytes=PREVIEW_BYTES))
        display = app._display

        written = [0.0]  # when the last update's bytes were made

        def display_as_a_terminal_would(screen, update) -> None:
            display(screen, update)
            if update is not None:
                update.render_segments(app.console)  # the bytes a real terminal's driver writes
                written[0] = time.perf_counter()

        app._display = display_as_a_terminal_would  # type: ignore[method-assign]
        async with app.run_test(size=(160, 48)) as pilot:
            while not isinstance(app.screen, MatchScreen):
                await pilot.pause(0.01)
            await pilot.pause()
            figures.setdefault("first_frame", time.perf_counter() - started)  # a log short enough to read at once
            screen = app.screen
            while screen.reading is not None:
                await pilot.pause(0.05)
            figures["whole_log"] = time.perf_counter() - started
            await pilot.pause()

            async def frame(name: str, action) -> None:
                """`name`: the screen's own work (state at the cursor, every widget told); the frame's CPU (that
                plus Textual's layout and render and the terminal's bytes, until the app is idle again); and
                the wall time from the action to its update's bytes (Textual draws at its next refresh, up to
                a sixtieth of a second later). Not to idle: telling idle takes `wait_for_idle` two 20 ms naps."""
                start, cpu = time.perf_counter(), time.process_time()
                action()
                computed = time.perf_counter()
                await wait_for_idle(0)
                app.screen._on_timer_update()  # (as the pilot ends its pause: an update still pending is drawn)
                figures.setdefault(f"{name}_work", []).append(computed - start)  # type: ignore[union-attr]
                figures.setdefault(f"{name}_written", []).append(written[0] - start)  # type: ignore[union-attr]
                figures.setdefault(f"{name}_cpu", []).append(time.process_time() - cpu)  # type: ignore[union-attr]

            screen.seek(screen.playback.duration_ms // 2)  # stepping where a user scrubs: mid-match
            await pilot.pause()
            if profile:
                profiler.enable()
            for _ in range(int(frames)):
                await frame("step", lambda: screen.action_step(1))
            moments = random.Random(7)
            for _ in range(int(frames)):  # a click on the scrubber: anywhere in the match
                moment = moments.randrange(screen.playback.duration_ms + 1)
                await frame("seek", partial(screen.seek, moment))
            for _ in range(max(int(frames) // 5, 1)):
                await frame("end", screen.action_end)
                await frame("home", screen.action_home)
            now = [0.0]
            app.clock = lambda: now[0]
            screen.playback.speed = 60
            await frame("space", screen.action_toggle_play)

            def tick() -> None:
                now[0] += 0.1  # one play interval: 6 s of match time at 60x
                screen._tick()

            for _ in range(int(frames)):
                await frame("play", tick)
            if profile:
                profiler.disable()
                profiler.dump_stats(profile)

    profiler = cProfile.Profile()
    asyncio.run(run())
    print(json.dumps(figures))


class Terminal:
    """`aoe replay FOLDER` in a real terminal: a 160x48 tmux window of its own tmux server, read as a user
    reads it (`capture-pane`, a few milliseconds a look)."""

    def __init__(self, folder: Path) -> None:
        self.name = f"aoe-bench-{uuid.uuid4().hex[:8]}"
        aoe = Path(sys.executable).parent / "aoe"
        self.started = time.perf_counter()
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.name,
            "-x",
            "160",
            "-y",
            "48",
            # This tree's code, whichever tree the venv's `aoe` was installed from (a worktree measures itself).
            f"env -u COLUMNS -u LINES PYTHONPATH={PROJECT} {aoe} replay {folder}; sleep 5",
        )

    def _tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.name, "-f", "/dev/null", *args], check=True, capture_output=True, text=True
        ).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def cursor(self) -> tuple[int, int, str] | None:
        """(the cursor's event, the events loaded, the screen) once the status line is drawn."""
        screen = self.screen()
        found = STATUS.search(screen)
        return (int(found.group(1)), int(found.group(2)), screen) if found else None

    def until(self, done, timeout: float = 300.0) -> tuple[float, tuple[int, int, str]]:
        """(seconds since the terminal opened, the cursor) at the first look where `done(cursor)`. A look
        every `LOOK_EVERY_S` at most: looking without a pause (a tmux client started per look) took most of a
        core from the app and its reader, on a machine of two."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            cursor = self.cursor()
            if cursor is not None and done(cursor):
                return time.perf_counter() - self.started, cursor
            time.sleep(LOOK_EVERY_S)
        raise RuntimeError(f"{self.name}: never came; the screen was:\n{self.screen()}")

    def press(self, *keys: str, literal: bool = False) -> float:
        """Send keys; the time they were sent, since the terminal opened."""
        sent = time.perf_counter() - self.started
        self._tmux("send-keys", "-t", self.name, *(["-l"] if literal else []), *keys)
        return sent

    def click_track(self, x: int) -> float:
        """A click at column `x` of the scrubber's track, the line above its status (an SGR mouse press and
        release, as the terminal sends them)."""
        y = next(number for number, line in enumerate(self.screen().splitlines()) if STATUS.search(line)) - 1
        return self.press(f"\x1b[<0;{x + 1};{y + 1}M\x1b[<0;{x + 1};{y + 1}m", literal=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.name, "kill-server"], capture_output=True, check=False)


STATUS = re.compile(r"event (\d+)/(\d+)")
LOOK_EVERY_S = 0.01  # the figures' resolution: a look itself takes a few milliseconds
KEY_DELAY_S = 1.0  # a key is pressed this long after the first frame, while a long log is still loading


def terminal_figures(folder: Path, count: int) -> dict[str, float]:
    """The app as a user meets it, in a real terminal, against the json.loads loop (wall time, best of two,
    measured next to the app's runs): the first frame, the whole log counted (the status line's `/N`), and
    End, a scrubber click (seek) and Home pressed 1 s after the first frame: how soon each one's frame is on
    the screen, and when End, pressed during the load, is on the true last event (it follows the end as the
    log loads). Two runs: End alone (it must keep following), then the seek and Home; then the whole log
    counted for a log whose bodies all differ (`distinct_match`), against its own loop."""
    loop = min(best(lambda: json_loads_loop(folder / "events.jsonl"), 1, time.perf_counter) for _ in range(2))
    figures: dict[str, float] = {"loop": loop}
    terminal = Terminal(folder)
    try:
        figures["first_frame"], _ = terminal.until(lambda cursor: "REPLAY" in cursor[2])
        time.sleep(max(figures["first_frame"] + KEY_DELAY_S - (time.perf_counter() - terminal.started), 0))
        before = terminal.cursor()
        assert before is not None
        figures["end_loading"] = before[1] < count
        sent = terminal.press("End")
        shown, _ = terminal.until(lambda cursor: cursor[0] == cursor[1] and cursor[0] >= before[1], timeout=10)
        figures["end_key"] = shown - sent
        figures["end_on_last"], _ = terminal.until(lambda cursor: cursor[:2] == (count, count))
        figures["counted"] = figures["end_on_last"]
    finally:
        terminal.close()
    terminal = Terminal(folder)
    try:
        figures["first_frame_2"], _ = terminal.until(lambda cursor: "REPLAY" in cursor[2])
        time.sleep(max(figures["first_frame_2"] + KEY_DELAY_S - (time.perf_counter() - terminal.started), 0))
        before = terminal.cursor()
        assert before is not None
        figures["seek_loading"] = before[1] < count
        sent = terminal.click_track(80)
        shown, after = terminal.until(lambda cursor: cursor[0] != before[0], timeout=10)
        figures["seek_key"] = shown - sent
        sent = terminal.press("Home")
        shown, _ = terminal.until(lambda cursor: cursor[0] == 0, timeout=10)
        figures["home_key"] = shown - sent
        figures["home_loading"] = after[1] < count
        figures["counted_2"], _ = terminal.until(lambda cursor: cursor[1] == count)
    finally:
        terminal.close()
    distinct = distinct_match(count)  # every body different: the app's load against that log's own loop
    figures["distinct_loop"] = min(
        best(lambda: json_loads_loop(distinct / "events.jsonl"), 1, time.perf_counter) for _ in range(2)
    )
    terminal = Terminal(distinct)
    try:
        figures["distinct_counted"], _ = terminal.until(lambda cursor: cursor[1] == count)
    finally:
        terminal.close()
    return figures


def terminal_rows(count: int, figures: dict[str, float]) -> dict[str, str]:
    loop = figures["loop"]

    def ratio(seconds: float) -> str:
        return f"{seconds:.2f} s = {seconds / loop:.2f}x"

    def key(name: str) -> str:
        during = "" if figures[f"{name}_loading"] else " (loaded)"
        return f"{ms(figures[f'{name}_key'])}{during}"

    return {
        "terminal: json.loads loop (wall)": f"{loop:.2f} s",
        "terminal: first frame (target <= 0.5x)": ratio(min(figures["first_frame"], figures["first_frame_2"])),
        "terminal: whole log counted": ratio(min(figures["counted"], figures["counted_2"])),
        "terminal: End at +1 s, its frame (<= 100 ms)": key("end"),
        "terminal: End at +1 s, on the last event (<= 1.0x)": ratio(figures["end_on_last"]),
        "terminal: seek at +1 s, its frame (<= 100 ms)": key("seek"),
        "terminal: Home after it, its frame (<= 100 ms)": key("home"),
        "terminal: every body distinct, counted (<= 1.2x)": f"{figures['distinct_counted']:.2f} s = "
        f"{figures['distinct_counted'] / figures['distinct_loop']:.2f}x",
    }


def terminal_table(sizes: tuple[int, ...]) -> None:
    """`--only terminal`: the real terminal's figures alone."""
    columns = []
    for count in sizes:
        columns.append(terminal_rows(count, terminal_figures(synthetic_match(count), count)))
        print(f"... {count} events measured", file=sys.stderr, flush=True)
    print(row("events", [f"{count:,}" for count in sizes]))
    for label in columns[0]:
        print(row(label, [column[label] for column in columns]))


def catalog_figures(folder: Path) -> dict[str, float]:
    """30 matches (hard links to one log) as a series folder: the browser's listing, cold and with the
    summary cache warm, and the series view's overview (standings, rounds, grid) of the same 30 rounds."""
    from aoe_tui.analysis.series_overview import overview
    from aoe_tui.app.view.match_catalog import build_catalog
    from aoe_tui.store.summary_cache import SummaryCache

    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as cache:
        for number in range(CATALOG_MATCHES):
            match = Path(root) / f"round-{number + 1:03d}"
            match.mkdir()
            for file in folder.iterdir():
                os.link(file, match / file.name)
        listed, all_read = asyncio.run(browser_listing(Path(root), Path(cache) / "browser"))
        summaries = Path(cache) / "match-summaries.json"
        cold = best(lambda: build_catalog([Path(root)], SummaryCache(summaries)), 1, time.perf_counter)
        warm = best(lambda: build_catalog([Path(root)], SummaryCache(summaries)), 3, time.perf_counter)
        rounds = Path(cache) / "round-summaries.json"
        series_cold = best(lambda: overview(Path(root), SummaryCache(rounds)), 1, time.perf_counter)
        series_warm = best(lambda: overview(Path(root), SummaryCache(rounds)), 3, time.perf_counter)
    return {
        "cold": cold,
        "warm": warm,
        "series_cold": series_cold,
        "series_warm": series_warm,
        "browser_listed": listed,
        "browser_read": all_read,
    }


async def browser_listing(root: Path, cache: Path) -> tuple[float, float]:
    """`aoe open` on matches never seen (an empty summary cache), wall seconds from its start until every match
    is listed, and until every row is read and filled in."""
    from textual.widgets import DataTable

    from aoe_tui.app.app import AoeApp
    from aoe_tui.app.screens.browser import BrowserScreen

    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        started = time.perf_counter()
        app = AoeApp(roots=[root])
        async with app.run_test(size=(160, 50)) as pilot:
            while not (isinstance(app.screen, BrowserScreen) and app.screen.query_one(DataTable).row_count):
                await pilot.pause(0.005)
            listed = time.perf_counter() - started
            await app.workers.wait_for_complete()
            return listed, time.perf_counter() - started
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME")
        else:
            os.environ["XDG_CACHE_HOME"] = saved


def row(label: str, values: list[str]) -> str:
    return f"{label:<42}" + "".join(f"{value:>22}" for value in values)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def app_frames(sizes: tuple[int, ...], frames: int, profile: str | None) -> None:
    """`--only app`: the app's frame figures alone, one line per kind of frame."""
    for count in sizes:
        folder = synthetic_match(count)
        app = child("app", str(folder), str(frames), *([f"{profile}.{count}"] if profile else []))
        for what, name in FRAME_KINDS:
            cpu = app[name + "_cpu"]
            print(row(f"{count:,} {what}: frame CPU median / max", [f"{ms(statistics.median(cpu))} / {ms(max(cpu))}"]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10^4 and 10^5 events only (under a minute)")
    parser.add_argument(
        "--only", choices=["app", "terminal"], help="only the app's frame figures, or only the real terminal's"
    )
    parser.add_argument("--sizes", type=int, nargs="+", help="these event counts instead of the usual ones")
    parser.add_argument("--frames", type=int, help="frames of each kind (default: 5 with --quick, else 10)")
    parser.add_argument("--profile", metavar="FILE", help="with --only app: cProfile the frames into FILE.N")
    parser.add_argument("--child", nargs="+", metavar="MODE", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        {"memory": child_memory, "app": child_app}[args.child[0]](*args.child[1:])
        return
    sizes = tuple(args.sizes) if args.sizes else QUICK_SIZES if args.quick else SIZES
    frames = args.frames or (5 if args.quick else 10)
    if args.only == "app":
        app_frames(sizes, frames, args.profile)
        return
    if args.only == "terminal":
        terminal_table(sizes)
        return
    columns: list[dict[str, str]] = []
    for count in sizes:
        folder = synthetic_match(count)
        size = (folder / "events.jsonl").stat().st_size
        load, seek = load_figures(folder, count), seek_figures(folder, count)
        memory, app = child("memory", str(folder)), child("app", str(folder), str(frames))
        terminal = terminal_figures(folder, count)
        columns.append(
            {
                "file": f"{size / 2**20:.1f} MiB",
                "json.loads loop (CPU)": f"{load['baseline']:.2f} s",
                "load + validate + reduce (CPU)": f"{load['load']:.2f} s",
                "  ratio to json.loads (target <= 1.0x)": f"{load['load'] / load['baseline']:.2f}x",
                "  every body distinct: ratio (target <= 1.2x)": f"{load['distinct'] / load['distinct_baseline']:.2f}x",
                "load throughput": f"{count / load['load'] / 1000:.0f} k events/s",
                "seek p50 / p99": f"{ms(seek['seek_p50'])} / {ms(seek['seek_p99'])}",
                "fold from zero (median of 2)": ms(seek["fold"]),
                "  seek p99 speed-up": f"{seek['fold'] / seek['seek_p99']:.0f}x",
                "peak RSS (target <= 3x file)": f"{memory['peak_rss'] / 2**20:.0f} MiB",
                "  ratio to file": f"{memory['peak_rss'] / size:.1f}x",
                "  of which the interpreter and modules": f"{memory['imported'] / 2**20:.0f} MiB",
                "app: first frame (target < 3 s)": f"{app['first_frame']:.2f} s",
                "app: whole log read (background)": f"{app['whole_log']:.2f} s",
                **{
                    f"{what}: frame CPU median / max (target < 33 ms)": f"{ms(statistics.median(app[name + '_cpu']))}"
                    f" / {ms(max(app[name + '_cpu']))}"
                    for what, name in FRAME_KINDS
                },
                **{
                    f"{what}: wall max, work / to its bytes": f"{ms(max(app[name + '_work']))} / "
                    f"{ms(max(app[name + '_written']))}"
                    for what, name in FRAME_KINDS
                },
                **terminal_rows(count, terminal),
            }
        )
        print(f"... {count} events measured", file=sys.stderr, flush=True)
    print(row("events", [f"{count:,}" for count in sizes]))
    for label in columns[0]:
        print(row(label, [column[label] for column in columns]))
    catalog = catalog_figures(synthetic_match(sizes[0]))
    print(
        f"browser (`aoe open`) on {CATALOG_MATCHES} matches of {sizes[0]:,} events never seen: all listed after "
        f"{catalog['browser_listed']:.2f} s (target < 2 s), every row read after {catalog['browser_read']:.2f} s; "
        f"the listing's read alone: cold {catalog['cold']:.2f} s, "
        f"summaries cached {catalog['warm']:.2f} s (target < 2 s); the series view of the same 30 rounds: cold "
        f"{catalog['series_cold']:.2f} s, summaries cached {catalog['series_warm']:.2f} s"
    )


if __name__ == "__main__":
    main()
