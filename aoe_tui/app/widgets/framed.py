"""A container that draws its own frame, so a new frame colour or title repaints the frame's cells alone.

Textual draws a CSS border into every line of the widget it surrounds: a new border colour (a class that
restyles the widget) or a new border title repaints every line of the widget and of all it covers. At End
or Home every territory pane's state (its border's colour) and points (its titles) change, and those
repaints, restyles and titles were a third of a 90 ms frame. A `Framed` keeps the border's place as padding
and draws the frame itself: a top row, one side row for every row between, a bottom row, made once per
look, titles and width with Textual's own border drawing from component classes' styles, so the frame
looks exactly as the CSS border did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar, cast

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual._border import get_box, render_border_label, render_row  # Textual is pinned (pyproject)
from textual._segment_tools import line_pad
from textual.cache import LRUCache
from textual.color import TRANSPARENT, Color
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RenderStyles
from textual.css.types import AlignHorizontal
from textual.filter import LineFilter
from textual.geometry import Region, Spacing
from textual.strip import Strip
from textual.style import Style

from aoe_tui.app.widgets.line_static import filtered

FRAME = Spacing(1, 1, 1, 1)  # the frame's own cells: one on every side
FRAMES_KEPT = 256  # a dozen panes' frames at a score of moments


class Framed(Vertical):
    """Shows `frame(looks, title, subtitle)`.

    Its CSS `padding` is the space inside the frame plus one cell on every side for the frame. `looks` are
    component classes (in the subclass's `COMPONENT_CLASSES`) whose `border` and `border-title-*` /
    `border-subtitle-*` rules, later ones over earlier ones, say how the frame looks. The titles are shown
    literally (the caller cleans player text)."""

    _drawn: ClassVar[LRUCache[tuple, tuple[Strip, Strip, Strip]]] = LRUCache(FRAMES_KEPT)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frame_looks: tuple[str, ...] = ()
        self.frame_title = ""
        self.frame_subtitle = ""

    def frame(self, looks: tuple[str, ...], title: str, subtitle: str) -> None:
        """Show this frame, repainting only the edges that changed: all four for a new look, else the top row
        for a new title and the bottom row for a new subtitle."""
        width, height = self.outer_size
        edges = []
        if looks != self.frame_looks:
            edges = [Region(0, 0, width, 1), Region(0, height - 1, width, 1), Region(0, 0, 1, height)]
            edges.append(Region(width - 1, 0, 1, height))
        else:
            if title != self.frame_title:
                edges.append(Region(0, 0, width, 1))
            if subtitle != self.frame_subtitle:
                edges.append(Region(0, height - 1, width, 1))
        self.frame_looks, self.frame_title, self.frame_subtitle = looks, title, subtitle
        if edges and width and height:  # (not laid out yet: the first paint draws the frame)
            offset = self.content_offset  # `refresh` takes regions of the content, inside the padding
            self.refresh(*(edge.translate(-offset) for edge in edges))

    def render_lines(self, crop: Region) -> list[Strip]:
        """The frame's rows in `crop` (the children are drawn over the inside by the compositor)."""
        width, height = self.outer_size
        if not (width and height):
            return []
        top, side, bottom = self._frame_rows(width)
        strips = [top if y == 0 else bottom if y == height - 1 else side for y in crop.line_range]
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _frame_rows(self, width: int) -> tuple[Strip, Strip, Strip]:
        """The top, side and bottom rows, kept by what they show (the look, titles, width, padding, backgrounds
        and line filters), shared by every `Framed` as the panes' lines are: a cursor that goes back (Home
        after End) finds the frames it showed."""
        look = self.get_component_styles(*self.frame_looks)
        padding, backgrounds, filters = (
            self.styles.padding - FRAME,
            self.background_colors,
            tuple(self.get_line_filters()),
        )
        shows = (
            *(look.border_top, look.border_title_align, look.border_subtitle_align),
            *(self.frame_title, look.border_title_color, look.auto_border_title_color),
            *(look.border_title_background, look.border_title_style),
            *(self.frame_subtitle, look.border_subtitle_color, look.auto_border_subtitle_color),
            *(look.border_subtitle_background, look.border_subtitle_style),
            *(width, padding, backgrounds, filters),
        )
        rows = self._drawn.get(shows)
        if rows is None:
            rows = self._drawn[shows] = self._draw_rows(look, width, padding, filters, *backgrounds)
        return rows

    def _draw_rows(
        self,
        look: RenderStyles,
        width: int,
        padding: Spacing,
        filters: Sequence[LineFilter],
        base_background: Color,
        background: Color,
    ) -> tuple[Strip, Strip, Strip]:
        """Drawn as Textual's `StylesCache` draws a widget's border (with the same `_border` helpers): `look`'s
        top edge on every side, `padding` inside, the titles in `look`'s title styles (no opacity or tint)."""
        edge, color = look.border_top
        inner, outer = Style(background=base_background + background), Style(background=base_background)
        line = Style(foreground=base_background + color)
        box = get_box(edge, inner, outer, line)

        def edge_row(
            row: int, text: str, color: Color, auto: bool, under: Color, style: RichStyle, align: str
        ) -> Strip:
            label: Iterable[Segment] = ()
            if text:
                color = base_background.get_contrast_text(color.a) if auto else color
                behind = base_background + background
                label_style = Style.from_rich_style(style) + Style(
                    behind + under if under.a else TRANSPARENT, behind + color if color.a else TRANSPARENT
                )
                label = render_border_label(
                    (Content(text), label_style), row == 0, edge, width - 2, inner, outer, line, True, True
                )
            return Strip(render_row(box[row], width, True, True, label, cast(AlignHorizontal, align)), width)

        top = edge_row(
            0,
            self.frame_title,
            look.border_title_color,
            look.auto_border_title_color,
            look.border_title_background,
            look.border_title_style,
            look.border_title_align,
        )
        bottom = edge_row(
            2,
            self.frame_subtitle,
            look.border_subtitle_color,
            look.auto_border_subtitle_color,
            look.border_subtitle_background,
            look.border_subtitle_style,
            look.border_subtitle_align,
        )
        inside = Segment(" " * (width - 2 - padding.left - padding.right), RichStyle(bgcolor=background.rich_color))
        left, _, right = box[1]  # around the inside as Textual draws a container's: a `Blank` of its background
        side = Strip([left, *line_pad([inside], padding.left, padding.right, inner.rich_style), right], width)
        return (
            filtered(top, filters, background),
            filtered(side, filters, background),
            filtered(bottom, filters, background),
        )
