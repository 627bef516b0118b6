"""The app opened on a series or benchmark folder (`aoe replay DIR`): the series view first, rounds as replays."""

from __future__ import annotations

from aoe_tui.analysis.series_overview import BenchmarkOverview, SeriesOverview
from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.series_screen import BenchmarkScreen, SeriesScreen


class SeriesApp(AoeApp):
    """The app opened on a series or benchmark folder; rounds open as ordinary replays."""

    def __init__(self, overview: SeriesOverview | BenchmarkOverview, **options) -> None:
        super().__init__(**options)
        self.overview = overview

    def show_first_screen(self) -> None:
        if isinstance(self.overview, BenchmarkOverview):
            self.push_screen(BenchmarkScreen(self.overview))
        else:
            self.push_screen(SeriesScreen(self.overview))
