"""The match browser (`aoe open`): every saved match under some folders; Enter opens one."""

from __future__ import annotations

import time
from pathlib import Path

from textual import work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.saved_match import PREVIEW_BYTES, load_match
from aoe_tui.app.screens.host import host
from aoe_tui.app.widgets.literal import LiteralTable, row_name
from aoe_tui.app.view.match_catalog import (
    CatalogEntry,
    cached_entry,
    find_match_paths,
    pending_cells,
    read_entry,
    summary_cache,
)

# Fixed widths: DataTable keeps label-sized columns after clear(), which cut every name to five letters.
# What a user scans for comes first, so at 80 columns the match, its state, winner and duration still show.
FILL_EVERY_SECONDS = 0.1
"""Rows read are shown in batches at most this often: one repaint per row would slow the reading down."""
COLUMNS = {"match": 34, "state": 10, "winner": 14, "duration": 8, "arena": 30, "date": 16, "events": 11}


class BrowserScreen(Screen[None]):
    BINDINGS = [
        Binding("enter", "open", "Open match", show=False),
        Binding("r", "reload", "Rescan"),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, roots: list[Path]) -> None:
        super().__init__()
        self.roots = roots
        self.entries: dict[str, CatalogEntry] = {}

    def compose(self) -> ComposeResult:
        where = ", ".join(str(root) for root in self.roots)
        yield Static(
            Content.assemble((" MATCHES ", "reverse bold $accent"), " saved matches under ", where), id="browser-title"
        )
        table = LiteralTable(cursor_type="row", zebra_stripes=True, id="browser-table")
        for column, width in COLUMNS.items():
            table.add_column(column, key=column, width=width)
        yield table
        yield Static("scanning…", id="browser-status")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_reload(self) -> None:
        self.scan()

    @work(thread=True, exclusive=True)
    def scan(self) -> None:
        """Every match is listed at once (those seen before from their cached summaries), then the others are
        read one by one, off the UI thread (a match not seen before is read whole), each row filled as it is."""
        cache = summary_cache()
        paths = find_match_paths(self.roots)
        known = {path: cached_entry(path, cache) for path in paths}
        unread = [path for path in paths if known[path] is None]
        self.app.call_from_thread(self._list, paths, known, len(unread))
        worker, batch, shown = get_current_worker(), [], time.monotonic()
        for done, path in enumerate(unread, 1):
            if worker.is_cancelled:
                return
            batch.append(read_entry(path, cache))
            if time.monotonic() - shown >= FILL_EVERY_SECONDS or done == len(unread):
                self.app.call_from_thread(self._fill, batch, len(unread) - done)
                batch, shown = [], time.monotonic()
        cache.save()

    def _list(self, paths: list[Path], known: dict[Path, CatalogEntry | None], unread: int) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.entries = {str(path): entry for path, entry in known.items() if entry is not None}
        for path in paths:
            entry = known[path]
            table.add_row(*(entry.cells() if entry is not None else pending_cells(path)), key=str(path))
        self._say(len(paths), unread)

    def _fill(self, entries: list[CatalogEntry], unread: int) -> None:
        table = self.query_one(DataTable)
        for entry in entries:
            key = str(entry.path)
            self.entries[key] = entry
            for column, value in zip(COLUMNS, entry.cells()):
                table.update_cell(key, column, value)
        self._say(table.row_count, unread)

    def _say(self, listed: int, unread: int) -> None:
        if not listed:
            status = "no saved matches found here"
        elif unread:
            status = f"{listed} matches · reading {unread} not seen before…"
        else:
            status = f"{listed} matches · enter opens one"
        self.query_one("#browser-status", Static).update(status)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open(self.entries.get(row_name(event.row_key)))

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            self._open(self.entries.get(row_name(key)))

    def _open(self, entry: CatalogEntry | None) -> None:
        if entry is None:
            self.notify("still reading this match: it opens once its row is filled in")
            return
        if entry.error:
            self.notify(entry.error, severity="error")
            return
        try:  # listed from its cached summary: read now (a long log on its start, the rest in the background)
            match = entry.match or load_match(entry.path, preview_bytes=PREVIEW_BYTES)
        except AoeError as error:
            self.notify(str(error), severity="error")
            return
        host(self.app).open_match(match)
