"""One agent's tool-call feed: every observable call up to the cursor, newest at the bottom."""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.untrusted import first_line
from aoe_tui.app.widgets.literal import LiteralTable, row_name
from aoe_tui.app.view.tool_calls import ToolCall, ToolCallIndex

# Fixed widths so columns do not shift while scrubbing (output takes the rest).
COLUMNS = {"time": 5, "kind": 10, "ok": 2, "description": 36, "command": 48, "output": None}


def call_cells(call: ToolCall) -> tuple[str, ...]:
    ok = "?" if call.success is None else ("✓" if call.success else "✗")
    return (
        format_clock(call.at_ms),
        call.kind,
        ok,
        first_line(call.description, 36),
        first_line(call.command, 48),
        first_line(call.output_excerpt, 80),
    )


class ToolFeed(LiteralTable):
    class Inspect(Message):
        def __init__(self, call: ToolCall) -> None:
            super().__init__()
            self.call = call

    def __init__(self, agent_id: str, calls: ToolCallIndex, **kwargs) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.agent_id = agent_id
        self.calls = calls
        self._count = 0

    def on_mount(self) -> None:
        for column, width in COLUMNS.items():
            self.add_column(column, key=column, width=width)

    def sync(self, elapsed_ms: int) -> None:
        """Rows are the calls started by `elapsed_ms`: a prefix, so add or drop at the end only."""
        count = self.calls.count_at(elapsed_ms)
        while self._count > count:
            self._count -= 1
            self.remove_row(str(self._count))
        while self._count < count:
            self.add_row(*call_cells(self.calls.calls[self._count]), key=str(self._count))
            self._count += 1
        if self._count:
            self.move_cursor(row=self._count - 1, animate=False)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.Inspect(self.calls.calls[int(row_name(event.row_key))]))
