"""`aoe open [DIR]`: browse saved matches and open one in the app."""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.domain.errors import AoeError

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def open_matches(args: argparse.Namespace) -> int:
    from aoe_tui.cli.app_launch import open_browser

    if args.directory is not None:
        if not args.directory.exists():
            raise AoeError(f"{args.directory}: no such directory")
        roots = [args.directory]
    else:
        roots = [root for root in (Path("matches"), SAMPLES) if root.exists()]
    return open_browser(roots)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("open", help="browse saved matches (default: ./matches and the bundled samples)")
    p.add_argument("directory", type=Path, nargs="?", help="folder to search for saved matches")
    p.set_defaults(handler=open_matches)
