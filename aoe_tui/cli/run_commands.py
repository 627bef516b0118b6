"""`aoe run`: play a match on real VMs.

Headless for now: it prints one line per meaningful event and leaves a
complete match directory that `aoe replay` opens. Ctrl-C stops the match
cleanly (the log ends in `aborted`, every VM is destroyed) and exits 130.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.narration import Narrator
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.runtime.hypervisor import DEFAULT_URI
from aoe_tui.runtime.ports import DEFAULT_BASE_PORT


def run(args: argparse.Namespace) -> int:
    if not args.headless:
        raise AoeError("`aoe run` without --headless will open the live TUI in a later release; "
                       "add --headless (and --output DIR)")
    if args.output is None:
        raise AoeError("`aoe run --headless` needs --output DIR for the match directory")
    if args.drain_seconds is not None and args.drain_seconds < 0:
        raise AoeError(f"--drain-seconds {args.drain_seconds}: must be 0 or more")
    runner = MatchRunner(args.manifest, args.output, LibvirtProvider(args.uri, args.base_port), ProcessLauncher(),
                         drain_seconds=args.drain_seconds)
    narrator = Narrator()

    def show(update) -> None:
        line = narrator.line(update)
        if line is not None:
            print(line, flush=True)

    runner.subscribe(show)
    world = asyncio.run(runner.run())
    print(f"match directory: {args.output}  (winner: {world.winner or 'none'}; open it with `aoe replay {args.output}`)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("run", help="run a match on real VMs (headless for now) and save it")
    p.add_argument("manifest", type=Path, help="arena manifest, e.g. arenas/first-build/arena.toml")
    p.add_argument("--headless", action="store_true", help="no TUI: print one line per meaningful event")
    p.add_argument("--output", type=Path, help="match directory to create (must not hold a match already)")
    p.add_argument("--drain-seconds", type=float, default=None,
                   help="post-match drain for unfinished agents (default: the manifest's rules)")
    p.add_argument("--uri", default=DEFAULT_URI, help=f"libvirt URI (default {DEFAULT_URI})")
    p.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT,
                   help=f"first loopback port; territory i uses base+2i (ssh) and base+2i+1 (service); default {DEFAULT_BASE_PORT}")
    p.set_defaults(handler=run)
