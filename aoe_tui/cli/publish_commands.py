"""`aoe publish PATH... -o SITE [--title TEXT] [--prune]`: saved results as a static web site.

The site (`aoe_tui.publish`) works from `file://` and any static host; re-publishing into the same SITE
rewrites only what changed and keeps the pages of sources that are gone unless `--prune` is given. A source
that cannot be read is named on stderr, one line each; the rest is still published, and the exit status is 2
(bad input, as everywhere in aoe), so a script publishing unattended notices.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from aoe_tui.domain.untrusted import clean_text
from aoe_tui.publish.site import publish


def run_publish(args: argparse.Namespace) -> int:
    report = publish(args.paths, args.output, title=args.title, prune=args.prune)
    for line in report.lines():
        print(clean_text(line), file=sys.stderr if line.startswith("  skipped") else sys.stdout)
    return 2 if report.problems else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "publish", help="write matches, series, benchmarks, cups and the ladder as a static web site"
    )
    p.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a match folder or file, a series, benchmark or cup folder, a ladder file, or a folder holding many",
    )
    p.add_argument("-o", "--output", type=Path, required=True, metavar="SITE", help="the site's folder")
    p.add_argument("--title", default=None, help="the site's title (default: Agents of Empires)")
    p.add_argument("--prune", action="store_true", help="delete the pages of sources that are gone")
    p.set_defaults(handler=run_publish)
