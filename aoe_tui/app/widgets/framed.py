"""A container that draws its own frame, so a new frame colour or title repaints the frame's cells alone.

Textual draws a CSS border into every line of the widget it surrounds: a new border colour (a class that
restyles the widget) or a new border title repaints every line of the widget and of all it covers. At End
or Home every territory pane's state (its border's colour) and points (its titles) change, and those
repaints, restyles and titles were a third of a 90 ms frame. A `Framed` keeps the border's place as padding
and draws the frame itself: a top row, one side row for every row between, a bottom row, made once per
look, titles and size by Textual's own border drawing (its `StylesCache`, as for any CSS border) from
component classes' styles, so the frame looks exactly as the CSS border did.
"""

from __future__ import annotations

from rich.style import Style as RichStyle
from textual._styles_cache import StylesCache  # Textual's border drawing; Textual is pinned (pyproject)
from textual.color import Color
from textual.containers import Vertical
from textual.content import Content
from textual.css.styles import RenderStyles
from textual.geometry import Region, Size, Spacing
from textual.strip import Strip
from textual.style import Style

FRAME = Spacing(1, 1, 1, 1)  # the frame's own cells: one on every side


def _label(
    text: str, color: Color, auto_color: bool, background: Color, style: RichStyle, under: Color
) -> tuple[Content, Color, Color, Style] | None:
    """A title as Textual's border drawing takes it (what `Widget` passes for its `border_title`)."""
    if not text:
        return None
    shown_color = under.get_contrast_text(color.a) if auto_color else color
    return Content(text), shown_color, background, Style.from_rich_style(style)


class Framed(Vertical):
    """Shows `frame(looks, title, subtitle)`.

    Its CSS `padding` is the space inside the frame plus one cell on every side for the frame. `looks` are
    component classes (in the subclass's `COMPONENT_CLASSES`) whose `border` and `border-title-*` /
    `border-subtitle-*` rules, later ones over earlier ones, say how the frame looks. The titles are shown
    literally (the caller cleans player text)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.frame_looks: tuple[str, ...] = ()
        self.frame_title = ""
        self.frame_subtitle = ""
        self._rows: tuple[tuple, tuple[Strip, Strip, Strip]] | None = None  # (what they show, top/side/bottom)

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
        top, side, bottom = self._frame_rows(width, height)
        strips = [top if y == 0 else bottom if y == height - 1 else side for y in crop.line_range]
        if crop.column_span != (0, width):
            x1, x2 = crop.column_span
            strips = [strip.crop(x1, x2) for strip in strips]
        return strips

    def _frame_rows(self, width: int, height: int) -> tuple[Strip, Strip, Strip]:
        """The top, side and bottom rows, drawn again only when what they show changed."""
        look = self.get_component_styles(*self.frame_looks)
        backgrounds = self.background_colors
        shows = (look, self.frame_title, self.frame_subtitle, width, height, backgrounds)
        if self._rows is None or self._rows[0] != shows:
            self._rows = shows, self._draw_rows(look, Size(width, height), *backgrounds)
        return self._rows[1]

    def _draw_rows(
        self, look: RenderStyles, size: Size, base_background: Color, background: Color
    ) -> tuple[Strip, Strip, Strip]:
        """Rows 0, 1 and the last, drawn as Textual draws a widget with `look`'s border and this padding."""
        width, height = size
        drawn, inside, padding = StylesCache(), self.content_region.size, self.styles.padding - FRAME
        blank = Strip.blank(inside.width, RichStyle.from_color(bgcolor=background.rich_color))
        title = _label(
            self.frame_title,
            look.border_title_color,
            look.auto_border_title_color,
            look.border_title_background,
            look.border_title_style,
            base_background,
        )
        subtitle = _label(
            self.frame_subtitle,
            look.border_subtitle_color,
            look.auto_border_subtitle_color,
            look.border_subtitle_background,
            look.border_subtitle_style,
            base_background,
        )

        def row(y: int) -> Strip:
            return drawn.render(
                look,
                size,
                base_background,
                background,
                lambda _y: blank,  # the inside, as Textual draws a container's: a `Blank` of its background
                self.get_line_filters(),
                title,
                subtitle,
                content_size=inside,
                padding=padding,
                crop=Region(0, y, width, 1),
                opacity=self.opacity,
                ansi_theme=self.app.ansi_theme,
                native_ansi=self.app.native_ansi_color,
            )[0]

        return row(0), row(min(1, height - 1)), row(height - 1)
