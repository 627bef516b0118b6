"""Deterministic analysis of agents' observable tool calls ("How they fought").

Pure functions over domain models: no IO, so the app, the CLI and the engine
can all analyze a transcript the same way.
"""

from aoe_tui.analysis.analyzer import ANALYZER, analyze

__all__ = ["ANALYZER", "analyze"]
