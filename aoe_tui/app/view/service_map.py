"""The arena's service map as text art: boxes at their x,y percent, links between them.

The manifest places nodes in percent of a canvas, so the same map fits a
wide pane or a narrow one. Links are drawn first as right-angle routes from
centre to centre and boxes over them, so a line never crosses a label; an
arrowhead marks where a link enters its target.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content

from aoe_tui.domain.manifest import Visualization

LINE_STYLE = "$text-muted"
ARROWS = {(1, 0): "▶", (-1, 0): "◀", (0, 1): "▼", (0, -1): "▲"}


@dataclass(frozen=True)
class Box:
    left: int
    top: int
    width: int
    label: str

    @property
    def centre(self) -> tuple[int, int]:
        return self.left + self.width // 2, self.top + 1

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.left + self.width and self.top <= y < self.top + 3


class Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.chars = [[" "] * width for _ in range(height)]
        self.styles: list[list[str]] = [[""] * width for _ in range(height)]

    def put(self, x: int, y: int, char: str, style: str) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            self.chars[y][x], self.styles[y][x] = char, style

    def line(self, x: int, y: int, char: str) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            existing = self.chars[y][x]
            self.put(x, y, "┼" if existing in "─│" and existing != char and existing != " " else char, LINE_STYLE)

    def lines(self) -> list[Content]:
        rendered = []
        for chars, styles in zip(self.chars, self.styles):
            parts: list[tuple[str, str]] = []
            for char, style in zip(chars, styles):
                if parts and parts[-1][1] == style:
                    parts[-1] = (parts[-1][0] + char, style)
                else:
                    parts.append((char, style))
            rendered.append(Content.assemble(*parts).rstrip())
        return rendered


def _spread(spans: list[tuple[int, int]], limit: int, gap: int) -> list[int]:
    """Starts for (wanted start, length) spans, sorted by wanted start, so that none overlap."""
    starts: list[int] = []
    for wanted, _length in spans:
        lowest = starts[-1] + spans[len(starts) - 1][1] + gap if starts else 0
        starts.append(max(wanted, lowest))
    for index in range(len(spans) - 1, -1, -1):
        highest = (starts[index + 1] - gap if index + 1 < len(spans) else limit) - spans[index][1]
        starts[index] = max(0, min(starts[index], highest))
    return starts


def _boxes(visualization: Visualization, width: int, height: int, glyphs: dict[str, str]) -> dict[str, Box]:
    rows: dict[int, list] = {}
    for node in visualization.nodes:
        rows.setdefault(round(node.y / 100 * (height - 1)), []).append(node)
    row_tops = _spread([(centre - 1, 3) for centre in sorted(rows)], height, 1)
    boxes = {}
    for top, centre_y in zip(row_tops, sorted(rows)):
        nodes = sorted(rows[centre_y], key=lambda node: node.x)
        labels = [f"{glyphs[n.id]} {n.display_name}" if n.id in glyphs else n.display_name for n in nodes]
        room = max(width - 2 * (len(nodes) - 1), 4 * len(nodes))
        wanted = [len(label) + 4 for label in labels]
        widths = wanted if sum(wanted) <= room else [max(4, w * room // sum(wanted)) for w in wanted]
        centres = [round(node.x / 100 * (width - 1)) for node in nodes]
        lefts = _spread([(c - w // 2, w) for c, w in zip(centres, widths)], width, 2)
        for node, label, left, box_width in zip(nodes, labels, lefts, widths):
            boxes[node.id] = Box(left, top, box_width, label[: box_width - 2])
    return boxes


def _route(start: tuple[int, int], end: tuple[int, int]) -> list[tuple[int, int]]:
    (x0, y0), (x1, y1) = start, end
    step_x = 1 if x1 >= x0 else -1
    step_y = 1 if y1 >= y0 else -1
    horizontal = [(x, y0) for x in range(x0, x1 + step_x, step_x)]
    vertical = [(x1, y) for y in range(y0 + step_y, y1 + step_y, step_y)] if y1 != y0 else []
    return horizontal + vertical


def _draw_link(canvas: Canvas, source: Box, target: Box) -> None:
    path = _route(source.centre, target.centre)
    for index, (x, y) in enumerate(path):
        before = path[index - 1] if index else (x, y)
        after = path[index + 1] if index + 1 < len(path) else (x, y)
        turns = before[1] == y and after[0] == x and before != (x, y) and after != (x, y)
        if turns:
            down, right = after[1] > y, before[0] < x
            corner = {(True, True): "┐", (False, True): "┘", (True, False): "┌", (False, False): "└"}
            canvas.line(x, y, corner[(down, right)])
        else:
            canvas.line(x, y, "─" if after[1] == y and before[1] == y else "│")
    outside = [point for point in path if not target.contains(*point) and not source.contains(*point)]
    if outside:
        x, y = outside[-1]
        following = path[path.index((x, y)) + 1]
        canvas.put(x, y, ARROWS[(following[0] - x, following[1] - y)], LINE_STYLE)


def _draw_box(canvas: Canvas, box: Box, style: str) -> None:
    inner = box.width - 2
    rows = ("╭" + "─" * inner + "╮", "│" + box.label.center(inner) + "│", "╰" + "─" * inner + "╯")
    for dy, row in enumerate(rows):
        for dx, char in enumerate(row):
            canvas.put(box.left + dx, box.top + dy, char, style)


def render_service_map(
    visualization: Visualization, width: int, height: int, node_styles: dict[str, str], node_glyphs: dict[str, str]
) -> list[Content]:
    """`node_styles`/`node_glyphs` carry each node's milestone state at the cursor (by node id).

    Blank rows above and below the drawing are dropped so a map takes only the lines it needs.
    """
    if width < 8 or height < 3 or not visualization.nodes:
        return []
    canvas = Canvas(width, height)
    boxes = _boxes(visualization, width, height, node_glyphs)
    for link in visualization.links:
        if link.from_ in boxes and link.to in boxes:
            _draw_link(canvas, boxes[link.from_], boxes[link.to])
    for node_id, box in boxes.items():
        _draw_box(canvas, box, node_styles.get(node_id, ""))
    lines = canvas.lines()
    while lines and not lines[-1].plain:
        lines.pop()
    while lines and not lines[0].plain:
        lines.pop(0)
    return lines
