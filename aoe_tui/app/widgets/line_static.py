"""A `Static` of lines that never wrap, repainted line by line: a change redraws only the lines it changed.

`Static.update` draws the whole content again, every line of it, and the territory panes' parts change
many times a second while playing (an agent's tokens, the "no observable tool activity for ..." clock):
at End, Home or 60x playback, drawing every line of every pane's parts again was a third of the frame.
With text that never wraps, each line is drawn alone exactly as the whole would draw it, so a part
redraws the lines whose text or styles changed and lays the screen out again only when its number of
lines changes.

A line is drawn here, not by Textual's `StylesCache` (which would pad it to the width and pass it through
the app's line filters at every repaint, cached or not), and kept finished by what it shows (its text and
styles, row, width, style and backgrounds, the theme and line filters) in a cache every `LineStatic` shares, as the event
table keeps its rows (`EventTable`): a line shown before is not drawn again. The panes show many the same
(every territory's "· host-reboot  pending" at the start, its agent's "completed" at the end), and a
cursor that goes back (a step back, Home after End, a marker before) finds the lines it showed; at End or
Home, drawing the lines that changed was a third of the frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.cache import LRUCache
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.geometry import Region
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widgets import Static


DRAWN_LINES = 2048  # a dozen panes' lines at a few hundred moments


def filtered(strip: Strip, filters: Sequence[LineFilter], background: Color) -> Strip:
    """`strip` through the app's line filters, as Textual passes every line it draws."""
    for line_filter in filters:
        strip = strip.apply_filter(line_filter, background)
    return strip


def _drawn_as(line: Content) -> tuple[str, tuple]:
    """What a line looks like: its text and its styles (`Content` equality compares the text alone)."""
    return line.plain, tuple(line.spans)


class LineStatic(Static):
    """Shown with `show`; for text with `text-wrap: nowrap` (each line is drawn on its own) and no padding,
    border, tint or opacity (the lines are finished here, not by Textual)."""

    auto_links = False  # no line has a link (player text is literal): no link-styling pass per drawn line
    _drawn: ClassVar[LRUCache[tuple, Strip]] = LRUCache(DRAWN_LINES)  # shared: see the module's docstring

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._lines: list[Content] = []
        self._whole: Content | None = Content("")  # the lines joined, once something asks for them
        # The lines shown, finished, and what they were finished for (width, styles, backgrounds...): every
        # frame composes the whole screen, and looking each line up in the shared cache again added up.
        self._finished: list[Strip | None] = []
        self._finished_for: tuple | None = None

    def show(self, lines: list[Content]) -> None:
        """Show `lines`, repainting those that differ from the lines shown."""
        before, self._lines, self._whole = self._lines, lines, None
        if len(lines) != len(before):
            self._finished = [None] * len(lines)
            self.refresh(layout=True)
            return
        changed = [y for y, (old, new) in enumerate(zip(before, lines)) if _drawn_as(old) != _drawn_as(new)]
        if changed:
            for y in changed:
                self._finished[y] = None
            width = self.size.width  # (a lookup of the widget's place on the screen: once, not per line)
            self.refresh(*(Region(0, y, width, 1) for y in changed))

    def render(self) -> Content:
        """The whole content: what the layout measures (and what a text selection is drawn on)."""
        if self._whole is None:
            self._whole = Content("\n").join(self._lines)
        return self._whole

    def render_lines(self, crop: Region) -> list[Strip]:
        """The finished lines in `crop`, from the shared cache or drawn (`render_line`), padded and filtered."""
        if self.text_selection is not None:
            return super().render_lines(crop)  # a selection spans lines: Textual draws the whole content with it
        width, style = self.size.width, self.visual_style
        base_background, background = self.background_colors
        inside = Style(background=base_background + background).rich_style  # what Textual pads a line with
        filters = tuple(self.get_line_filters())
        seen = (width, style, self.app.theme, filters, base_background, background)
        if seen != self._finished_for:
            self._finished, self._finished_for = [None] * len(self._lines), seen
        strips = []
        for y in crop.line_range:
            strip = self._finished[y] if y < len(self._finished) else None
            if strip is None:
                key = (_drawn_as(self._lines[y]) if y < len(self._lines) else None, y, *seen)
                strip = self._drawn.get(key)
                if strip is None:
                    strip = self._drawn[key] = filtered(
                        self.render_line(y).adjust_cell_length(width, inside), filters, background
                    )
                if y < len(self._finished):
                    self._finished[y] = strip
            strips.append(strip)
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def render_line(self, y: int) -> Strip:
        """Line `y` drawn alone, exactly as the whole content would draw it."""
        if self.text_selection is not None:
            return super().render_line(y)  # a selection spans lines: the whole content is drawn with it
        width, style = self.size.width, self.visual_style
        if y >= len(self._lines):
            return Strip.blank(width, style.rich_style)
        line = self._lines[y]
        if not line:
            # An empty line draws nothing and is padded with the background, as Textual fills a margin: a
            # blank line between parts looks exactly as the margin that parted them did.
            return Strip([])
        strips = Visual.to_strips(self, line, width, 1, style)
        # Drawn alone, a line's characters say they are on the first row: a mouse selection must find its row.
        return strips[0].apply_offsets(0, y) if strips else Strip.blank(width, style.rich_style)
