"""`aoe series`, `aoe benchmark` and `aoe standings`: many matches unattended, and who is best.

Standings are always recomputed from the round matches on disk (never copied
from `series.json`), so what this prints is what the matches say.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aoe_tui.analysis.standings import standings_report
from aoe_tui.analysis.standings_format import standings_table


def standings(args: argparse.Namespace) -> int:
    report = standings_report(args.path)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print("\n".join(standings_table(report["standings"])))
    for arena in report.get("arenas", []):
        print(f"\narena {arena['arena_id']}")
        print("\n".join(standings_table(arena["standings"])))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("standings", help="standings of a series or benchmark folder, from its round matches")
    p.add_argument("path", type=Path, help="a series folder (series.json, round-NNN/) or a benchmark folder")
    p.add_argument("--json", action="store_true", help='print {"standings": [...]} (a benchmark adds "arenas")')
    p.set_defaults(handler=standings)
