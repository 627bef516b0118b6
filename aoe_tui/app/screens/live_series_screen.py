"""A series played in the app: each round's race with a key to the series, and the series view kept current.

The series view is the saved-series view (standings recomputed from the
decided rounds, the rotation grid, every round's row that opens its replay)
with what comes next on top: the round under way and the rounds after it with
their seats, the time left, and the series' own report lines. It is redrawn
whenever the series moves on (`show`); the app decides when it is on screen.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable, Static

from aoe_tui.analysis.series_overview import SeriesOverview
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.series_screen import SeriesScreen, seats_text, table
from aoe_tui.app.view.series_progress import SeriesProgress
from aoe_tui.app.widgets.literal import literal


class SeriesRoundScreen(LiveMatchScreen):
    """A round's race, as `aoe run` shows a match; `s` opens the series view (playback speed, which `s` cycles
    in a replay, means little at the live edge)."""

    BINDINGS = [Binding("s", "app.show_series", "Series", tooltip="The series: standings, rotation, what is next")]


class LiveSeriesScreen(SeriesScreen):
    DEFAULT_CSS = """
    #series-next { height: auto; }
    #series-log { padding: 0 1; color: $text-muted; }
    """
    BINDINGS = [Binding("escape,s", "app.back_to_round", "Back to the round")]

    def __init__(self, series: SeriesOverview, progress: SeriesProgress, revision: int) -> None:
        """`revision`: the caller's count of how often the series moved on, as drawn here."""
        super().__init__(series)
        self.progress = progress
        self.revision = revision

    def sections(self) -> ComposeResult:
        yield Static(Content(" What comes next · ") + literal(self.progress.summary), classes="series-heading")
        upcoming = table("series-next", ("round", "state", "seats"), zebra=False)
        for round_ in self.progress.rounds:
            upcoming.add_row(str(round_.number), round_.state, seats_text(round_.seats))
        upcoming.display = bool(self.progress.rounds)
        yield upcoming
        yield from super().sections()
        yield Static(" Series log", classes="series-heading")
        yield Static(Content("\n").join(literal(line) for line in self.progress.log), id="series-log")

    async def show(self, series: SeriesOverview, progress: SeriesProgress, revision: int) -> None:
        """Redraw with the series as it stands now, if this view is still on top (the rounds table keeps its
        cursor row where it can); one covered or closed meanwhile keeps its old `revision`."""
        if self.app.screen is not self:
            return
        row = self.query_one("#series-rounds", DataTable).cursor_row
        self.series, self.progress, self.revision = series, progress, revision
        await self.recompose()
        rounds = self.query_one("#series-rounds", DataTable)
        rounds.move_cursor(row=row)
        rounds.focus(scroll_visible=False)
