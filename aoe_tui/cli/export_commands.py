"""`aoe export PATH --format match|atif [-o OUT]`: a saved match made shareable.

`match` writes one `agents-of-empires.match` file (a series or benchmark
folder: one bundle of every round); `atif` writes one ATIF trajectory per
agent. Both leave the machine's secrets behind: the provider keys in this
process's environment are redacted as known values on top of the secret
shapes, and the command prints, one line each, what it left out or redacted
(never the secret itself).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.secret_patterns import environment_secrets
from aoe_tui.domain.untrusted import clean_text
from aoe_tui.store.atif import ATIF_VERSION, default_atif_output, export_atif
from aoe_tui.store.bundle_export import default_bundle_output, export_bundle
from aoe_tui.store.match_export import ExportReport, default_output, export_match
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.series_source import collection_kind, open_collection


def export(args: argparse.Namespace) -> int:
    secrets = environment_secrets(os.environ)
    kind = collection_kind(args.path)
    if kind is not None and args.format == "atif":
        raise AoeError(f"{args.path}: ATIF trajectories are exported per match: export one of its rounds")
    if kind is not None:
        source = open_collection(args.path)
        report = export_bundle(source, args.output or default_bundle_output(source), secrets)
        _print_report(report, f"{kind} bundle")
        return 0
    match = load_match(args.path)
    if args.format == "atif":
        report = export_atif(match, args.output or default_atif_output(match), secrets)
        _print_report(report, f"{ATIF_VERSION} trajectories")
        return 0
    report = export_match(match, args.output or default_output(match), secrets)
    _print_report(report, "match")
    return 0


def _print_report(report: ExportReport, what: str) -> None:
    print(clean_text(f"exported {what}: {report.output}"))
    for line in report.lines():
        print(clean_text(f"  {line}"))


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export", help="write a saved match as one shareable file (private keys, secrets and reasoning left out)"
    )
    p.add_argument("path", type=Path, help="any saved match, or a series or benchmark folder")
    p.add_argument(
        "--format",
        choices=["match", "atif"],
        default="match",
        help="match: one agents-of-empires.match JSON file (default); "
        f"atif: one {ATIF_VERSION} trajectory per agent, into a folder",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="where to write (default here: <slug>.match.json, .series.json, .benchmark.json, or <slug>-atif/)",
    )
    p.set_defaults(handler=export)
