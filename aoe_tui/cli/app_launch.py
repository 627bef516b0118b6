"""Opening the Textual app from the CLI.

Until the replay app lands this prints the match summary, which is what the
foundation promises for `aoe replay PATH` and the demo.
"""

from __future__ import annotations

from aoe_tui.store.saved_match import SavedMatch
from aoe_tui.store.summary import match_summary_lines


def open_replay(match: SavedMatch) -> int:
    print("\n".join(match_summary_lines(match)))
    return 0
