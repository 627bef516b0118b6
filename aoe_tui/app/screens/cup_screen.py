"""A cup in the app: rounds as columns, heats as boxes; Enter on a heat opens its replay.

Opened by `aoe replay CUPDIR`, and kept current during `aoe cup` (`CupLiveScreen`, with the progress, the time
left and the cup's log on top). Entrant ids and reasons come from the matches: shown literally.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalScroll, Vertical
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from aoe_tui.app.screens.host import host
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.view.cup_view import CupView, HeatBox
from aoe_tui.app.widgets.literal import literal
from aoe_tui.domain.errors import AoeError
from aoe_tui.store.saved_match import load_match

STATE_STYLE = {"decided": "$success", "playing": "$warning", "waiting": "$text-muted"}


class HeatWidget(Static, can_focus=True):
    """One heat: its seats, outcome and attempts; Enter opens the replay of the attempt that decided it."""

    DEFAULT_CSS = """
    HeatWidget { border: round $primary-darken-2; padding: 0 1; margin: 0 0 1 0; height: auto; width: 100%; }
    HeatWidget:focus { border: round $accent; }
    HeatWidget.playing { border: round $warning; }
    """

    def __init__(self, box: HeatBox) -> None:
        super().__init__(Content("\n").join(literal(line) for line in box.lines), classes=box.state)
        self.box = box
        self.border_title = f"{box.title} · {box.state}"


class CupScreen(Screen[None]):
    DEFAULT_CSS = """
    #cup-title { background: $boost; }
    #cup-rounds { height: 1fr; }
    .cup-round { width: 60; height: auto; margin: 0 1; }
    .cup-round-title { text-style: bold; color: $accent; }
    .cup-advanced { color: $text-muted; }
    #cup-winner { text-style: bold; padding: 0 1; }
    #cup-progress { padding: 0 1; color: $text-muted; height: auto; }
    """
    BINDINGS = [
        Binding("enter", "open", "Open heat"),
        Binding("down,right", "app.focus_next", "Next heat", show=False),
        Binding("up,left", "app.focus_previous", "Previous heat", show=False),
        Binding("escape", "back", "Back"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, view: CupView, path: Path, progress: list[str] | None = None) -> None:
        super().__init__()
        self.view, self.path, self.progress = view, path, progress

    def compose(self) -> ComposeResult:
        v = self.view
        yield Static(
            Content.assemble(
                (" CUP ", "reverse bold $accent"), " ", literal(v.title), f" · {v.summary} · ", literal(str(self.path))
            ),
            id="cup-title",
        )
        if self.progress is not None:
            yield Static(Content("\n").join(literal(line) for line in self.progress), id="cup-progress")
        yield Static(literal(v.winner_line), id="cup-winner")
        with HorizontalScroll(id="cup-rounds"):
            for column in v.columns:
                with Vertical(classes="cup-round"):
                    yield Static(literal(column.title), classes="cup-round-title")
                    for box in column.heats:
                        yield HeatWidget(box)
                    if column.advanced:
                        yield Static(
                            Content("\n").join(literal(f"→ {line}") for line in column.advanced), classes="cup-advanced"
                        )
        yield Footer()

    def on_mount(self) -> None:
        heats = list(self.query(HeatWidget))
        if heats:
            playing = next((h for h in heats if h.box.state == "playing"), heats[0])
            playing.focus()

    def action_open(self) -> None:
        focused = self.focused
        if not isinstance(focused, HeatWidget):
            return
        if focused.box.replay is None or not focused.box.replay.exists():
            self.notify("this heat has not been played yet")
            return
        try:
            host(self.app).open_match(load_match(focused.box.replay))
        except AoeError as error:
            self.notify(str(error), severity="error")

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()


class CupHeatScreen(LiveMatchScreen):
    """A heat's race, as `aoe run` shows a match; `s` opens the cup view."""

    BINDINGS = [Binding("s", "app.show_series", "Cup", tooltip="The cup: rounds, heats, what is next")]


class CupLiveScreen(CupScreen):
    BINDINGS = [Binding("escape,s", "app.back_to_round", "Back to the heat")]

    def __init__(self, view: CupView, path: Path, progress: list[str], revision: int) -> None:
        super().__init__(view, path, progress)
        self.revision = revision

    async def show(self, view: CupView, progress: list[str], revision: int) -> None:
        if self.app.screen is not self:
            return
        self.view, self.progress, self.revision = view, progress, revision
        await self.recompose()
        self.on_mount()
