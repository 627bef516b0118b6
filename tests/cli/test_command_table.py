"""`aoe COMMAND` imports only the module of its command: the table that says which module that is stays true."""

import argparse
import importlib
import subprocess
import sys

from aoe_tui.cli.main import COMMAND_MODULES, build_parser


def test_each_module_registers_the_commands_the_table_names():
    for module, commands in COMMAND_MODULES.items():
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(subparsers)
        assert tuple(subparsers.choices) == commands, module


def test_a_named_command_parses_as_in_the_whole_parser():
    argv = ["replay", "some/match", "--json"]
    assert vars(build_parser("replay").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_replay_imports_neither_the_engine_nor_the_runtime():
    """What `aoe replay` pays before its first frame (the engine and the agents were a second of it)."""
    code = (
        "import sys; from aoe_tui.cli.main import build_parser; build_parser('replay');"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('aoe_tui.')}))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "engine" not in loaded and "runtime" not in loaded and "agents" not in loaded, loaded
