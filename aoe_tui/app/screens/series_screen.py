"""A series or benchmark folder in the app: standings, a bar chart, the rotation grid, the rounds.

Opened by `aoe replay DIR` on a series/benchmark folder. Every round is a row
that opens its replay (Enter); a benchmark shows its leaderboard by model
configuration and opens an arena's series view. Everything shown comes from
`analysis.series_overview`, which recomputes standings from the round
matches; agent ids and models are player text, so cells are literal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from aoe_tui.analysis.intervals import interval_lines
from aoe_tui.analysis.series_overview import BenchmarkOverview, Outcome, SeriesOverview
from aoe_tui.analysis.standings_format import (
    COLUMNS,
    NA,
    failure_text,
    row_label,
    standing_cells,
    usd,
)
from aoe_tui.app.screens.host import host
from aoe_tui.app.widgets.literal import LiteralTable, literal, row_name
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.untrusted import clean_text

OUTCOME_STYLE: dict[Outcome, str] = {
    "won": "bold black on green",
    "durable": "black on cyan",
    "lost": "red",
    "forfeit": "black on yellow",
    "undecided": "dim",
}
BAR_WIDTH = 24
LABEL_WIDTH = 40  # at most; a model configuration label is long
SERIES_CSS = """
.series-heading { text-style: bold; color: $accent; margin-top: 1; }
#series-chart { margin-top: 1; }
#series-grid, #series-standings, #series-rounds, #benchmark-leaderboard, #benchmark-arenas { height: auto; }
"""


def _bar(value: int | None, top: int) -> str:
    if value is None:
        return ""
    filled = round(BAR_WIDTH * value / top) if top else 0
    return "█" * filled + ("▏" if value and not filled else "")


def chart_content(rows: list[dict], title: str = "wins · durable deployments · cost") -> Content:
    """Horizontal bars per row for wins, durable deployments and cost (n/a rows get no cost bar)."""
    metrics: list[tuple[str, str, str, Callable[[int | None], str]]] = [
        ("wins", "wins", "$success", str),
        ("durable", "durable_deployments", "$accent", str),
        ("cost", "cost_microusd", "$warning", usd),
    ]
    parts: list = [(f" {title}\n", "bold")]
    width = min(max((len(clean_text(row_label(row))) for row in rows), default=0), LABEL_WIDTH)
    for name, key, style, show in metrics:
        top = max((row[key] or 0 for row in rows), default=0)
        parts.append((f" {name}\n", "italic"))
        for row in rows:
            label = clean_text(row_label(row))[:width].ljust(width)
            value = row[key]
            parts += [
                f"  {label} ",
                (_bar(value, top).ljust(BAR_WIDTH), style),
                f" {NA if value is None else show(value)}\n",
            ]
    return Content.assemble(*parts)


def outcome_cell(entries: list[tuple[int, Outcome]]) -> Text:
    text = Text(no_wrap=True, end="")
    for index, (number, outcome) in enumerate(entries):
        if index:
            text.append(" ")
        text.append(f"r{number} {outcome}", style=OUTCOME_STYLE[outcome])
    return text


def title_bar(badge: str, name: str, summary: str, path: Path) -> Static:
    """The one-line title of a series or benchmark view (names and paths shown literally)."""
    return Static(
        Content.assemble(
            (f" {badge} ", "reverse bold $accent"), " ", literal(name), f" · {summary} · ", literal(str(path))
        ),
        id="series-title",
    )


def table(table_id: str, columns: tuple[str, ...] | list[str], rows: bool = False, zebra: bool = True) -> LiteralTable:
    """A literal table with `columns` (keyed by their names); `rows`: a row cursor (Enter opens it)."""
    widget = LiteralTable(cursor_type="row" if rows else "none", zebra_stripes=zebra, id=table_id)
    for column in columns:
        widget.add_column(column, key=column)
    return widget


def seats_text(seats: dict[str, str]) -> str:
    """agent@territory, for each seat of a round."""
    return ", ".join(f"{agent}@{territory}" for agent, territory in seats.items())


class SeriesScreen(Screen[None]):
    DEFAULT_CSS = SERIES_CSS
    BINDINGS = [
        Binding("enter", "open", "Open round", show=False),
        Binding("escape", "back", "Back"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, series: SeriesOverview) -> None:
        super().__init__()
        self.series = series

    def compose(self) -> ComposeResult:
        s = self.series
        requested = s.rounds_requested if s.rounds_requested is not None else "?"
        yield title_bar("SERIES", s.arena_id, f"{s.decided}/{requested} rounds decided", s.path)
        with VerticalScroll():
            yield from self.sections()
        yield Footer()

    def sections(self) -> ComposeResult:
        """Standings, chart, rotation grid and rounds, one below the other (a live series adds its own)."""
        s = self.series
        yield Static(" Standings (recomputed from the round matches)", classes="series-heading")
        standings = table("series-standings", COLUMNS)
        for row in s.standings:
            standings.add_row(*standing_cells(row))
        yield standings
        yield Static(literal(" " + " · ".join(interval_lines(s.standings)[1:])), id="series-certainty")
        yield Static(chart_content(s.standings), id="series-chart")
        yield Static(" Rotation grid: each agent from each seat, by round", classes="series-heading")
        grid = LiteralTable(cursor_type="none", id="series-grid")
        grid.add_column("agent \\ seat", key="agent")
        for territory in s.territories:
            grid.add_column(territory, key=territory)
        for agent, seats in s.grid().items():
            grid.add_row(agent, *(outcome_cell(seats.get(t, [])) for t in s.territories))
        yield grid
        yield Static(" Rounds (enter opens the replay)", classes="series-heading")
        rounds = table("series-rounds", ("round", "state", "winner", "duration", "seats", "folder"), rows=True)
        for index, r in enumerate(s.rounds):
            rounds.add_row(
                str(r.number),
                r.state,
                r.winner or "none",
                format_clock(r.duration_ms),
                r.error or seats_text(r.seats),
                r.path.name,
                key=str(index),
            )
        yield rounds

    def on_mount(self) -> None:
        self.query_one("#series-rounds", DataTable).focus(scroll_visible=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open(row_name(event.row_key))

    def action_open(self) -> None:
        table = self.query_one("#series-rounds", DataTable)
        if table.row_count:
            self._open(row_name(table.coordinate_to_cell_key(table.cursor_coordinate).row_key))

    def _open(self, index: str) -> None:
        """The round's replay, loaded from its folder or its bundle (whichever the series was read from)."""
        try:
            host(self.app).open_match(self.series.rounds[int(index)].load())
        except AoeError as error:
            self.notify(str(error), severity="error")

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()


