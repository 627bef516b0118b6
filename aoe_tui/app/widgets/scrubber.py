"""The timeline scrubber: the whole match across the width, its notable moments, and the cursor.

Clicking or dragging posts `Seek` with a match time; the screen owns the
cursor, so the scrubber only draws what it is told and reports where the
user pointed.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.visual import Visual
from textual.widget import Widget

from aoe_tui.domain.clock import format_clock
from aoe_tui.store.markers import Marker

MARKER_GLYPHS = {
    "pass": ("▲", "$success"),
    "durable": ("◆", "$success bold"),
    "finish": ("⚑", "$accent bold"),
    "stall": ("✗", "$error"),
    "revoked": ("▼", "$error"),
    "infra": ("!", "$error bold"),
    "operator": ("‖", "$accent"),
}
ROWS = 3  # the markers, the track, the clock and status
# When two markers share a column the stronger one is drawn.
MARKER_PRIORITY = ["pass", "stall", "revoked", "operator", "infra", "durable", "finish"]


class TimelineScrubber(Widget, can_focus=False):
    class Seek(Message):
        def __init__(self, elapsed_ms: int) -> None:
            super().__init__()
            self.elapsed_ms = elapsed_ms

        def can_replace(self, message: Message) -> bool:
            """A drag posts a seek per mouse move: only the latest waiting one is worth a repaint."""
            return isinstance(message, TimelineScrubber.Seek)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.duration_ms = 0
        self.elapsed_ms = 0
        self.markers: list[Marker] = []
        self.status = ""
        self._dragging = False
        self._columns: tuple[tuple[int, int, int, int], dict[int, str]] | None = None
        self._marker_row: tuple[tuple[int, int, int, int], Content] | None = None

    def show(self, elapsed_ms: int, duration_ms: int, markers: list[Marker], status: str) -> None:
        """A cursor move or a new status repaints the track and the status line; new markers or a new
        duration, everything."""
        remarked = (duration_ms, len(markers)) != (self.duration_ms, len(self.markers))
        moved = (elapsed_ms, status) != (self.elapsed_ms, self.status)
        self.elapsed_ms, self.duration_ms, self.markers, self.status = elapsed_ms, duration_ms, markers, status
        if remarked:
            self.refresh()
        elif moved:
            self.refresh(Region(0, 1, self.size.width, 2))

    def _column(self, elapsed_ms: int, width: int) -> int:
        if self.duration_ms <= 0:
            return 0
        return round(min(max(elapsed_ms, 0), self.duration_ms) / self.duration_ms * (width - 1))

    def time_at(self, x: int) -> int:
        width = self.content_region.width
        if width <= 1:
            return 0
        return round(min(max(x, 0), width - 1) / (width - 1) * self.duration_ms)

    def _marked_columns(self, width: int) -> dict[int, str]:
        """The strongest marker of each column, worked out once per width, duration and marker list:
        a long match has thousands of markers and the cursor moves every frame."""
        key = (id(self.markers), len(self.markers), width, self.duration_ms)
        if self._columns is None or self._columns[0] != key:
            marks: dict[int, str] = {}
            for marker in self.markers:
                column = self._column(marker.elapsed_ms, width)
                current = marks.get(column)
                if current is None or MARKER_PRIORITY.index(marker.kind) > MARKER_PRIORITY.index(current):
                    marks[column] = marker.kind
            self._columns = key, marks
        return self._columns[1]

    def _markers_line(self, width: int) -> Content:
        """The row of marker glyphs, assembled once per width, duration and marker list (not per frame)."""
        key = (id(self.markers), len(self.markers), width, self.duration_ms)
        if self._marker_row is None or self._marker_row[0] != key:
            row: list[tuple[str, str]] = [(" ", "")] * width
            for column, kind in self._marked_columns(width).items():
                row[column] = MARKER_GLYPHS[kind]
            self._marker_row = key, Content.assemble(*row)
        return self._marker_row[1]

    def _row(self, y: int, width: int) -> Content:
        """Row `y`: the markers, the track with the cursor, the clock and the status."""
        if y == 0:
            return self._markers_line(width)
        if y == 1:
            cursor = self._column(self.elapsed_ms, width)
            return Content.assemble(
                ("━" * cursor, "$accent"), ("●", "bold $accent"), ("─" * (width - cursor - 1), "$text-muted")
            )
        left = f"{format_clock(self.elapsed_ms)} / {format_clock(self.duration_ms)}"
        return Content(left + self.status.rjust(max(width - len(left), 0)))

    def render(self) -> Content:
        """The rows, what the layout measures; they are drawn one by one (`render_line`)."""
        width = max(self.content_region.width, 2)
        return Content("\n").join([self._row(y, width) for y in range(ROWS)])

    def render_line(self, y: int) -> Strip:
        """Each row drawn alone, as the whole would draw it: a cursor move redraws the track and the status
        line, not the marker row (a tenth of a frame, with a long match's thousands of markers)."""
        width = self.size.width
        strips = Visual.to_strips(self, self._row(y, max(width, 2)), width, 1, self.visual_style) if y < ROWS else []
        return strips[0] if strips else Strip.blank(width, self.visual_style.rich_style)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        self._dragging = True
        self.capture_mouse()
        self.post_message(self.Seek(self.time_at(event.x)))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging:
            self.post_message(self.Seek(self.time_at(event.x)))

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.release_mouse()
