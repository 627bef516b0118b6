"""A territory pane's part drawn line by line looks exactly as a `Static` draws the same text, and a change
repaints only the lines it changed."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Static

from aoe_tui.app.widgets.line_static import LineStatic

CSS = "Static { text-wrap: nowrap; text-overflow: ellipsis; width: 12; }"


def lines_of(*texts: str) -> list[Content]:
    return [Content.from_markup(text) for text in texts]


class CountedLines(LineStatic):
    """Notes which lines it was asked to draw."""

    drawn_lines: list[int] = []

    def render_line(self, y: int):
        self.drawn_lines.append(y)
        return super().render_line(y)


class Side(App):
    CSS = CSS

    def compose(self) -> ComposeResult:
        yield Static(id="whole")
        yield CountedLines(id="lines")


def drawn(widget) -> list:
    return [list(strip) for strip in widget.render_lines(widget.region.reset_offset)]


async def test_lines_are_drawn_as_a_static_draws_them_and_only_changed_ones_are_repainted() -> None:
    app = Side()
    async with app.run_test(size=(40, 12)) as pilot:
        whole, lines = app.query_one("#whole", Static), app.query_one("#lines", CountedLines)
        for shown in (
            lines_of("[b]builder-one[/b]  [$success]durable[/]", "model gpt", "a line far too long for the pane"),
            lines_of("[b]builder-one[/b]  [$error]incomplete[/]", "model gpt", "a line far too long for the pane"),
            lines_of("[b]builder-one[/b]  [$error]incomplete[/]", "model gpt", "short", "[$warning]quiet 0:15[/]"),
        ):
            whole.update(Content("\n").join(shown))
            lines.show(shown)
            await pilot.pause()
            assert lines.region.height == len(shown)
            assert drawn(lines) == drawn(whole)
        lines.drawn_lines = []
        lines.show(
            lines_of("[b]builder-one[/b]  [$error]incomplete[/]", "model gpt", "short", "[$warning]quiet 0:16[/]")
        )
        await pilot.pause()
        assert lines.drawn_lines == [3]
