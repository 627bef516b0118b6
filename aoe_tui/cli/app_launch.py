"""Opening the Textual app from the CLI.

Textual is imported here, inside the functions, so commands that never open
the app (`aoe info`, `aoe validate`) stay fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from aoe_tui.cli.terminal_line import tell
from aoe_tui.domain.errors import AoeError
from aoe_tui.engine.stop_signals import exit_status
from aoe_tui.store.saved_match import SavedMatch

if TYPE_CHECKING:
    from aoe_tui.app.live_app import BeforeMatch
    from aoe_tui.app.series_live_app import SeriesLiveApp
    from aoe_tui.app.view.series_progress import SeriesLog
    from aoe_tui.engine.runner import MatchRunner
    from aoe_tui.engine.series import SeriesRunner


def open_replay(match: SavedMatch) -> int:
    from aoe_tui.app.app import AoeApp

    AoeApp(match).run()
    return 0


def open_series(path: Path, as_json: bool = False) -> int:
    """A series or benchmark folder: its standings view in the app (`--json`: the standings report)."""
    if as_json:
        import json

        from aoe_tui.analysis.standings import standings_report

        print(json.dumps(standings_report(path), indent=2, ensure_ascii=False))
        return 0
    from aoe_tui.analysis.series_overview import overview, round_summaries
    from aoe_tui.app.series_app import SeriesApp

    SeriesApp(overview(path, round_summaries())).run()
    return 0


def open_browser(roots: list[Path]) -> int:
    from aoe_tui.app.app import AoeApp

    AoeApp(roots=roots).run()
    return 0


def run_live(runner: MatchRunner, before_match: BeforeMatch | None = None) -> int:
    """The match in the app; afterwards one line on the terminal says where its record is."""
    from aoe_tui.app.live_app import LiveApp

    app = LiveApp(runner, before_match=before_match)
    app.run()
    output = runner.match_dir.root
    started = runner.recorder is not None  # False when quit (or failed) while the image was building
    if app.engine_error is not None:
        raise AoeError(f"the match stopped: {app.engine_error}" + (f" (record: {output})" if started else ""))
    if not started:
        tell("no match was started")
    else:
        world = runner.world
        tell(
            f"match directory: {output}  ({world.match_state}, winner: {world.winner or 'none'}; "
            f"open it with `aoe replay {output}`)"
        )
    return 0 if app.stopped_by_signal is None else exit_status(app.stopped_by_signal)


def run_series_live(series: SeriesRunner, log: SeriesLog) -> SeriesLiveApp:
    """The series in the app (`log`: the series' report); returns the app once it has left, to say how it ended.
    The series is opened first, so a folder that cannot be resumed is one line before any screen is drawn."""
    from aoe_tui.analysis.series_overview import round_summaries
    from aoe_tui.app.series_live_app import SeriesLiveApp

    series.open()
    app = SeriesLiveApp(series, log, summaries=round_summaries())
    app.run()
    return app
