"""`aoe series`, `aoe benchmark` and `aoe standings`: many matches unattended, and who is best.

`aoe series` runs in the app unless `--headless`; both run the same `SeriesRunner`, so they resume,
checkpoint and end (exit status and closing lines) the same way. `aoe benchmark` is headless.

Standings are always recomputed from the round matches on disk (never copied
from `series.json`), so what this prints is what the matches say.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aoe_tui.analysis.intervals import interval_lines
from aoe_tui.analysis.standings import standings_report
from aoe_tui.analysis.standings_format import standings_table
from aoe_tui.cli.options import add_drain_option, add_uri_option, check_drain_seconds
from aoe_tui.cli.terminal_line import tell
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.benchmark import BenchmarkRunner
from aoe_tui.engine.host_pool import HostPool
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.narration import Narrator
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.series import (
    DEFAULT_REPLAYS,
    RoundPlan,
    RunnerFactory,
    SeriesRunner,
    SeriesStopped,
)
from aoe_tui.engine.stop_signals import exit_status, stop_on_signals, stop_reason
from aoe_tui.store.manifest_file import load_manifest
from aoe_tui.store.hosts_file import read_inventory
from aoe_tui.store.series_files import read_suite

SERIES_DIR = Path("series")
BENCHMARK_DIR = Path("benchmark")


def standings(args: argparse.Namespace) -> int:
    report = standings_report(args.path)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print("\n".join(standings_table(report["standings"])))
    print("\n".join(interval_lines(report["standings"])))
    for arena in report.get("arenas", []):
        print(f"\narena {arena['arena_id']}")
        print("\n".join(standings_table(arena["standings"])))
    return 0


def real_round_factory(args: argparse.Namespace, manifest_path: Path, pool: HostPool | None = None) -> RunnerFactory:
    """Each round on libvirt guests with adapter processes; ports are allocated per match automatically.

    With a host pool (`--hosts`) each round runs on the host its plan names, and a drop of that host's link
    stops the match as an infrastructure failure."""
    check_drain_seconds(args)

    def make(plan: RoundPlan) -> MatchRunner:
        provider = LibvirtProvider(args.uri) if pool is None or plan.host is None else pool.provider(plan.host)
        runner = MatchRunner(
            manifest_path,
            plan.output,
            provider,
            ProcessLauncher(),
            drain_seconds=args.drain_seconds,
            manifest=plan.manifest,
        )

        def lost(reason: str) -> None:
            runner.infrastructure_lost("host", reason)  # False when the match is already ending: nothing to do

        provider.on_lost = lost
        return runner

    return make


def host_pool(args: argparse.Namespace) -> HostPool | None:
    """The `--hosts` inventory as a pool (its lines prefixed like the series'), or None: this machine only."""
    return HostPool(read_inventory(args.hosts), report=_say) if args.hosts is not None else None


def narrated(factory: RunnerFactory) -> RunnerFactory:
    """Headless: every round's meaningful events as lines, prefixed with the round (`[r2]`)."""

    def make(plan: RoundPlan) -> MatchRunner:
        runner = factory(plan)
        narrator = Narrator()

        def show(update: Any) -> None:
            line = narrator.line(update)
            if line is not None:
                print(f"[r{plan.number}] {line}", flush=True)

        runner.subscribe(show)
        return runner

    return make


def _say(line: str) -> None:
    print(f"aoe series: {line}", flush=True)


def run_unattended(runner: Any, finished: Callable[[], str]) -> int:
    """A series or benchmark, headless, stopped cleanly by SIGINT/SIGTERM/SIGHUP (exit 128 + the signal)."""
    received: list[int] = []

    async def play() -> None:
        def on_signal(signum: int) -> None:
            if runner.request_stop(stop_reason(signum)):
                received.append(signum)

        with stop_on_signals(on_signal):
            await runner.run()

    try:
        asyncio.run(play())
    except SeriesStopped as stopped:
        return _stopped(str(stopped), received[0] if received else None)
    tell(finished())
    return 0


def _stopped(reason: str, signum: int | None) -> int:
    """The closing line of a stopped series or benchmark; exit 128 + the signal that stopped it, else 1."""
    tell(f"aoe: stopped: {reason}; every guest destroyed; run the same command to resume", sys.stderr)
    return exit_status(signum) if signum is not None else 1


def series(args: argparse.Namespace) -> int:
    output = args.output if args.output is not None else SERIES_DIR / load_manifest(args.manifest).arena.id
    pool = host_pool(args)
    factory = real_round_factory(args, args.manifest, pool)

    def series_runner(make_runner: RunnerFactory, report: Callable[[str], None]) -> SeriesRunner:
        return SeriesRunner(
            args.manifest,
            output,
            make_runner,
            rounds=args.rounds,
            fresh=args.fresh,
            replays=args.replays,
            report=report,
            pool=pool,
        )

    def finished() -> str:
        return f"series folder: {output}  (standings: `aoe standings {output}`; open it with `aoe replay {output}`)"

    if args.headless:
        return run_unattended(series_runner(narrated(factory), _say), finished)
    from aoe_tui.app.view.series_progress import SeriesLog
    from aoe_tui.cli.app_launch import run_series_live

    log = SeriesLog()
    app = run_series_live(series_runner(factory, log.add), log)
    if app.engine_error is not None:
        raise AoeError(app.engine_error)
    if app.series_stopped is not None:
        return _stopped(app.series_stopped, app.stopped_by_signal)
    tell(finished())
    return 0


def benchmark(args: argparse.Namespace) -> int:
    output = args.output if args.output is not None else BENCHMARK_DIR / read_suite(args.suite)[0].suite.id
    pool = host_pool(args)
    runner = BenchmarkRunner(
        args.suite,
        output,
        lambda manifest: narrated(real_round_factory(args, manifest, pool)),
        fresh=args.fresh,
        replays=args.replays,
        report=_say,
        pool=pool,
    )
    return run_unattended(
        runner,
        lambda: (
            f"benchmark folder: {output}  (standings: `aoe standings {output}`; open it with `aoe replay {output}`)"
        ),
    )


def _add_unattended_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--replays",
        type=int,
        default=DEFAULT_REPLAYS,
        help="replays of a round in which an agent was unavailable through no fault of its own "
        f"(default {DEFAULT_REPLAYS}); then its seat forfeits",
    )
    add_drain_option(p)
    add_uri_option(p)
    p.add_argument(
        "--hosts",
        type=Path,
        default=None,
        metavar="FILE",
        help="hosts.toml: spread the rounds over these hypervisors, as many at once as fit (docs/hosts.md; "
        "default: this machine, one round at a time)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("series", help="race one manifest for several rounds with seat rotation (resumable)")
    p.add_argument("manifest", type=Path, help="arena manifest, e.g. arenas/first-build/arena.toml")
    p.add_argument("--rounds", type=int, default=None, help="rounds to play (default: one per territory)")
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help="series folder (default ./series/<arena_id>); re-running the same command resumes it",
    )
    p.add_argument(
        "--fresh", action="store_true", help="start over: the existing series folder is kept as <folder>.previous-N"
    )
    p.add_argument(
        "--headless",
        action="store_true",
        help="no TUI: one line per round and meaningful event (default: each round live in the app, and the series)",
    )
    _add_unattended_options(p)
    p.set_defaults(handler=series)

    p = subparsers.add_parser("benchmark", help="run a benchmark suite: one series per arena, headless (resumable)")
    p.add_argument("suite", type=Path, help="suite TOML, e.g. suites/first-build.toml")
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        help="benchmark folder (default ./benchmark/<suite_id>); re-running the same command resumes it",
    )
    p.add_argument(
        "--fresh", action="store_true", help="start over: the existing benchmark folder is kept as <folder>.previous-N"
    )
    _add_unattended_options(p)
    p.set_defaults(handler=benchmark)

    p = subparsers.add_parser("standings", help="standings of a series or benchmark folder, from its round matches")
    p.add_argument(
        "path", type=Path, help="a series folder (series.json, round-NNN/), a benchmark folder, or its exported bundle"
    )
    p.add_argument("--json", action="store_true", help='print {"standings": [...]} (a benchmark adds "arenas")')
    p.set_defaults(handler=standings)
