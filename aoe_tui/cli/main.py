"""Entry point of the `aoe` command.

Each command group lives in its own module with a `register(subparsers)`
function; this module only wires them together and turns `AoeError` into one
line on stderr and a non-zero exit, so no user ever sees a traceback for bad
input.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from aoe_tui.cli.terminal_line import tell

from aoe_tui.domain.errors import AoeError

# Each command group's module and the commands it registers. A command imports its own module only: the
# others import the engine, the runtime and the agents (a second here), which `aoe replay` paid before its
# first frame, and before the reader of its log could start. Help, or a word that is no command, imports all.
COMMAND_MODULES = {
    "aoe_tui.cli.match_commands": ("replay", "inspect", "info", "validate"),
    "aoe_tui.cli.demo_commands": ("demo",),
    "aoe_tui.cli.analysis_commands": ("analyze",),
    "aoe_tui.cli.open_commands": ("open",),
    "aoe_tui.cli.run_commands": ("run",),
    "aoe_tui.cli.runtime_commands": ("image", "doctor", "vm"),
    "aoe_tui.cli.series_commands": ("series", "benchmark", "standings"),
    "aoe_tui.cli.cup_commands": ("cup", "ladder"),
    "aoe_tui.cli.arena_commands": ("arena",),
    "aoe_tui.cli.export_commands": ("export",),
    "aoe_tui.cli.serve_commands": ("serve",),
    "aoe_tui.cli.publish_commands": ("publish",),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of `command` alone (its module's commands) when one of them is named."""
    parser = argparse.ArgumentParser(prog="aoe", description="Run and replay Agents of Empires matches.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    named = [module for module, commands in COMMAND_MODULES.items() if command in commands]
    for name in named or COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except AoeError as error:
        tell(f"aoe: {error}", sys.stderr)
        return 2
    except KeyboardInterrupt:
        tell("aoe: interrupted", sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
