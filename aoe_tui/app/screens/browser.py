"""The match browser (`aoe open`): every saved match under some folders; Enter opens one."""

from __future__ import annotations

from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from aoe_tui.domain.errors import AoeError
from aoe_tui.store.saved_match import PREVIEW_BYTES, load_match
from aoe_tui.app.widgets.literal import LiteralTable
from aoe_tui.app.view.match_catalog import CatalogEntry, build_catalog, summary_cache

# Fixed widths: DataTable keeps label-sized columns after clear(), which cut every name to five letters.
# What a user scans for comes first, so at 80 columns the match, its state, winner and duration still show.
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
        """Reading a match not seen before reads its whole log: off the UI thread."""
        entries = build_catalog(self.roots, summary_cache())
        self.app.call_from_thread(self._show, entries)

    def _show(self, entries: list[CatalogEntry]) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.entries = {str(entry.path): entry for entry in entries}
        for entry in entries:
            table.add_row(*entry.cells(), key=str(entry.path))
        status = f"{len(entries)} matches · enter opens one" if entries else "no saved matches found here"
        self.query_one("#browser-status", Static).update(status)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self._open(self.entries[event.row_key.value])

    def action_open(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            self._open(self.entries[key])

    def _open(self, entry: CatalogEntry) -> None:
        if entry.error:
            self.notify(entry.error, severity="error")
            return
        try:  # listed from its cached summary: read now (a long log on its start, the rest in the background)
            match = entry.match or load_match(entry.path, preview_bytes=PREVIEW_BYTES)
        except AoeError as error:
            self.notify(str(error), severity="error")
            return
        self.app.open_match(match)
