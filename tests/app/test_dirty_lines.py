"""The match screen's compositor draws only the changed lines, and the terminal still ends up showing exactly
what a full redraw of the screen shows: every update the app sends is played on a model terminal (a grid of
cells, moved to and written as a terminal would) and compared with the whole screen drawn from scratch."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from rich.segment import ControlType

from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from tests.fixture_paths import HARNESS, ORACLE_DIR
from tests.app.app_under_test import SIZE, replay_app


class ModelTerminal:
    """A grid of (character, style) cells that plays what the app writes: cursor moves and text."""

    def __init__(self, width: int, height: int) -> None:
        self.cells: list[list[tuple[str, object]]] = []
        self.resize(width, height)

    def resize(self, width: int, height: int) -> None:
        """A terminal made smaller or larger: what stays on it stays, what is new is blank."""
        old = self.cells
        self.cells = [
            [old[y][x] if y < len(old) and x < len(old[y]) else (" ", None) for x in range(width)]
            for y in range(height)
        ]

    def play(self, segments) -> None:
        x = y = 0
        for segment in segments:
            if segment.control:
                for code in segment.control:
                    if code[0] == ControlType.CURSOR_MOVE_TO:
                        x, y = code[1], code[2]
                continue
            for character in segment.text:
                if character == "\n":
                    continue
                self.cells[y][x] = (character, segment.style)
                x += 1
                for _ in range(cell_len(character) - 1):  # a wide character's second cell
                    self.cells[y][x] = ("", segment.style)
                    x += 1

    def lines(self) -> list[list[tuple[str, object]]]:
        return [list(row) for row in self.cells]


def whole_screen(app) -> list[list[tuple[str, object]]]:
    """The screen drawn from scratch, on a fresh model terminal."""
    width, height = app.size
    terminal = ModelTerminal(width, height)
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        terminal.play([Control.move_to(0, y).segment, *strip])
    return terminal.lines()


def fresh_terminal_of(app) -> ModelTerminal:
    width, height = app.size
    terminal = ModelTerminal(width, height)
    console = Console(width=width, height=height, force_terminal=True)
    shown = app._display

    def display(screen, update) -> None:
        shown(screen, update)
        if (len(terminal.cells[0]), len(terminal.cells)) != tuple(app.size):
            terminal.resize(*app.size)
        if update is not None:
            terminal.play(update.__rich_console__(console, console.options))

    app._display = display
    return terminal


async def test_every_update_leaves_the_terminal_showing_what_a_full_redraw_shows(clock) -> None:
    app = replay_app(HARNESS, clock)
    terminal = fresh_terminal_of(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, MatchScreen)
        await pilot.pause()
        moves = [
            ("right",) * 3,
            ("end",),
            ("home",),
            ("right_square_bracket",),
            ("shift+right",) * 2,
            ("left",),
            ("k",),  # a filter: the event list's lines change, the panes' do not
            ("end",),
        ]
        for keys in moves:
            await pilot.press(*keys)
            await pilot.pause()
            assert terminal.lines() == whole_screen(app), keys
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert terminal.lines() == whole_screen(app)  # a resize redraws it all; then moves draw on it again
        await pilot.press("home", "right", "right")
        await pilot.pause()
        assert terminal.lines() == whole_screen(app)


async def test_a_step_that_changes_one_pane_line_draws_no_other_pane(clock) -> None:
    """The property that makes a frame cheap: a pane whose lines did not change is not drawn at all (Textual's
    own partial update drew every pane, all of its lines, whenever the header and the event list changed)."""
    app = replay_app(ORACLE_DIR, clock)
    drawn: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for pane in app.screen.query(TerritoryPane):
            drawing = pane.render_lines

            def noted(crop, pane=pane, drawing=drawing):
                drawn.append(pane.territory_id)
                return drawing(crop)

            pane.render_lines = noted  # type: ignore[method-assign]
        await pilot.press("right")
        await pilot.pause()
        panes = [pane.territory_id for pane in app.screen.query(TerritoryPane)]
        assert len(panes) > 1 and len(set(drawn)) < len(panes)
