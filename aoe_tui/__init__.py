"""aoe_tui: run and replay Agents of Empires matches in the terminal.

Layers, each importing only the ones before it:
domain -> store -> runtime, agents, analysis -> engine -> app, cli.
"""

__version__ = "0.1.0"
