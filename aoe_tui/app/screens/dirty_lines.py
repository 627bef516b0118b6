"""A compositor that draws only the lines a frame changed, not every line of every widget near them.

Textual's partial update draws every widget that overlaps the box around all of a frame's changed
regions, each over its whole height, then keeps only the changed lines. A cursor step changes the header
(the top line) and the event list (the bottom lines): the box is the whole screen, so every line of every
territory pane, of the scrubber and of the screen itself was drawn again to show a dozen new lines; that
was most of a step's frame and half of an End or a 60x playback frame at 10^6 events.

Here a widget draws only when a changed span reaches it, once, from the first changed line it covers to
the last (the lines between are mostly drawn already and kept: one call costs less than one per run of
changed lines), and only its changed lines are kept; the pieces are cut and stacked exactly as Textual does
(`Compositor._render_chops`), so what the terminal shows is the same.

The update's bytes (`LineUpdate`) are Textual's, less the cursor moves that write nothing: Textual keeps a
piece that starts where a changed span ends, crops it to nothing and still moves the cursor there. On a
full-screen frame (End, Home, the first play tick) there are some 700 moves, and making them (each a
`Control` made and rendered) was a fifth of the frame. Textual is pinned (pyproject): this follows its
compositor's private parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Console
from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


class DirtyLinesCompositor(Compositor):
    """`Compositor` whose partial update draws each widget's changed lines only."""

    def render_partial_update(self) -> ChopsUpdate | None:
        regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not regions:
            return None
        height = self.size.height
        spans = [span for span in self._regions_to_spans(regions) if 0 <= span[0] < height]
        if not spans:
            return None
        return LineUpdate(self._changed_chops(spans), spans, [cut_set[1:] for cut_set in self.cuts])

    def _changed_chops(self, spans: list[tuple[int, int, int]]) -> Sequence[Mapping[int, Strip | None]]:
        """Each line's pieces (keyed by the column they start at) on the changed lines; the widgets are
        visited front to back and the first piece drawn for a column wins, as in `_render_chops`."""
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
        reach: dict[int, tuple[int, int]] = {}  # per changed line: from the leftmost change to the rightmost
        for y, x1, x2 in spans:
            left, right = reach.get(y, (x1, x2))
            reach[y] = (min(left, x1), max(right, x2))
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if not visible:
                continue
            first_cut, last_cut = visible.column_span
            lines = [y for y in visible.line_range if y in reach and reach[y][0] < last_cut and reach[y][1] > first_cut]
            if not lines:
                continue
            top = lines[0]
            crop = Region(visible.x - region.x, top - region.y, visible.width, lines[-1] - top + 1)
            strips = widget.render_lines(crop)
            for y in lines:
                line = chops[y]
                line_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
                for cut, piece in zip(line_cuts, strips[y - top].divide([cut - first_cut for cut in line_cuts[1:]])):
                    if line.get(cut) is None:
                        line[cut] = piece
        return chops


class LineUpdate(ChopsUpdate):
    """`ChopsUpdate` whose bytes skip the pieces a changed span does not reach (see the module's docstring)."""

    def render_segments(self, console: Console) -> str:
        """As `ChopsUpdate.render_segments`: each piece a span reaches, cropped at the span's end, after a
        cursor move (`Control.move_to`'s bytes, written here: one per piece)."""
        sequences: list[str] = []
        append = sequences.append
        chops, chop_ends = self.chops, self.chop_ends
        last_y = self.spans[-1][0]
        for y, x1, x2 in self.spans:
            row = y + 1
            for end, (x, strip) in zip(chop_ends[y], chops[y].items()):
                if strip is None or x >= x2 or end <= x1:
                    continue
                if end > x2:
                    strip = strip.crop(0, x2 - x)
                append(f"\x1b[{row};{x + 1}H")
                append(strip.render(console))
            if y != last_y:
                append("\n")
        return "".join(sequences)
