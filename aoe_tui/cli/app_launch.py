"""Opening the Textual app from the CLI.

Textual is imported here, inside the functions, so commands that never open
the app (`aoe info`, `aoe validate`) stay fast.
"""

from __future__ import annotations

from pathlib import Path

from aoe_tui.store.saved_match import SavedMatch


def open_replay(match: SavedMatch) -> int:
    from aoe_tui.app.app import AoeApp

    AoeApp(match).run()
    return 0


def open_browser(roots: list[Path]) -> int:
    from aoe_tui.app.app import AoeApp

    AoeApp(roots=roots).run()
    return 0
