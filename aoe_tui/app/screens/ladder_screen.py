"""The ladder in the app (`aoe ladder PATH...` in a terminal): each entry's rating over time, and the table.

The chart draws the conservative rating (mu - 3 sigma) of the top entries after each match they played, in
start order (the match's index along the x axis); the table below is what `aoe ladder` prints, with the
durable rate's 95% interval and the chance that the leader beats the next. Entrant ids are player text.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from aoe_tui.app.widgets.literal import LiteralTable, literal

CHART_ENTRIES = 8


class RatingChart(PlotextPlot):
    def __init__(self, report: dict[str, Any], **kwargs) -> None:
        super().__init__(**kwargs)
        self.report = report

    def on_mount(self) -> None:
        plt = self.plt
        plt.title("rating (mu - 3 sigma) after each match, in start order")
        history = self.report.get("history") or []
        rows = self.report["ladder"][:CHART_ENTRIES]
        ids = [row["entrant"] for row in self.report["ladder"]]
        for index, row in enumerate(rows):
            points = history[index] if index < len(history) else []
            label = row["entrant"][:20]
            if ids.count(row["entrant"]) > 1:  # one id raced with two configurations: name the model too
                label += f" ({str(row['config']['model'])[-16:]})"
            if points:
                xs = [p[0] + 1 for p in points]
                ys = [p[1] - 3 * p[2] for p in points]
                plt.plot(xs, ys, label=label, marker="braille")
        plt.xlabel("match")


class LadderScreen(Screen[None]):
    DEFAULT_CSS = """
    #ladder-title { background: $boost; }
    RatingChart { height: 1fr; min-height: 12; }
    #ladder-table { height: auto; max-height: 50%; }
    #ladder-note { color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("q,escape", "app.quit", "Quit")]

    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        report = self.report
        yield Static(
            Content.assemble(
                (" LADDER ", "reverse bold $accent"),
                f" {len(report['ladder'])} entries by {report.get('by', 'entrant')} · {report['matches']} decided matches · "
                "openskill Plackett-Luce, in start order",
            ),
            id="ladder-title",
        )
        yield RatingChart(report)
        table = LiteralTable(cursor_type="row", zebra_stripes=True, id="ladder-table")
        for column in ("#", "entrant", "model", "rating", "mu", "sigma", "matches", "wins", "durable (95%)"):
            table.add_column(column, key=column)
        for place, row in enumerate(report["ladder"], 1):
            interval = row["durable_rate_95"]
            table.add_row(
                str(place),
                row["entrant"],
                str(row["config"]["model"]),
                f"{row['rating']:.2f}",
                f"{row['mu']:.2f}",
                f"{row['sigma']:.2f}",
                str(row["matches"]),
                str(row["wins"]),
                f"{row['durable']}/{row['matches']} ({interval[0]:.0%}-{interval[1]:.0%})" if interval else "n/a",
            )
        yield table
        top = report["ladder"][:2]
        if len(top) == 2 and top[0].get("beats"):
            chance = next(iter(top[0]["beats"].values()))
            note = f"P({top[0]['entrant']} beats {top[1]['entrant']}) = {chance:.2f}"
            yield Static(literal(note), id="ladder-note")
        yield Footer()
