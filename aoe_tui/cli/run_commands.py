"""`aoe run`: play a match on real VMs, in the app (default) or headless.

In the app the referee engine runs inside the TUI: preparation, the live
match screen, steering. Headless prints one line per meaningful event. Both
leave a complete match directory that `aoe replay` opens; Ctrl-C, SIGTERM or
SIGHUP (or quitting the app mid-match) records `aborted` naming the cause and
destroys every VM; headless then exits 128 + the signal number. A void match
(every territory lost to infrastructure, docs/match-outcomes.md) exits
`VOID_EXIT` with one line saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import datetime, UTC
from pathlib import Path

from aoe_tui.cli.options import add_drain_option, add_fleet_option, add_uri_option, check_drain_seconds
from aoe_tui.domain.manifest import Manifest
from aoe_tui.domain.world import World
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.narration import Narrator
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.stop_signals import exit_status, stop_on_signals, stop_reason
from aoe_tui.runtime.ports import DEFAULT_BASE_PORT
from aoe_tui.store.manifest_file import load_manifest

MATCHES_DIR = Path("matches")
VOID_EXIT = 3
"""A void match (every territory lost to infrastructure): no result, apart from 1 (aborted) and 2 (bad input)."""


def default_output(manifest: Manifest) -> Path:
    """./matches/<arena>-<UTC timestamp>: sorts by time and never collides with an earlier match."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return MATCHES_DIR / f"{manifest.arena.id}-{stamp}"


def real_runner(args: argparse.Namespace, manifest_path: Path) -> MatchRunner:
    """A match on libvirt VMs with adapter processes, from the shared run/demo options."""
    check_drain_seconds(args)
    manifest = load_manifest(manifest_path, args.agents)
    output = args.output if args.output is not None else default_output(manifest)
    return MatchRunner(
        manifest_path,
        output,
        LibvirtProvider(args.uri, args.base_port),
        ProcessLauncher(),
        drain_seconds=args.drain_seconds,
        manifest=manifest,
    )


def add_runner_options(p: argparse.ArgumentParser) -> None:
    add_fleet_option(p)
    p.add_argument("--output", type=Path, help="match directory to create (default: ./matches/<arena>-<UTC timestamp>)")
    add_drain_option(p)
    add_uri_option(p)
    p.add_argument(
        "--base-port",
        type=int,
        default=None,
        help="first loopback port; territory i uses base+2i (ssh) and base+2i+1 (service) "
        f"(default: the first free block at or above {DEFAULT_BASE_PORT}, recorded in ports.json)",
    )


def run(args: argparse.Namespace) -> int:
    runner = real_runner(args, args.manifest)
    if not args.headless:
        from aoe_tui.cli.app_launch import run_live

        return run_live(runner)
    return run_headless(runner)


def run_headless(runner: MatchRunner) -> int:
    """Play `runner`'s match printing one line per meaningful update; the exit status says how it ended."""
    narrator = Narrator()

    def show(update) -> None:
        line = narrator.line(update)
        if line is not None:
            print(line, flush=True)

    runner.subscribe(show)
    world, signum = asyncio.run(run_until_signalled(runner))
    output = runner.match_dir.root
    if signum is not None:
        print(f"aoe: match aborted: {runner.stop_reason}; every guest destroyed; record: {output}", file=sys.stderr)
        return exit_status(signum)
    if world.match_state == "void":
        print(f"aoe: match void ({world.finish_reason}); it counts in no standings; record: {output}", file=sys.stderr)
        return VOID_EXIT
    print(
        f"match directory: {output}  ({world.match_state}, winner: {world.winner or 'none'}; "
        f"open it with `aoe replay {output}`)"
    )
    return 0 if world.match_state == "finished" else 1


async def run_until_signalled(runner: MatchRunner) -> tuple[World, int | None]:
    """The match, stopped cleanly by SIGINT/SIGTERM/SIGHUP; returns its world and the signal, if one came."""
    received: list[int] = []

    def on_signal(signum: int) -> None:
        if runner.request_stop(stop_reason(signum)):
            received.append(signum)

    with stop_on_signals(on_signal):
        try:
            return await runner.run(), None
        except asyncio.CancelledError:
            if not received:
                raise
            task = asyncio.current_task()
            assert task is not None  # a coroutine awaited in a task: the cancellation we take back is its own
            task.uncancel()
            return runner.world, received[0]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run a match on real VMs, watched and steered in the app, and save it")
    p.add_argument("manifest", type=Path, help="arena manifest, e.g. arenas/first-build/arena.toml")
    p.add_argument("--headless", action="store_true", help="no TUI: print one line per meaningful event")
    add_runner_options(p)
    p.set_defaults(handler=run)
