"""`aoe arena validate DIR`: check a whole arena folder (engine.arena_check) and say what is wrong."""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.engine.arena_check import arena_problems


def validate_command(args: argparse.Namespace) -> int:
    path, problems = arena_problems(args.directory)
    if problems:
        for problem in problems:
            print(problem)
        return 1
    print(f"{path}: arena folder valid (manifest, verifiers, provisioning, brief)")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    arena = subparsers.add_parser("arena", help="author arenas: check an arena folder")
    commands = arena.add_subparsers(dest="arena_command", required=True, metavar="ARENA_COMMAND")
    p = commands.add_parser(
        "validate",
        help="check a whole arena folder (manifest, every referenced file, "
        "executable verifiers, visualization tied to milestones)",
    )
    p.add_argument("directory", type=Path, help="the arena folder (or its arena.toml)")
    p.set_defaults(handler=validate_command)
