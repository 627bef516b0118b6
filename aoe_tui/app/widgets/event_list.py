"""The event list under the scrubber: the events up to the cursor, filtered, stalls collapsed.

The table holds the `WINDOW` rows ending at the cursor, never a long match's hundreds of thousands, and
keeps that many: moving forward drops rows at the top as it adds them at the end, a step back or a jump
refills it, a growing stall row updates its cells in place. A table whose size stays the same needs no
layout pass, and a layout pass (the whole screen arranged and re-rendered) was most of a frame; for the
same reason the summary column is as wide as the view, set on resize rather than grown by its cells.
A filter change rebuilds it.
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
        self._start = 0  # the row number of the table's first row
        self._shown: list[EventRow] = []
        self._cells: dict[str, tuple[str, ...]] = {}

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
        self._clear(0)
        self._show_filter()
        self.sync(self.position)

    def timeline_grew(self) -> None:
        """New events were appended to the shared list (live); stall grouping may have changed.

        Rows are regrouped, but the table keeps every shown row up to the first one whose identity
        changed (an event that turned out to start a stall): a live tick touches the last rows, and
        rebuilding a long match's table on every tick would cost more than the tick itself.
        """
        self.rows = EventRows(self.timeline, self.event_filter)
        unchanged = 0
        for shown, row in zip(self._shown, self.rows[self._start : self._start + len(self._shown)]):
            if shown.key != row.key:
                break
            unchanged += 1
        for gone in self._shown[unchanged:]:
            self.table.remove_row(gone.key)
            del self._cells[gone.key]
        self._shown = self._shown[:unchanged]
        self.sync(self.position)

    def _clear(self, start: int) -> None:
        self.table.clear()
        self._start, self._shown, self._cells = start, [], {}

    def _show_filter(self) -> None:
        shown = f"filter: {self.event_filter.describe()}  (k kind · t territory · u agent · x clear)"
        self.query_one(".filter-line", Static).update(literal(shown))

    def on_resize(self) -> None:
        """The summary column takes the width the fixed columns leave (re-added, so the rows are refilled)."""
        table = self.table
        fixed = sum(width for width in COLUMNS.values() if width) + 2 * table.cell_padding * len(COLUMNS)
        width = max(self.size.width - fixed - SCROLLBAR_WIDTH, SUMMARY_MIN_WIDTH)
        if table.columns["summary"].width == width and not table.columns["summary"].auto_width:
            return
        table.remove_column("summary")
        table.add_column("summary", key="summary", width=width)
        self._clear(0)
        self.sync(self.position)

    def sync(self, position: int) -> None:
        self.position = position
        table = self.table
        count = self.rows.visible_count(position)
        start = max(count - WINDOW, 0)
        end = self._start + len(self._shown)
        if not self._start <= start <= end <= count:
            self._clear(start)  # a step back or a jump: refilled, so the table keeps its size
        while self._start < start and self._shown:  # forward: the oldest rows leave as new ones come
            row = self._shown.pop(0)
            table.remove_row(row.key)
            del self._cells[row.key]
            self._start += 1
        for row in self._shown:
            if row.is_stall:
                self._update(row)
        for row in self.rows[self._start + len(self._shown) : count]:
            cells = self.rows.cells(row, position)
            table.add_row(*cells, key=row.key)
            self._cells[row.key] = cells
            self._shown.append(row)
        if self._shown:
            table.move_cursor(row=len(self._shown) - 1, animate=False)

    def _update(self, row: EventRow) -> None:
        cells = self.rows.cells(row, self.position)
        if cells != self._cells[row.key]:
            for column, (old, new) in zip(COLUMNS, zip(self._cells[row.key], cells)):
                if old != new:
                    self.table.update_cell(row.key, column, new)
            self._cells[row.key] = cells

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = next(row for row in self._shown if row.key == event.row_key.value)
        self.post_message(self.Inspect(row.positions[: row.count_at(self.position)]))
