"""The event list under the scrubber: the events up to the cursor, filtered, stalls collapsed.

The table shows the `WINDOW` rows ending at the cursor, never a long match's hundreds of thousands,
drawn line by line (`EventTable`: a step builds the line of the row it added). The columns have fixed
widths and the summary takes what the view leaves, set on resize, so scrubbing never changes the
table's size (that would lay the whole screen out again). A row's cells are computed once and kept for a
few windows' rows (a stall row's as it grows): a step shifts the window by a row, and a cursor that goes
back (Home after End, a marker before) finds the rows it showed.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from aoe_tui.app.view.event_rows import EventFilter, EventRow, EventRows
from aoe_tui.app.widgets.event_table import CELL_PADDING, EventTable
from aoe_tui.app.widgets.literal import literal
from aoe_tui.store.timeline import TimelineIndex

# Fixed widths: columns must not shift while scrubbing adds and removes rows (summary takes the rest).
WINDOW = 60  # rows kept before the cursor: a few screens to scroll back through
CELLS_KEPT = 4 * WINDOW  # rows whose cells are kept
COLUMNS = {"time": 11, "kind": 28, "actor": 16, "summary": None}
SUMMARY_MIN_WIDTH = 20
SCROLLBAR_WIDTH = 2


class EventList(Vertical):
    class Inspect(Message):
        """The user asked for the raw events behind a row."""

        def __init__(self, positions: list[int]) -> None:
            super().__init__()
            self.positions = positions

    def __init__(self, timeline: TimelineIndex, rows: EventRows, **kwargs) -> None:
        super().__init__(**kwargs)
        self.timeline = timeline
        self.rows = rows
        self.position = -1
        self._shown: list[EventRow] = []  # the window's rows, in order
        self._cells: LRUCache[str, tuple[str, ...]] = LRUCache(CELLS_KEPT)  # rows' cells, by row key
        self._table = EventTable(self._widths(SUMMARY_MIN_WIDTH))

    def compose(self) -> ComposeResult:
        yield Static(classes="filter-line")
        yield Static(self._header(SUMMARY_MIN_WIDTH), classes="event-header")
        yield self._table

    def on_mount(self) -> None:
        self._show_filter()

    @property
    def table(self) -> EventTable:
        return self._table

    @staticmethod
    def _widths(summary_width: int) -> list[int]:
        return [width or summary_width for width in COLUMNS.values()]

    def _header(self, summary_width: int) -> Content:
        pad = " " * CELL_PADDING
        return Content(
            "".join(f"{pad}{name:<{width}}{pad}" for name, width in zip(COLUMNS, self._widths(summary_width)))
        ).stylize("bold")

    @property
    def event_filter(self) -> EventFilter:
        return self.rows.event_filter

    def set_filter(self, event_filter: EventFilter) -> None:
        self.rows = EventRows(self.timeline, event_filter)
        self._cells.clear()
        self._show_filter()
        self.sync(self.position)

    def timeline_grew(self) -> None:
        """New events were appended to the shared list (live): rows are regrouped (an event may have turned
        out to start a stall) and the slots whose row changed are rewritten."""
        self.rows = EventRows(self.timeline, self.event_filter)
        self._cells.clear()
        self.sync(self.position)

    def _show_filter(self) -> None:
        shown = f"filter: {self.event_filter.describe()}  (k kind · t territory · u agent · x clear)"
        self.query_one(".filter-line", Static).update(literal(shown))

    def on_resize(self) -> None:
        """The summary column takes the width the fixed columns leave."""
        fixed = sum(width for width in COLUMNS.values() if width) + 2 * CELL_PADDING * len(COLUMNS)
        width = max(self.size.width - fixed - SCROLLBAR_WIDTH, SUMMARY_MIN_WIDTH)
        self.query_one(".event-header", Static).update(self._header(width))
        self._table.set_widths(self._widths(width))

    def sync(self, position: int) -> None:
        self.position = position
        count = self.rows.visible_count(position)
        first = max(count - WINDOW, 0)
        window = list(self.rows[first:count])
        self._shown = window
        self._table.set_rows([self._row_cells(row, position) for row in window], range(first, count))
        if window:
            self._table.move_cursor(row=len(window) - 1)

    def _row_cells(self, row: EventRow, position: int) -> tuple[str, ...]:
        """A row's cells, computed once; a stall row's each time (it grows)."""
        known = self._cells.get(row.key)
        if known is None or row.is_stall:
            known = self._cells[row.key] = self.rows.cells(row, position)
        return known

    def on_event_table_selected(self, event: EventTable.Selected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self._shown):
            row = self._shown[event.cursor_row]
            self.post_message(self.Inspect(row.positions[: row.count_at(self.position)]))
