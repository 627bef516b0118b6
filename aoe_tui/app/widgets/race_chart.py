"""The race chart: each territory's points over the match clock, one line each, the cursor's moment marked.

Plotext draws the lines (through Textualize's `PlotextPlot`); a build of twelve lines costs tens of
milliseconds, about a whole frame's budget, so the plot is built only when what it shows changed, and
the cursor is painted over the built frame (one column of the canvas) on every frame.
Territory names are player text: plotext never sees them (its output is read back as ANSI), the legend
above the plot shows them literally, each in its line's colour, with its points at the cursor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult, RenderResult
from textual.color import Color
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static
from textual_plotext import PlotextPlot

from aoe_tui.app.view.points_race import PointsRace
from aoe_tui.app.widgets.literal import literal
from aoe_tui.domain.clock import format_clock

# Twelve colours told apart on dark and light backgrounds (Sasha Trubetskoy's list), one per territory.
LINE_COLOURS = [
    (0, 130, 200),
    (60, 180, 75),
    (230, 25, 75),
    (255, 225, 25),
    (245, 130, 48),
    (145, 30, 180),
    (70, 240, 240),
    (240, 50, 230),
    (180, 225, 40),
    (250, 190, 212),
    (0, 128, 128),
    (220, 190, 255),
]
TIME_TICKS = 5
CURSOR_GLYPH = "│"
# Quarter blocks (two by two dots a cell): finer than whole characters, and unlike braille in the fonts
# terminals and browsers have, so a line keeps to its cells.
LINE_MARKER = "hd"
DOTS_ACROSS = 2  # of a cell, with that marker: plotext maps a moment to a dot, the cursor to the dot's cell


def line_colour(index: int) -> tuple[int, int, int]:
    return LINE_COLOURS[index % len(LINE_COLOURS)]


def step_line(steps: list[tuple[int, int]], end_ms: int) -> tuple[list[int], list[int]]:
    """The points of a step line: flat until a step, then straight up (or down) to its new points."""
    xs, ys = [steps[0][0]], [steps[0][1]]
    for elapsed_ms, points in steps[1:]:
        xs += [elapsed_ms, elapsed_ms]
        ys += [ys[-1], points]
    xs.append(max(end_ms, xs[-1]))
    ys.append(ys[-1])
    return xs, ys


@dataclass(frozen=True)
class Canvas:
    """Where plotext put the data in its frame: the columns and rows inside the axes."""

    left: int
    width: int
    top: int
    bottom: int

    @classmethod
    def found_in(cls, lines: list[Text]) -> Canvas | None:
        """The area inside plotext's box (`┌` above it, `└` and `┘` below it); None when it drew none."""
        plain = [line.plain for line in lines]
        top = next((row for row, text in enumerate(plain) if "┌" in text), None)
        bottom = next((row for row, text in enumerate(plain) if "└" in text and "┘" in text), None)
        if top is None or bottom is None or bottom - top < 2:
            return None
        left, right = plain[bottom].index("└"), plain[bottom].index("┘")
        return cls(left + 1, right - left - 1, top + 1, bottom) if right - left > 1 else None

    def column(self, elapsed_ms: int, end_ms: int) -> int:
        """The column of a moment on a time axis from 0 to `end_ms`: the cell of the dot plotext draws it
        at (`get_matrix_data`: the nearest of the dots across the canvas), so a pass at the cursor's moment
        is a step in the cursor's own column."""
        share = min(max(elapsed_ms, 0), end_ms) / end_ms if end_ms > 0 else 0.0
        dot = math.floor(0.5 + (DOTS_ACROSS * self.width - 1) * share)
        return self.left + dot // DOTS_ACROSS


