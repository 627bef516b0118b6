"""The event list under the scrubber: the events up to the cursor, filtered, stalls collapsed.

The table shows the `WINDOW` rows ending at the cursor, never a long match's hundreds of thousands, in
`WINDOW` fixed slots: a step rewrites the cells of the slots whose row changed, and rows are added or
removed only while fewer than `WINDOW` are visible (the very start of a match). Textual lays the whole
screen out again whenever a table's size changes or a row is removed, and that layout pass was most of
a frame; for the same reason the summary column is as wide as the view, set on resize, not grown by
its cells. A row's cells are computed once while it stays in the window (a stall row's as it grows).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from aoe_tui.app.view.event_rows import EventFilter, EventRow, EventRows
from aoe_tui.store.timeline import TimelineIndex
from aoe_tui.app.widgets.literal import LiteralTable, literal

# Fixed widths: columns must not shift while scrubbing adds and removes rows (summary takes the rest).
WINDOW = 60  # rows kept before the cursor: a few screens to scroll back through
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
        self._shown: list[EventRow] = []  # the row in each slot
        self._slot_cells: list[tuple[str, ...]] = []  # what each slot shows
        self._cells: dict[str, tuple[str, ...]] = {}  # the window's rows' cells, by row key

    def compose(self) -> ComposeResult:
        yield Static(classes="filter-line")
        table = LiteralTable(cursor_type="row", zebra_stripes=True)
        for column, width in COLUMNS.items():
            table.add_column(column, key=column, width=width)
        yield table

    def on_mount(self) -> None:
        self._show_filter()

    @property
    def table(self) -> DataTable:
        return self.query_one(DataTable)

    @property
    def event_filter(self) -> EventFilter:
        return self.rows.event_filter

    def set_filter(self, event_filter: EventFilter) -> None:
        self.rows = EventRows(self.timeline, event_filter)
        self._cells = {}
        self._show_filter()
        self.sync(self.position)

    def timeline_grew(self) -> None:
        """New events were appended to the shared list (live): rows are regrouped (an event may have turned
        out to start a stall) and the slots whose row changed are rewritten."""
        self.rows = EventRows(self.timeline, self.event_filter)
        self._cells = {}
        self.sync(self.position)

    def _show_filter(self) -> None:
        shown = f"filter: {self.event_filter.describe()}  (k kind · t territory · u agent · x clear)"
        self.query_one(".filter-line", Static).update(literal(shown))

    def on_resize(self) -> None:
        """The summary column takes the width the fixed columns leave (re-added, so the slots are refilled)."""
        table = self.table
        fixed = sum(width for width in COLUMNS.values() if width) + 2 * table.cell_padding * len(COLUMNS)
        width = max(self.size.width - fixed - SCROLLBAR_WIDTH, SUMMARY_MIN_WIDTH)
        if table.columns["summary"].width == width and not table.columns["summary"].auto_width:
            return
        table.clear()
        table.remove_column("summary")
        table.add_column("summary", key="summary", width=width)
        self._shown, self._slot_cells = [], []
        self.sync(self.position)

    def sync(self, position: int) -> None:
        self.position = position
        table = self.table
        count = self.rows.visible_count(position)
        window = list(self.rows[max(count - WINDOW, 0) : count])
        cells = {row.key: self._row_cells(row, position) for row in window}
        while len(self._slot_cells) > len(window):
            self._slot_cells.pop()
            table.remove_row(slot_key(len(self._slot_cells)))
        for slot, row in enumerate(window):
            if slot == len(self._slot_cells):
                table.add_row(*cells[row.key], key=slot_key(slot))
                self._slot_cells.append(cells[row.key])
            elif self._slot_cells[slot] != cells[row.key]:
                for column, old, new in zip(COLUMNS, self._slot_cells[slot], cells[row.key]):
                    if old != new:
                        table.update_cell(slot_key(slot), column, new)
                self._slot_cells[slot] = cells[row.key]
        self._shown, self._cells = window, cells
        if window and table.cursor_row != len(window) - 1:
            table.move_cursor(row=len(window) - 1, animate=False)

    def _row_cells(self, row: EventRow, position: int) -> tuple[str, ...]:
        """A row's cells, computed once while it stays in the window; a stall row's each time (it grows)."""
        known = self._cells.get(row.key)
        return known if known is not None and not row.is_stall else self.rows.cells(row, position)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if 0 <= event.cursor_row < len(self._shown):
            row = self._shown[event.cursor_row]
            self.post_message(self.Inspect(row.positions[: row.count_at(self.position)]))


def slot_key(slot: int) -> str:
    return f"slot-{slot}"