LEADERBOARD = (
    "model configuration",
    "rounds",
    "wins",
    "durable",
    "median durable",
    "milestones",
    "tokens in",
    "cost",
    "cost/durable",
    "failures",
)


class BenchmarkScreen(Screen[None]):
    DEFAULT_CSS = SERIES_CSS
    BINDINGS = [
        Binding("enter", "open", "Open arena", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, benchmark: BenchmarkOverview) -> None:
        super().__init__()
        self.benchmark = benchmark

    def compose(self) -> ComposeResult:
        b = self.benchmark
        yield title_bar("BENCHMARK", b.suite_id, f"{len(b.arenas)} arenas", b.path)
        with VerticalScroll():
            yield Static(" Leaderboard by model configuration", classes="series-heading")
            board = table("benchmark-leaderboard", LEADERBOARD)
            for row in b.standings:
                cells = standing_cells(row)
                available = row["milestones_available"]
                board.add_row(
                    cells[0],
                    *cells[2:6],
                    f"{row['milestone_passes']}/{NA if available is None else available}",
                    cells[7],
                    cells[9],
                    cells[10],
                    failure_text(row["failures"]),
                )
            yield board
            yield Static(chart_content(b.standings), id="series-chart")
            yield Static(" Arenas (enter opens the arena's series)", classes="series-heading")
            arenas = table("benchmark-arenas", ("arena", "rounds", "leader", "folder"), rows=True)
            for index, arena in enumerate(b.arenas):
                leader = arena.standings[0]["agent"] if arena.standings else "none"
                requested = arena.rounds_requested if arena.rounds_requested is not None else "?"
                arenas.add_row(arena.arena_id, f"{arena.decided}/{requested}", leader, arena.path.name, key=str(index))
            yield arenas
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#benchmark-arenas", DataTable).focus(scroll_visible=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.app.push_screen(SeriesScreen(self.benchmark.arenas[int(row_name(event.row_key))]))

    def action_open(self) -> None:
        table = self.query_one("#benchmark-arenas", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            self.app.push_screen(SeriesScreen(self.benchmark.arenas[int(row_name(key))]))