class RacePlot(PlotextPlot):
    """The lines, built again only when the race, the size or the theme changed, or when a live match has
    grown by a column's worth of time (its end moves with every event; a replay's never does); the cursor
    is drawn over the kept frame."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.race: PointsRace | None = None
        self.territory_ids: list[str] = []
        self.end_ms = 0
        self.cursor_ms = 0
        self._built: tuple | None = None  # what the kept frame was built from
        self._built_end_ms = 1  # the end of its time axis
        self._frame: list[Text] = []
        self._canvas: Canvas | None = None

    def show(self, race: PointsRace, territory_ids: list[str], cursor_ms: int, end_ms: int) -> None:
        self.race, self.territory_ids, self.cursor_ms, self.end_ms = race, territory_ids, cursor_ms, max(end_ms, 1)
        self.refresh()

    def _register_theme(self, app_theme_name: str) -> None:
        """The widget makes plotext a theme from the app's once mounted: a frame built before that is stale."""
        self._built = None
        super()._register_theme(app_theme_name)

    def _stale(self, wanted: tuple) -> bool:
        column_ms = self._built_end_ms / max(self.size.width, 1)
        return wanted != self._built or not self._built_end_ms <= self.end_ms < self._built_end_ms + column_ms

    def _build(self) -> None:
        plt, race, end_ms = self.plt, self.race, self.end_ms
        plt.clear_figure()
        top = max(race.top if race else 0, 1)
        for index, territory_id in enumerate(self.territory_ids):
            steps = race.steps.get(territory_id, [(0, 0)]) if race else [(0, 0)]
            plt.plot(*step_line(steps, end_ms), marker=LINE_MARKER, color=line_colour(index))
        plt.xlim(0, end_ms)
        plt.ylim(0, top)
        ticks: list[float] = [end_ms * i // (TIME_TICKS - 1) for i in range(TIME_TICKS)]
        plt.xticks(ticks, [format_clock(int(tick)) for tick in ticks])
        plt.yticks([0, top // 2, top] if top > 1 else [0, top])
        frame = super().render()  # plotext's ANSI read back as text (PlotextPlot's own render)
        assert isinstance(frame, Text)
        self._frame = list(frame.split("\n"))
        self._canvas = Canvas.found_in(self._frame)
        self._built_end_ms = end_ms

    def render(self) -> RenderResult:
        race_version = self.race.version if self.race else -1
        wanted = (id(self.race), race_version, tuple(self.territory_ids), self.size, self.app.theme)
        if self._stale(wanted):
            self._build()
            self._built = wanted
        lines = [line.copy() for line in self._frame]
        canvas = self._canvas
        if canvas is not None:
            column = canvas.column(self.cursor_ms, self._built_end_ms)
            style = Style(color=Color.parse(self.app.theme_variables["accent"]).rich_color, bold=True)
            for row in range(canvas.top, canvas.bottom):
                line = lines[row]
                if line.plain[column : column + 1] == " ":  # a line crossing the cursor stays on top
                    lines[row] = line[:column] + Text(CURSOR_GLYPH, style) + line[column + 1 :]
        return Text("\n").join(lines)


class RaceChart(Vertical):
    """The legend (territory, its colour, its points at the cursor) above the plot."""

    def compose(self) -> ComposeResult:
        yield Static(id="race-legend")
        yield RacePlot(id="race-plot")

    def show(self, race: PointsRace, territory_ids: list[str], cursor_ms: int, end_ms: int) -> None:
        """The race up to `end_ms` (the match's length so far, the time axis of the scrubber below)."""
        legend = Content("  ").join(
            Content.assemble(
                ("━━ ", "#{:02x}{:02x}{:02x}".format(*line_colour(index))),
                literal(territory_id),
                (f" {race.points_at(territory_id, cursor_ms)}", "bold"),
            )
            for index, territory_id in enumerate(territory_ids)
        )
        self.query_one("#race-legend", Static).update(
            Content.assemble((" points at ", "$text-muted"), (format_clock(cursor_ms), "bold"), "  ", legend)
        )
        self.query_one(RacePlot).show(race, territory_ids, cursor_ms, end_ms)
