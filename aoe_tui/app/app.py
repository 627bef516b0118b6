"""The Textual app: a match browser and a match screen over saved and live matches.

The clock is injected so playback in tests advances exactly as far as the
test says; the real app uses `time.monotonic`. Notifications and every
rendered line are literal (`aoe_tui.app.widgets.literal`): an error message may quote
what a guest said.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from textual.app import App
from textual.filter import LineFilter
from textual.notifications import SeverityLevel

from aoe_tui.domain.untrusted import clean_text
from aoe_tui.store.saved_match import SavedMatch
from aoe_tui.app.screens.browser import BrowserScreen
from aoe_tui.app.screens.help_screen import HelpScreen
from aoe_tui.app.widgets.literal import NoControlCharacters
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.view.session import MatchSession


class AoeApp(App[None]):
    CSS_PATH = "aoe.tcss"
    TITLE = "Agents of Empires"

    def __init__(
        self,
        match: SavedMatch | None = None,
        *,
        roots: list[Path] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        self.initial_match = match
        self.roots = roots or []
        self.clock = clock
        self._no_controls = NoControlCharacters()

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), self._no_controls]

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """Every notification is plain text: `markup` (a screen's `notify` passes True) is ignored."""
        super().notify(clean_text(message), title=clean_text(title), severity=severity, timeout=timeout, markup=False)

    def on_mount(self) -> None:
        self.show_first_screen()

    def show_first_screen(self) -> None:
        """The browser, or the match given on the command line (the live app starts with its preparation)."""
        if self.initial_match is not None:
            self.open_match(self.initial_match)
        else:
            self.push_screen(BrowserScreen(self.roots))

    def open_match(self, match: SavedMatch) -> None:
        self.push_screen(MatchScreen(MatchSession(match)))

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.screen))
