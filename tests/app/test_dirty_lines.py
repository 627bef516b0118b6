"""The match screen's compositor draws only the changed lines, and the terminal still ends up showing exactly
what a full redraw of the screen shows: the bytes of every update the app sends (what its driver writes) are
played on a model terminal (a grid of cells, moved to and written as a terminal would) and compared with the
whole screen drawn from scratch."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console

from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from tests.fixture_paths import HARNESS, ORACLE_DIR
from tests.app.app_under_test import SIZE, replay_app


CONTROL = re.compile(r"\x1b\[([0-9;]*)([A-Za-z])")


class ModelTerminal:
    """A grid of (character, style) cells that plays what the app writes: cursor moves, styles and text. A
    cell's style is the last SGR sequence before it (the strips' bytes set each piece's style, then reset it)."""

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

    def play(self, data: str) -> None:
        x = y = 0
        style = ""
        parts = CONTROL.split(data)  # text, then (parameters, command, text) for every control sequence
        pieces = [(None, None, parts[0])] + [tuple(parts[i : i + 3]) for i in range(1, len(parts), 3)]
        for parameters, command, text in pieces:
            if command == "H":
                row, column = parameters.split(";")
                x, y = int(column) - 1, int(row) - 1
            elif command == "m":
                style = "" if parameters in ("", "0") else parameters
            elif command is not None:
                raise AssertionError(f"a control sequence the model does not play: {parameters}{command}")
            for character in text:
                if character == "\n":
                    continue
                self.cells[y][x] = (character, style)
                x += 1
                for _ in range(cell_len(character) - 1):  # a wide character's second cell
                    self.cells[y][x] = ("", style)
                    x += 1

    def lines(self) -> list[list[tuple[str, object]]]:
        return [list(row) for row in self.cells]


def terminal_console(app) -> Console:
    return Console(width=app.size.width, height=app.size.height, force_terminal=True, color_system="truecolor")


def whole_screen(app) -> list[list[tuple[str, object]]]:
    """The screen drawn from scratch, on a fresh model terminal."""
    width, height = app.size
    terminal, console = ModelTerminal(width, height), terminal_console(app)
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        terminal.play(f"\x1b[{y + 1};1H" + strip.render(console))
    return terminal.lines()


def fresh_terminal_of(app) -> ModelTerminal:
    width, height = app.size
    terminal, console = ModelTerminal(width, height), terminal_console(app)
    shown = app._display

    def display(screen, update) -> None:
        shown(screen, update)
        if (len(terminal.cells[0]), len(terminal.cells)) != tuple(app.size):
            terminal.resize(*app.size)
        if update is not None:
            terminal.play(update.render_segments(console))

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
