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

COMMAND_MODULES = [
    "aoe_tui.cli.match_commands",
    "aoe_tui.cli.demo_commands",
    "aoe_tui.cli.analysis_commands",
    "aoe_tui.cli.open_commands",
    "aoe_tui.cli.run_commands",
    "aoe_tui.cli.runtime_commands",
    "aoe_tui.cli.series_commands",
    "aoe_tui.cli.cup_commands",
    "aoe_tui.cli.arena_commands",
    "aoe_tui.cli.export_commands",
    "aoe_tui.cli.serve_commands",
    "aoe_tui.cli.publish_commands",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="aoe", description="Run and replay Agents of Empires matches.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
