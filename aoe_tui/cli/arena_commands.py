"""`aoe arena init NAME` (a new arena folder, cli.arena_init) and `aoe arena validate DIR` (check a whole
arena folder with engine.arena_check and say what is wrong)."""

from __future__ import annotations

import argparse
from pathlib import Path

from aoe_tui.cli.arena_init import init_arena
from aoe_tui.engine.arena_check import arena_problems


def validate_command(args: argparse.Namespace) -> int:
    path, problems = arena_problems(args.directory)
    if problems:
        for problem in problems:
            print(problem)
        return 1
    print(f"{path}: arena folder valid (manifest, verifiers, provisioning, brief, scripted plans)")
    return 0


def init_command(args: argparse.Namespace) -> int:
    target, files = init_arena(args.name)
    print(f"{target}: new arena {args.name!r} ({len(files)} files: see {target / 'README.md'})")
    print(f"  aoe arena validate {target}")
    print(f"  .venv/bin/pytest {target}          # smoke test, no VM")
    print(f"  aoe run {target / 'arena.toml'} --headless")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    arena = subparsers.add_parser("arena", help="author arenas: start a new arena folder, check one")
    commands = arena.add_subparsers(dest="arena_command", required=True, metavar="ARENA_COMMAND")
    p = commands.add_parser(
        "init",
        help="create arenas/NAME/: manifest, contract, provisioning, verifiers, an oracle and a flawed "
        "builder (scripted plans), a smoke test; it validates and runs as it is",
    )
    p.add_argument("name", help="the arena id (lowercase letters, digits, hyphens), also the folder name")
    p.set_defaults(handler=init_command)
    p = commands.add_parser(
        "validate",
        help="check a whole arena folder (manifest, every referenced file, "
        "executable verifiers, visualization tied to milestones)",
    )
    p.add_argument("directory", type=Path, help="the arena folder (or its arena.toml)")
    p.set_defaults(handler=validate_command)
