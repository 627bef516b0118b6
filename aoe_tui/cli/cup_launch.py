"""Opening the app on a cup (live or a folder) and on the ladder; Textual is imported inside the functions."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aoe_tui.cli.terminal_line import tell
from aoe_tui.domain.errors import AoeError

if TYPE_CHECKING:
    from aoe_tui.engine.cup import CupRunner


def run_cup_live(cup: CupRunner, finished: Callable[[], str]) -> int:
    """The cup in the app: the cup view, each heat live as a series round; one line afterwards."""
    import sys

    from aoe_tui.app.cup_live_app import CupLiveApp
    from aoe_tui.app.view.series_progress import SeriesLog
    from aoe_tui.cli.series_commands import _stopped

    log = SeriesLog()
    cup.report = log.add
    cup.open()
    app = CupLiveApp(cup, log)
    app.run()
    if app.engine_error is not None:
        raise AoeError(app.engine_error)
    if app.series_stopped is not None:
        return _stopped(app.series_stopped, app.stopped_by_signal)
    tell(finished(), sys.stdout)
    return 0


def open_cup(path: Path) -> int:
    from aoe_tui.app.cup_app import CupApp

    CupApp(Path(path)).run()
    return 0


def open_ladder(report: dict[str, Any]) -> int:
    from aoe_tui.app.ladder_app import LadderApp

    LadderApp(report).run()
    return 0
