"""The standings bar chart as it looks: wins, durable deployments and cost per agent, n/a for an unknown cost.

The chart stays hand-written (`chart_content`): plotext's bar charts repeat every label per metric, tick
counts in fractions and cannot say n/a, where this one says each value beside its bar.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Static

from aoe_tui.app.screens.series_screen import chart_content
from tests.series.helpers import STORED


class ChartApp(App[None]):
    """The fixture series' standings, the last agent's cost unknown, drawn as the series view draws them."""

    def compose(self) -> ComposeResult:
        rows = [dict(row) for row in STORED["standings"]]
        rows[-1]["cost_microusd"] = None
        yield Static(chart_content(rows), id="series-chart")


def test_standings_bar_chart(snap_compare):
    assert snap_compare(ChartApp(), terminal_size=(80, 24))
