"""`aoe cup` and `aoe ladder`: a field of any size raced in heats, and everyone ever raced rated.

`aoe cup CUP.toml` plays the cup (docs/cups.md) into `./cups/<id>/<season>-<UTC stamp>/` by default;
re-running the same command resumes that season's unfinished run. `aoe ladder PATH...` rates every decided
match found under the paths, recomputed from the matches themselves.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from aoe_tui.cli.options import add_drain_option, add_uri_option, check_drain_seconds
from aoe_tui.cli.series_commands import host_pool, run_unattended
from aoe_tui.domain.cup_rules import season_label, utc_stamp
from aoe_tui.engine.cup import CupRunner, HeatFactory, HeatPlan
from aoe_tui.engine.libvirt_host import LibvirtProvider
from aoe_tui.engine.narration import Narrator
from aoe_tui.engine.provider import ProcessLauncher
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.store.cup_files import CUP_FILE, read_cup_checkpoint, read_cup_spec

CUPS_DIR = Path("cups")


def default_cup_output(cup_id: str, season: str, now: datetime) -> Path:
    """This season's unfinished run under `./cups/<id>/` (the latest), else a new `<season>-<UTC stamp>/`."""
    parent = CUPS_DIR / cup_id
    if parent.is_dir():
        for folder in sorted(parent.glob(f"{season}-*"), reverse=True):
            path = folder / CUP_FILE
            if path.is_file():
                try:
                    if read_cup_checkpoint(path).get("state") != "complete":
                        return folder
                except Exception:  # noqa: BLE001 - an unreadable run is not resumed by default
                    continue
    return parent / f"{season}-{utc_stamp(now)}"


def real_heat_factory(args: argparse.Namespace, manifest_path: Path, pool: Any = None) -> HeatFactory:
    check_drain_seconds(args)

    def make(plan: HeatPlan) -> MatchRunner:
        provider = LibvirtProvider(args.uri) if pool is None or plan.host is None else pool.provider(plan.host)
        runner = MatchRunner(
            manifest_path,
            plan.output,
            provider,
            ProcessLauncher(),
            drain_seconds=args.drain_seconds,
            manifest=plan.manifest,
        )
        provider.on_lost = lambda reason: runner.infrastructure_lost("host", reason)
        return runner

    return make


def narrated(factory: HeatFactory) -> HeatFactory:
    """Headless: every heat's meaningful events as lines, prefixed with round and heat (`[r1h2]`)."""

    def make(plan: HeatPlan) -> MatchRunner:
        runner = factory(plan)
        narrator = Narrator()

        def show(update: Any) -> None:
            line = narrator.line(update)
            if line is not None:
                print(f"[r{plan.round}h{plan.heat}] {line}", flush=True)

        runner.subscribe(show)
        return runner

    return make


def _say(line: str) -> None:
    print(f"aoe cup: {line}", flush=True)


def cup(args: argparse.Namespace) -> int:
    now = datetime.now(UTC)
    spec, manifest_path = read_cup_spec(args.cup)
    season = args.season or season_label(now)
    output = args.output if args.output is not None else default_cup_output(spec.cup.id, season, now)
    pool = host_pool(args)
    factory = real_heat_factory(args, manifest_path, pool)

    def finished() -> str:
        return f"cup folder: {output}  (open it with `aoe replay {output}`; ratings: `aoe ladder {output}`)"

    def runner_with(make: HeatFactory, report: Any) -> CupRunner:
        return CupRunner(
            args.cup, output, make, season=season, fresh=args.fresh, report=report, pool=pool, now=lambda: now
        )

    if args.headless:
        return run_unattended(runner_with(narrated(factory), _say), finished)
    from aoe_tui.cli.cup_launch import run_cup_live

    return run_cup_live(runner_with(factory, _say), finished)


def ladder(args: argparse.Namespace) -> int:
    from aoe_tui.analysis.ladder import ladder_report, ladder_table

    import sys

    in_app = not args.json and sys.stdout.isatty()
    report = ladder_report(args.paths, by=args.by, history=in_app)
    if args.json:  # exactly {"ladder": [...]}
        print(json.dumps({"ladder": report["ladder"]}, indent=2, ensure_ascii=False))
        return 0
    if in_app:
        from aoe_tui.cli.cup_launch import open_ladder

        return open_ladder(report)
    print("\n".join(ladder_table(report)))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("cup", help="race a field of entrants in heats to one winner (resumable)")
    p.add_argument("cup", type=Path, help="CUP.toml: [cup] and [[entrants]] (docs/cups.md)")
    p.add_argument("--season", default=None, metavar="LABEL", help="season label (default: the ISO week, 2026-W49)")
    p.add_argument(
        "--output",
        type=Path,
        default=None,
        metavar="DIR",
        help="cup folder (default ./cups/<id>/<season>-<UTC stamp>/; re-running the same command resumes)",
    )
    p.add_argument("--headless", action="store_true", help="no TUI: one line per heat and meaningful event")
    p.add_argument(
        "--hosts",
        type=Path,
        default=None,
        metavar="FILE",
        help="hosts.toml: the heats of a round at once over these hypervisors (docs/hosts.md)",
    )
    p.add_argument(
        "--fresh", action="store_true", help="start a new run: the existing folder is kept as <folder>.previous-N"
    )
    add_drain_option(p)
    add_uri_option(p)
    p.set_defaults(handler=cup)

    p = subparsers.add_parser("ladder", help="rate everyone ever raced: mu, sigma and mu - 3 sigma, from the matches")
    p.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="matches, series, benchmarks, cups (searched)")
    p.add_argument("--json", action="store_true", help='print {"ladder": [{"entrant", "config", "mu", ...}]}')
    p.add_argument(
        "--by",
        choices=("entrant", "config"),
        default="entrant",
        help="one entry per entrant id with its configuration (default), or per configuration (merged)",
    )
    p.set_defaults(handler=ladder)
