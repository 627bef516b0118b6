"""Commands over saved matches and manifests: replay, inspect, info, validate.

They are the scriptable face of the store layer: `--json` output is stable
and machine-readable, the plain output is for a person at a terminal. A saved
match may come from anywhere, so nothing it holds reaches the terminal as a
control character: plain lines are cleaned, JSON escapes the C1 and DEL
characters `json.dumps` would pass through raw.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.errors import AoeError
from aoe_tui.cli.options import add_fleet_option
from aoe_tui.domain.untrusted import clean_text
from aoe_tui.store.manifest_file import checked_manifest
from aoe_tui.store.cup_files import CUP_FILE, is_cup_folder, read_cup_checkpoint
from aoe_tui.store.saved_match import PREVIEW_BYTES, SavedMatch, load_match
from aoe_tui.store.series_source import collection_kind
from aoe_tui.store.summary import match_summary_lines


_RAW_CONTROLS = re.compile(r"[\x7f-\x9f]")


def _print_json(data: object) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False)
    print(_RAW_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text))


def _print_text(line: str) -> None:
    print(clean_text(line))


def replay(args: argparse.Namespace) -> int:
    if is_cup_folder(args.path):  # a cup: rounds as columns, heats as boxes (--json: its cup.json)
        if args.json:
            _print_json(read_cup_checkpoint(Path(args.path) / CUP_FILE))
            return 0
        from aoe_tui.cli.cup_launch import open_cup

        return open_cup(args.path)
    if collection_kind(args.path) is not None:  # a series or benchmark (folder or bundle): standings, rounds
        from aoe_tui.cli.app_launch import open_series

        return open_series(args.path, as_json=args.json)
    if args.json:
        _print_json(load_match(args.path).world.to_json())
        return 0
    from aoe_tui.app.view.log_reader import start_reading

    # A long log opens on its start; a reader process reads the rest from now on, while the app starts, and
    # the match screen takes what it read.
    match = load_match(args.path, preview_bytes=PREVIEW_BYTES)
    start_reading(match)
    from aoe_tui.cli.app_launch import open_replay

    return open_replay(match)


def inspect(args: argparse.Namespace) -> int:
    match = load_match(args.path)
    if not match.has_timeline:
        raise AoeError(f"{args.path}: this match has no event timeline (world only)")
    if not 0 <= args.sequence < len(match.events):
        raise AoeError(f"{args.path}: no event {args.sequence} (events are 0..{len(match.events) - 1})")
    event = match.events[args.sequence]
    if args.json:
        _print_json(event.to_json())
    else:
        data = event.to_json()
        _print_text(f"event #{event.sequence} at {format_clock(event.elapsed_ms)}  {event.kind}")
        for key, value in data.items():
            if key not in ("schema_version", "sequence", "elapsed_ms", "kind"):
                _print_text(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    return 0


def info(args: argparse.Namespace) -> int:
    match = load_match(args.path)
    if args.json:
        _print_json(info_json(match))
    else:
        lines = match_summary_lines(match)
        if match.cup is not None:  # a cup's heat: where it stands in the cup, under its name
            lines.insert(1, f"cup        {match.cup.line()}")
        for line in lines:
            _print_text(line)
        for name, reason in match.skipped_files():
            _print_text(f"skipped    {name}: {reason}")
    return 0


def info_json(match: SavedMatch) -> dict:
    world = match.world
    return {
        "name": match.name,
        "shape": match.shape,
        "arena": match.arena_name,
        "territories": list(world.territories),
        "winner": world.winner,
        "match_state": world.match_state,
        "duration_ms": world.elapsed_ms,
        "events": len(match.events),
        "has_timeline": match.has_timeline,
        "skipped": [{"file": name, "reason": reason} for name, reason in match.skipped_files()],
        **({"cup": match.cup.to_json()} if match.cup is not None else {}),
    }


def validate(args: argparse.Namespace) -> int:
    # Imported here: the providers' check loads the agents' registry (a quarter second `aoe replay` never needs).
    from aoe_tui.engine.model_providers import provider_problems

    manifest, problems = checked_manifest(Path(args.manifest), args.agents)
    # Whether each agent's adapter can reach its model (providers.toml, AOE_OPENAI_BASE_URL): the run refuses the same.
    agents_file = Path(args.agents if args.agents is not None else args.manifest)
    reach = provider_problems(manifest, arena_dir=Path(args.manifest).parent) if manifest is not None else []
    if args.json:
        _print_json(
            {
                "manifest": str(args.manifest),
                "valid": not problems and not reach,
                "problems": [
                    {"file": str(p.file), "path": p.problem.path, "message": p.problem.message} for p in problems
                ]
                + [{"file": str(agents_file), "path": "agents", "message": message} for message in reach],
            }
        )
    elif problems or reach:
        for problem in problems:
            print(problem)
        for message in reach:
            print(f"{agents_file}: agents: {message}")
    else:
        assert manifest is not None
        fleet = f", agents from {args.agents}" if args.agents is not None else ""
        print(
            f"{args.manifest}: valid ({manifest.arena.id}, {len(manifest.territories)} territories, "
            f"{len(manifest.build.milestones) if manifest.build else 0} milestones{fleet})"
        )
    return 1 if problems or reach else 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("replay", help="open a saved match in the app (or print its final world with --json)")
    p.add_argument("path", type=Path)
    p.add_argument("--json", action="store_true", help="print the reduced final world as JSON")
    p.set_defaults(handler=replay)

    p = subparsers.add_parser("inspect", help="print one event of a saved match")
    p.add_argument("path", type=Path)
    p.add_argument("sequence", type=int)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=inspect)

    p = subparsers.add_parser("info", help="short summary of a saved match")
    p.add_argument("path", type=Path)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=info)

    p = subparsers.add_parser("validate", help="check an arena manifest and list every problem")
    p.add_argument("manifest", type=Path)
    add_fleet_option(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=validate)
