"""The app running a whole series (`aoe series` without `--headless`): every round as `aoe run` shows a match.

The engine is the same `SeriesRunner` that `--headless` runs, so checkpoints,
resuming, rounds set aside and replayed, and the exit status are the same. The
series says when each round attempt begins, and the app then watches that
match as the live app watches its one (`watch_match`): the preparation view,
then the race with every steering key and the drill-down.

On top is the round's screen while a round is played, and the series view
(standings so far, the rotation grid, what comes next) for `INTERMISSION_S`
after each round and until the next one begins, and for good once the series
is over. `s` opens the series view from a round; escape (or `s`) goes back.
A change of screen never pulls anything from under the operator: while a
question, a drill-down, the help or a replay is open over the round's screen,
the change waits until it is closed.

Quitting mid-series asks, then stops the series as a signal does: the round
under way is aborted and kept as `round-NNN.interrupted-N`, and the decided
rounds stay in `series.json`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from aoe_tui.analysis.series_overview import SeriesOverview, overview
from aoe_tui.app.live_app import LiveApp, one_line
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.live_series_screen import LiveSeriesScreen, SeriesRoundScreen
from aoe_tui.app.view.series_progress import SeriesLog, SeriesProgress, series_progress
from aoe_tui.engine.series import RoundStarted, SeriesRunner, SeriesStopped, SeriesUpdate
from aoe_tui.engine.stop_signals import Stoppable
from aoe_tui.store.summary_cache import SummaryCache

INTERMISSION_S = 10.0


class SeriesLiveApp(LiveApp):
    BINDINGS = [Binding("s", "show_series", "Series")]
    ABORT_QUESTION = (
        "Stop the series and quit?",
        "The round under way is aborted and kept as round-NNN.interrupted-N, and every guest is destroyed; "
        "the decided rounds stay in series.json, and the same command resumes the series.",
    )

    def __init__(
        self,
        series: SeriesRunner,
        series_log: SeriesLog,
        *,
        clock: Callable[[], float] = time.monotonic,
        intermission_s: float = INTERMISSION_S,
        summaries: SummaryCache | None = None,
    ) -> None:
        """`series`: opened (`open()`), with `series_log.add` as its report; `summaries`: the round summaries
        cache the series view reads decided rounds from."""
        super().__init__(None, clock=clock)
        self.series = series
        self.series_log = series_log
        self.intermission_s = intermission_s
        self.summaries = summaries
        self.round_screen: Screen | None = None  # the round's screen (preparation, then race); None between rounds
        self.playing: int | None = None  # the round whose match is under way
        self.showing_series = False  # the series view belongs on top
        self.ended: str | None = None  # how the series ended
        self.series_stopped: str | None = None  # why, when it was stopped (quit, a signal)
        self._intermission: Timer | None = None
        self._moves = 0  # how often the series moved on: a series view drawn before the last move is redrawn
        series.subscribe(self._on_series_update)

    @property
    def stoppable(self) -> Stoppable:
        return self.series

    @property
    def only_teardown_left(self) -> bool:
        """The last round is decided: its drain and teardown end the series, and stopping would cut them short."""
        return self.playing == self.series.checkpoint["rounds_requested"] and super().only_teardown_left

    def show_first_screen(self) -> None:
        self.screen_change_signal.subscribe(self, lambda _screen: self.settle())  # run after the change
        self.start_engine()

    async def _run_engine(self) -> object:
        return await self.series.run()

    # -- the series moving on (called inside the series) -------------------------------------------------

    def _on_series_update(self, update: SeriesUpdate) -> None:
        """Only the app's own state here: the round is watched at once (its first progress must not be
        missed), the screens change later, on the app's own time."""
        if isinstance(update, RoundStarted):
            self.watch_match(update.runner)
            self.playing = update.plan.number
            self.round_screen = self.preparation_screen()
            if self._intermission is None:
                self.showing_series = False
        else:
            self.call_later(self.match_stopped, self.match_screen)
            self.playing = self.round_screen = None
            self.showing_series = True
            self._start_intermission()
        self._moved()

    def _start_intermission(self) -> None:
        if self._intermission is not None:
            self._intermission.stop()
        self._intermission = self.set_timer(self.intermission_s, self._end_intermission)

    def _end_intermission(self) -> None:
        """The series view has been up long enough: the next round's screen, once that round has begun."""
        self._intermission = None
        if self.round_screen is not None:
            self.showing_series = False
            self.settle()

    def _moved(self) -> None:
        self._moves += 1
        self.call_later(self.settle)

    def show_match_screen(self, screen: LiveMatchScreen) -> None:
        self.round_screen = screen
        self.settle()

    def live_match_screen(self) -> LiveMatchScreen:
        return SeriesRoundScreen(self.runner, self.runner.clock.elapsed_ms)

    def engine_ended(self, engine: Worker) -> None:
        error = engine.error
        if isinstance(error, SeriesStopped):
            self.series_stopped = str(error)
            self.ended = f"series stopped ({error}); run the same command to resume"
        elif engine.state == WorkerState.ERROR and error is not None:
            self.engine_error = one_line(error)
            self.ended = f"the series stopped: {self.engine_error}"
            self.notify(self.engine_error, title="the series stopped", severity="error", timeout=30)
        else:
            self.ended = "series complete" if engine.state == WorkerState.SUCCESS else "series cancelled"
        self.match_stopped(self.match_screen)
        self.playing = self.round_screen = None
        self.showing_series = True
        self._moved()

    # -- which screen is on top ---------------------------------------------------------------------------

    def settle(self) -> None:
        """Put on top what the series is at: the series view or the round's screen. While something else is
        open over the round's screen, nothing changes (this runs again whenever the top screen changes)."""
        if self.busy is not None or self.stopped_by_signal is not None or not self.is_running:
            return
        top = self.screen
        slot = self.screen_stack[1] if len(self.screen_stack) > 1 else None
        if self.showing_series:
            if isinstance(top, LiveSeriesScreen):
                if top.revision != self._moves:
                    self.call_later(top.show, *self._series_now(), self._moves)
            elif top is slot or slot is None:
                self.push_screen(LiveSeriesScreen(*self._series_now(), self._moves))
            return
        wanted = self.round_screen
        if wanted is None:
            return
        if isinstance(top, LiveSeriesScreen):
            self.pop_screen()
            top = self.screen
            slot = self.screen_stack[1] if len(self.screen_stack) > 1 else None
        if top is wanted or (slot is not None and top is not slot):
            return
        if slot is None:
            self.push_screen(wanted)
        else:
            self.switch_screen(wanted)

    def _series_now(self) -> tuple[SeriesOverview, SeriesProgress]:
        found = overview(self.series.output, self.summaries)
        assert isinstance(found, SeriesOverview), "a series folder reads as a series"
        return found, series_progress(self.series, self.playing, self.ended, self.series_log)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "show_series":
            return self.round_screen is not None and self.screen is self.round_screen
        if action == "back_to_round":  # dimmed between rounds, gone once the series is over
            return False if self.ended is not None else True if self.round_screen is not None else None
        return super().check_action(action, parameters)

    def action_show_series(self) -> None:
        self.showing_series = True
        self.settle()

    def action_back_to_round(self) -> None:
        """Back to the round under way (ending the pause between rounds early)."""
        if self._intermission is not None:
            self._intermission.stop()
            self._intermission = None
        self.showing_series = False
        self.settle()
