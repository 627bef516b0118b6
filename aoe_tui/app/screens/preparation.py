"""Before the race: what each territory is waiting for (image, boot, SSH preflight, agent start).

Booting guests under TCG takes tens of seconds; this view shows that the
wait is progress, and when a territory fails to boot it shows why (the
runner's one-line error and the guest's console tail) instead of starting a
match half-blind — the runner never opens a match with a territory missing.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from aoe_tui.domain.clock import format_clock
from aoe_tui.app.screens.host import host
from aoe_tui.app.view.file_tail import tail_lines
from aoe_tui.app.view.preparation_board import STAGES, PreparationBoard
from aoe_tui.store.match_layout import MatchLayout

STAGE_TITLES = {"image": "image", "boot": "boot", "ssh": "SSH preflight", "agent": "agent"}
GLYPHS = {
    "waiting": ("·", "$text-muted"),
    "running": ("⋯", "$warning bold"),
    "done": ("✓", "$success"),
    "failed": ("✗", "$error bold"),
}
TITLE_REFRESH_S = 1.0
CONSOLE_LINES = 12


def as_typed(path: Path) -> str:
    """The match folder as the user would type it: relative to where they are when it is inside."""
    path = Path(path)
    return str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)


class PreparationScreen(Screen[None]):
    BINDINGS = [Binding("q", "app.quit", "Quit")]

    class Ready(Message):
        """Every agent has started: the race can be shown. Posted once, and only while this view is
        on top, so the switch never lands under a dialog (an open quit question waits for its answer).
        `board` says whose match is ready (a series prepares one round after another)."""

        def __init__(self, board: PreparationBoard) -> None:
            super().__init__()
            self.board = board

    def __init__(self, arena: str, match_name: str, board: PreparationBoard, match_dir: Path) -> None:
        super().__init__()
        self.arena, self.match_name, self.board, self.match_dir = arena, match_name, board, match_dir
        self._handed_over = False

    def compose(self) -> ComposeResult:
        yield Static(id="prep-title")
        with VerticalScroll(id="prep-body"):
            yield Static(id="prep-board")
            yield Static(id="prep-failure")
            yield Static(id="prep-log")
        yield Footer()

    def on_mount(self) -> None:
        self.started = host(self.app).clock()
        self.show()
        # Guests take a minute to boot under TCG: a moving clock says the wait is not a hang.
        self.set_interval(TITLE_REFRESH_S, self.show)

    def show(self) -> None:
        board = self.board
        waited = "" if board.error else f"  waiting {format_clock(int((host(self.app).clock() - self.started) * 1000))}"
        self.query_one("#prep-title", Static).update(
            Content.assemble(
                (" PREPARING ", "reverse bold $warning"), " ", (self.arena, "bold"), " · ", self.match_name, waited
            )
        )
        width = max(len(tid) for tid in board.territories)
        header = Content.assemble(
            ("territory".ljust(width), "bold"),
            "  ",
            *[(STAGE_TITLES[s].ljust(len(STAGE_TITLES[s]) + 2), "bold") for s in STAGES],
        )
        rows = [header]
        for tid, territory in board.territories.items():
            cells: list[str | tuple[str, str]] = []
            for stage in STAGES:
                glyph, style = GLYPHS[territory.stages[stage]]
                cells += [(glyph, style), " " * (len(STAGE_TITLES[stage]) + 1)]
            rows.append(Content.assemble(tid.ljust(width), "  ", *cells, (territory.message, "$text-muted")))
        self.query_one("#prep-board", Static).update(Content("\n").join(rows))
        self.query_one("#prep-log", Static).update(
            Content("\n").join([Content.styled("setup log", "bold")] + [Content(line) for line in board.log])
        )
        self.query_one("#prep-failure", Static).update(self._failure())
        self.query_one("#prep-failure").display = board.error is not None
        if board.ready and self.is_active and not self._handed_over:
            self._handed_over = True
            self.post_message(self.Ready(self.board))

    def on_screen_resume(self) -> None:
        """A dialog over this view closed: catch up (the board may have become ready meanwhile)."""
        if self.is_mounted:
            self.show()

    def _failure(self) -> Content:
        if self.board.error is None:
            return Content("")
        parts = [Content.styled("The match could not start: ", "bold $error") + Content(self.board.error)]
        for tid in self.board.unbooted():
            console = tail_lines(MatchLayout(self.match_dir).territory(tid).console_log, CONSOLE_LINES)
            parts.append(Content.styled(f"{tid} console (last {CONSOLE_LINES} lines)", "bold"))
            parts += [Content.styled(line, "$text-muted") for line in console] or [
                Content.styled("(no console output)", "$text-muted")
            ]
        parts.append(
            Content.styled(f"The aborted match is recorded in {as_typed(self.match_dir)}. Press q to quit.", "$warning")
        )
        return Content("\n").join(parts)
