"""The app running a whole cup (`aoe cup` without `--headless`): every heat as `aoe run` shows a match.

The engine is the same `CupRunner` that `--headless` runs. It is the series app (`SeriesLiveApp`) with the
cup's screens: each heat's race live with every steering key, and between heats (and for good once the cup
is over) the cup view: rounds as columns, heats as boxes, the heat under way, progress and the time left.
`s` opens the cup view from a heat; escape goes back. Quitting mid-cup asks, then stops the cup as a signal
does: the heat under way is aborted and played again as a later attempt when the same command is run.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.worker import Worker, WorkerState

from aoe_tui.app.live_app import LiveApp, one_line
from aoe_tui.app.screens.cup_screen import CupHeatScreen, CupLiveScreen
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.series_live_app import INTERMISSION_S, SeriesLiveApp
from aoe_tui.app.view.cup_view import CupView, cup_view
from aoe_tui.app.view.series_progress import SeriesLog
from aoe_tui.domain.clock import format_clock
from aoe_tui.engine.cup import CupRunner, HeatStarted
from aoe_tui.engine.series import SeriesStopped


class CupLiveApp(SeriesLiveApp):
    ABORT_QUESTION = (
        "Stop the cup and quit?",
        "The heat under way is aborted and every guest is destroyed; the decided heats stay in cup.json, and "
        "the same command resumes the cup, playing that heat again as its next attempt.",
    )

    def __init__(
        self,
        cup: CupRunner,
        log: SeriesLog,
        *,
        clock: Callable[[], float] = time.monotonic,
        intermission_s: float = INTERMISSION_S,
    ) -> None:
        super().__init__(cup, log, clock=clock, intermission_s=intermission_s)  # type: ignore[arg-type]
        self.cup = cup
        self.playing_heat: tuple[int, int] | None = None

    @property
    def only_teardown_left(self) -> bool:
        rounds = self.cup.checkpoint.get("rounds") or []
        final = bool(rounds) and rounds[-1]["final"] and self.playing_heat is not None
        return final and LiveApp.only_teardown_left.fget(self)  # type: ignore[attr-defined]

    def _on_series_update(self, update) -> None:  # type: ignore[no-untyped-def]
        if isinstance(update, HeatStarted):
            self.watch_match(update.runner)
            self.playing_heat = (update.plan.round, update.plan.heat)
            self.playing = update.plan.round
            self.round_screen = self.preparation_screen()
            if self._intermission is None:
                self.showing_series = False
        else:
            self.call_later(self.match_stopped, self.match_screen)
            self.playing = self.round_screen = None
            self.playing_heat = None
            self.showing_series = True
            self._start_intermission()
        self._moved()

    def live_match_screen(self) -> LiveMatchScreen:
        return CupHeatScreen(self.runner, self.runner.clock.elapsed_ms)

    def engine_ended(self, engine: Worker) -> None:
        error = engine.error
        if isinstance(error, SeriesStopped):
            self.series_stopped = str(error)
            self.ended = f"cup stopped ({error}); run the same command to resume"
        elif engine.state == WorkerState.ERROR and error is not None:
            self.engine_error = one_line(error)
            self.ended = f"the cup stopped: {self.engine_error}"
            self.notify(self.engine_error, title="the cup stopped", severity="error", timeout=30)
        else:
            self.ended = "cup complete" if engine.state == WorkerState.SUCCESS else "cup cancelled"
        self.match_stopped(self.match_screen)
        self.playing = self.round_screen = None
        self.playing_heat = None
        self.showing_series = True
        self._moved()

    def cup_now(self) -> tuple[CupView, list[str]]:
        playing = {(p.round, p.heat) for p in self.cup.in_flight()}
        view = cup_view(self.cup.output, self.cup.checkpoint, playing)
        left = self.cup.seconds_left()
        heats = self.cup.heats_left()
        summary = self.ended or (
            f"{heats} heat{'s' if heats != 1 else ''} to go · "
            + (
                "time left known once a heat is decided"
                if left is None
                else f"about {format_clock(int(left * 1000))} left"
            )
        )
        return view, [summary, *self.series_log.lines]

    def settle(self) -> None:
        if self.busy is not None or self.stopped_by_signal is not None or not self.is_running:
            return
        top = self.screen
        slot = self.screen_stack[1] if len(self.screen_stack) > 1 else None
        if self.showing_series:
            if isinstance(top, CupLiveScreen):
                if top.revision != self._moves:
                    self.call_later(top.show, *self.cup_now(), self._moves)
            elif top is slot or slot is None:
                self.push_screen(CupLiveScreen(*self.cup_now()[:1], self.cup.output, self.cup_now()[1], self._moves))
            return
        wanted = self.round_screen
        if wanted is None:
            return
        if isinstance(top, CupLiveScreen):
            self.pop_screen()
            top = self.screen
            slot = self.screen_stack[1] if len(self.screen_stack) > 1 else None
        if top is wanted or (slot is not None and top is not slot):
            return
        if slot is None:
            self.push_screen(wanted)
        else:
            self.switch_screen(wanted)
