"""The rows of the event list, drawn line by line: a step redraws the row it added, not the whole table.

A `DataTable` renders every visible cell again after any `update_cell` (its caches are keyed by an update
counter), and a step shifts every row of the event list's window by one: at a million events that was
half of each frame. Here each row's line is kept by what it shows (its cells, the width, stripe and
cursor), so a shifted row is found again and only the new one is built. The stripe follows a row's place
in the whole list, not its slot, so it does not flicker as the window moves.

Cells are player text: they are cleaned of controls and drawn as plain segments, never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from aoe_tui.domain.untrusted import clean_text

CELL_PADDING = 1
LINE_CACHE_SIZE = 512


class EventTable(ScrollView, can_focus=True):
    """Fixed-width columns of cleaned text, a row cursor, and `Selected` when a row is chosen."""

    BINDINGS = [
        Binding("enter", "select", "Inspect", show=False),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]
    COMPONENT_CLASSES = {"event-table--odd", "event-table--cursor"}

    cursor_row: reactive[int] = reactive(0, always_update=True, init=False)

    class Selected(Message):
        """The user chose the row at `cursor_row` (enter or a click)."""

        def __init__(self, cursor_row: int) -> None:
            super().__init__()
            self.cursor_row = cursor_row

    def __init__(self, widths: Sequence[int], **kwargs) -> None:
        super().__init__(**kwargs)
        self.widths = list(widths)
        self._rows: list[tuple[str, ...]] = []
        self._places: list[int] = []  # each row's place in the whole list (its stripe)
        self._cleaned: LRUCache[tuple, tuple[str, ...]] = LRUCache(LINE_CACHE_SIZE)  # rows as given -> as drawn
        self._lines: LRUCache[tuple, Strip] = LRUCache(LINE_CACHE_SIZE)
        self._styles: dict[tuple[bool, bool], Style] = {}  # a row's style by (cursor, odd), until restyled

    # -- what the list shows --------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def get_row_at(self, row: int) -> tuple[str, ...]:
        return self._rows[row]

    def set_widths(self, widths: Sequence[int]) -> None:
        if list(widths) != self.widths:
            self.widths = list(widths)
            self._sized()
            self.refresh()

    def set_rows(self, rows: Sequence[Sequence[object]], places: Sequence[int]) -> None:
        """Show `rows` (cells, cleaned here), the first at `places[0]` of the whole list; lines whose row and
        stripe did not change are found in the cache."""
        cleaned = [self._clean(tuple(row)) for row in rows]  # a row shown before is not cleaned again
        if cleaned == self._rows and list(places) == self._places:
            return
        self._rows, self._places = cleaned, list(places)
        self._sized()
        self.refresh()

    def _clean(self, row: tuple) -> tuple[str, ...]:
        known = self._cleaned.get(row)
        if known is None:
            known = self._cleaned[row] = tuple(map(clean_text, row))
        return known

    def move_cursor(self, *, row: int, animate: bool = False) -> None:
        """Put the cursor on `row` and scroll it into view: now, if the table has its size (the rows' extent is
        set at once, `_sized`), so the frame draws the rows in view and not first those it scrolls away from;
        and once more after the next refresh, for a table not laid out yet (a no-op if already in view)."""
        self.cursor_row = max(0, min(row, len(self._rows) - 1))
        if self.size:
            self._scroll_to_cursor(animate)
        self.call_after_refresh(self._scroll_to_cursor, animate)

    def _scroll_to_cursor(self, animate: bool) -> None:
        self.scroll_to_region(Region(0, self.cursor_row, 1, 1), animate=animate, force=True, immediate=True)

    def _sized(self) -> None:
        """The rows' extent, set without the layout pass Textual runs on a new virtual size: only a scrollbar
        shown or hidden changes the table's geometry, and that asks for its own. Playing from the start
        grows the window a row per event, and each was a layout of the whole screen."""
        size = Size(sum(self.widths) + 2 * CELL_PADDING * len(self.widths), len(self._rows))
        if size != self.virtual_size:
            self.set_reactive(EventTable.virtual_size, size)
            self._scroll_update(size)

    def watch_cursor_row(self) -> None:
        self.refresh()

    # -- keys and the mouse ------------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(row=self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(row=self.cursor_row + direction * max(self.scrollable_content_region.height - 1, 1))

    def action_select(self) -> None:
        if self._rows:
            self.post_message(self.Selected(self.cursor_row))

    async def _on_click(self, event: events.Click) -> None:
        row = event.y + self.scroll_offset.y
        if 0 <= row < len(self._rows):
            self.move_cursor(row=row)
            self.post_message(self.Selected(row))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._lines.clear()
        self._styles.clear()

    # -- drawing ---------------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        row = scroll_y + y
        plain = self._style(cursor=False, odd=False)  # the table's own style (asked per line, a tenth of a frame)
        if not 0 <= row < len(self._rows):
            return Strip.blank(width, plain)
        return self._line(row).crop_extend(scroll_x, scroll_x + width, plain)

    def _line(self, row: int) -> Strip:
        cursor = row == self.cursor_row
        odd = self._places[row] % 2 == 1 if row < len(self._places) else False
        key = (self._rows[row], tuple(self.widths), cursor, odd, self.has_focus)
        line = self._lines.get(key)
        if line is None:
            line = self._build(self._rows[row], self._style(cursor, odd))
            self._lines[key] = line
        return line

    def _style(self, cursor: bool, odd: bool) -> Style:
        """A row's style: worked out once per look and focus (every new row asked for it, a tenth of a frame);
        neither cursor nor odd, the table's own."""
        known = self._styles.get((cursor, odd))
        if known is None:
            known = self.rich_style
            if odd:
                known += self.get_component_rich_style("event-table--odd")
            if cursor:
                known += self.get_component_rich_style("event-table--cursor")
            self._styles[cursor, odd] = known
        return known

    def _build(self, cells: tuple[str, ...], style: Style) -> Strip:
        pad = " " * CELL_PADDING
        text = "".join(f"{pad}{set_cell_size(cell, width)}{pad}" for cell, width in zip(cells, self.widths))
        return Strip([Segment(text, style)])

    def _on_focus(self, event: events.Focus) -> None:
        self._styles.clear()  # :focus restyles the cursor row
        self.refresh()

    def _on_blur(self, event: events.Blur) -> None:
        self._styles.clear()
        self.refresh()
