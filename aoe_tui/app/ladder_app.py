"""The app opened on the ladder (`aoe ladder PATH...` in a terminal)."""

from __future__ import annotations

from typing import Any

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.ladder_screen import LadderScreen


class LadderApp(AoeApp):
    def __init__(self, report: dict[str, Any], **options) -> None:
        super().__init__(**options)
        self.report = report

    def show_first_screen(self) -> None:
        self.push_screen(LadderScreen(self.report))
