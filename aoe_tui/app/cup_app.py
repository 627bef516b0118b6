"""The app opened on a cup folder (`aoe replay CUPDIR`): the cup view first, heats as replays."""

from __future__ import annotations

from pathlib import Path

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.cup_screen import CupScreen
from aoe_tui.app.view.cup_view import cup_view
from aoe_tui.store.cup_files import CUP_FILE, read_cup_checkpoint


class CupApp(AoeApp):
    def __init__(self, path: Path, **options) -> None:
        super().__init__(**options)
        self.path = Path(path)
        self.checkpoint = read_cup_checkpoint(self.path / CUP_FILE)

    def show_first_screen(self) -> None:
        self.push_screen(CupScreen(cup_view(self.path, self.checkpoint), self.path))
