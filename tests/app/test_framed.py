"""A container that draws its own frame looks exactly as Textual draws the same CSS border, and a new title or
look repaints the frame's edges, never the whole container."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.widgets import Static

from aoe_tui.app.widgets.framed import Framed

CSS = """
Vertical, Framed { width: 30; height: 6; }
#bordered { border: round $primary-muted; border-title-style: bold; padding: 0 1; }
#bordered.-done { border: double $success; }
Framed { padding: 1 2; }
Framed > .box--frame { border: round $primary-muted; border-title-style: bold; }
Framed > .box--done { border: double $success; }
"""


class Box(Framed):
    COMPONENT_CLASSES = {"box--frame", "box--done"}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.repainted: list[tuple[Region, ...]] = []

    def refresh(self, *regions, **kwargs):
        self.repainted.append(regions)
        return super().refresh(*regions, **kwargs)


class Side(App):
    CSS = CSS

    def compose(self) -> ComposeResult:
        with Vertical(id="bordered"):
            yield Static("inside")
        with Box(id="framed"):
            yield Static("inside")


def drawn(widget) -> list:
    return [list(strip) for strip in widget.render_lines(widget.region.reset_offset)]


async def test_the_frame_is_drawn_as_textual_draws_the_css_border() -> None:
    app = Side()
    async with app.run_test(size=(40, 14)) as pilot:
        bordered, framed = app.query_one("#bordered", Vertical), app.query_one(Box)
        for done, title, subtitle in (
            (False, "builder-one", "0 pts · preparing"),
            (True, "#1 builder-one", "100 pts · durable"),
            (True, "#1 a title far too long for the frame", ""),
        ):
            bordered.set_class(done, "-done")
            bordered.border_title, bordered.border_subtitle = title, subtitle
            framed.frame(("box--frame", "box--done") if done else ("box--frame",), title, subtitle)
            await pilot.pause()
            assert drawn(framed) == drawn(bordered)


async def test_a_new_title_repaints_its_row_and_a_new_look_the_four_edges() -> None:
    app = Side()
    async with app.run_test(size=(40, 14)) as pilot:
        framed = app.query_one(Box)
        framed.frame(("box--frame",), "builder-one", "0 pts")
        await pilot.pause()
        offset = framed.content_offset  # `refresh` takes regions of the inside

        def repainted_by(*frame: object) -> list[Region]:
            framed.repainted = []
            framed.frame(*frame)  # type: ignore[arg-type]
            return [region.translate(offset) for regions in framed.repainted for region in regions]

        assert repainted_by(("box--frame",), "#1 builder-one", "0 pts") == [Region(0, 0, 30, 1)]
        assert repainted_by(("box--frame",), "#1 builder-one", "10 pts") == [Region(0, 5, 30, 1)]
        assert repainted_by(("box--frame",), "#1 builder-one", "10 pts") == []
        assert sorted(repainted_by(("box--frame", "box--done"), "#1 builder-one", "10 pts")) == sorted(
            [Region(0, 0, 30, 1), Region(0, 5, 30, 1), Region(0, 0, 1, 6), Region(29, 0, 1, 6)]
        )
