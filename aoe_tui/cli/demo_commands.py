"""`aoe demo`: the README's main job.

Until the live engine exists it opens the bundled sample match.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.store.saved_match import load_match

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DEFAULT_SAMPLE = SAMPLES / "infra-core-first-build-real-r1.match.json"


def demo(args: argparse.Namespace) -> int:
    from aoe_tui.cli.app_launch import open_replay

    return open_replay(load_match(DEFAULT_SAMPLE))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="the demo match (opens the bundled sample)")
    p.set_defaults(handler=demo)
