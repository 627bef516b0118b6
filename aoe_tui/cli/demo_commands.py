"""`aoe demo`: the README's main job — a live First Build race on real VMs in the app.

The guest image is built first when it is not cached (its progress shows in
the preparation view), then three built-in builders race. `--sample` opens
the bundled sample replay instead, for a machine without libvirt.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.cli.run_commands import add_runner_options, real_runner
from aoe_tui.runtime.image import build_image
from aoe_tui.store.saved_match import load_match

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DEFAULT_SAMPLE = SAMPLES / "infra-core-first-build-real-r1.match.json"
FIRST_BUILD = Path(__file__).resolve().parents[2] / "arenas" / "first-build" / "arena.toml"


def demo(args: argparse.Namespace) -> int:
    from aoe_tui.cli.app_launch import open_replay, run_live

    if args.sample:
        return open_replay(load_match(DEFAULT_SAMPLE))
    return run_live(real_runner(args, FIRST_BUILD), before_match=lambda say: build_image(progress=say))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="live First Build race on three real VMs (--sample: the bundled replay)")
    p.add_argument("--sample", action="store_true", help="open the bundled sample replay instead (no VMs)")
    add_runner_options(p)
    p.set_defaults(handler=demo)
