"""The app with the referee engine running inside it: prepare, race, steer, quit safely.

`MatchRunner.run()` is a worker on the app's own event loop (blocking libvirt
work already runs in threads inside the runtime), so the engine's updates
arrive as plain callbacks on the UI's loop: progress goes to the preparation
view, which hands over (a message) once every agent has started; the live
match screen then follows the events itself.
Quitting mid-match asks first, then cancels the worker; the runner records
`aborted` and destroys the guests, and the app leaves only when that is done.
Quitting a decided match waits for its drain and teardown without asking.
SIGTERM and SIGHUP (a closed terminal) stop the match the same way, naming the
signal, and the app leaves once the guests are gone; a crash of the UI records
the crash, not an operator's abort.

What the engine runs is a `Stoppable` (here the match; `SeriesLiveApp` runs a
whole series and shows each round's match in turn through `watch_match`).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack

from textual.worker import Worker, WorkerCancelled, WorkerFailed, WorkerState

from aoe_tui.engine.recorder import MatchUpdate, Progress
from aoe_tui.engine.runner import INTERRUPTED_REASON, MatchRunner
from aoe_tui.engine.stop_signals import Stoppable, exit_status, stop_on_signals, stop_reason
from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.dialogs import BusyScreen, ConfirmScreen
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.preparation import PreparationScreen
from aoe_tui.app.view.preparation_board import PreparationBoard

# Work to do before the match on a worker thread (the demo's image build), reporting lines of progress.
BeforeMatch = Callable[[Callable[[str], None]], object]
TEARING_DOWN = "tearing down… (recording the abort, destroying every guest)"
FINISHING = "tearing down… (the match is decided; collecting the agents' results, destroying every guest)"


def one_line(error: BaseException) -> str:
    """What the user reads when the engine stops on an error: one line, never a traceback."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


EXIT_GRACE_SECONDS = 10


class LiveApp(AoeApp):
    ABORT_QUESTION = (
        "Abort the running match and quit?",
        "The log ends in 'aborted', every guest is destroyed, and the match directory stays replayable.",
    )

    def __init__(
        self,
        runner: MatchRunner | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        before_match: BeforeMatch | None = None,
    ) -> None:
        """`runner`: the match to run and show (None: a subclass hands each match to `watch_match`)."""
        super().__init__(clock=clock)
        self.before_match = before_match
        self.engine: Worker | None = None
        self.busy: BusyScreen | None = None
        self.engine_error: str | None = None
        self.stopped_by_signal: int | None = None
        self._signal_handlers = ExitStack()
        self.match_screen: LiveMatchScreen | None = None
        if runner is not None:
            self.watch_match(runner)

    def watch_match(self, runner: MatchRunner) -> None:
        """Show `runner`'s preparation and race from now on; call before it starts, so no progress is missed."""
        self.runner = runner
        self.board = PreparationBoard([t.id for t in runner.manifest.territories])
        self.match_screen = None
        runner.subscribe(self._on_match_update)

    def preparation_screen(self) -> PreparationScreen:
        """The preparation view of the match being watched."""
        root = self.runner.match_dir.root
        return PreparationScreen(self.runner.manifest.arena.display_name, root.name, self.board, root)

    @property
    def stoppable(self) -> Stoppable:
        """What the engine runs, and what a stop (a signal, quitting, a crash) is asked of."""
        return self.runner

    def _on_stop_signal(self, signum: int) -> None:
        """SIGTERM/SIGHUP/SIGINT: abort the match naming the signal; leave once the guests are gone."""
        if self.stopped_by_signal is not None:
            return
        self.stopped_by_signal = signum
        if self.stoppable.request_stop(stop_reason(signum)):
            return
        if not self.engine_running:
            self._leave_after_signal()
        elif self.engine is not None and not self.stoppable.started:
            self.engine.cancel()  # still preparing (the image build): nothing to record yet

    def _handle_exception(self, error: Exception) -> None:
        """The UI crashed: the record says so (not "interrupted by the operator"); the engine then
        tears down in on_unmount as for any other ending."""
        self.stoppable.request_stop(f"the app crashed: {one_line(error)}")
        super()._handle_exception(error)

    def show_first_screen(self) -> None:
        self.push_screen(self.preparation_screen())
        self.start_engine()

    def start_engine(self) -> None:
        """Stop signals now stop the engine; the engine starts on a worker of the app's loop."""
        self._signal_handlers.enter_context(stop_on_signals(self._on_stop_signal))
        self.engine = self.run_worker(self._run_engine(), name="engine", exit_on_error=False)

    async def _run_engine(self) -> object:
        if self.before_match is not None:

            def say(line: str) -> None:
                self.call_from_thread(self._on_match_update, Progress("image", line))

            await asyncio.to_thread(self.before_match, say)
        return await self.runner.run()

    # -- engine updates (called on the app's loop, inside the runner) -------------------------------

    def _on_match_update(self, update: MatchUpdate) -> None:
        """Called inside the runner: only record here; drawing happens later, so a UI error can never
        break the referee's log or its teardown. Events are the live match screen's own business."""
        if isinstance(update, Progress):
            self.board.apply(update)
            self.call_later(self._show_progress, update.message)

    def _show_progress(self, message: str) -> None:
        if self.busy is not None:
            self.busy.detail(message)
        if self.match_screen is None:
            self._show_preparation()

    def _show_preparation(self) -> None:
        screen = self.screen
        if isinstance(screen, PreparationScreen) and screen.is_mounted:
            screen.show()

    def on_preparation_screen_ready(self, message: PreparationScreen.Ready) -> None:
        """Every agent started: the live match screen takes over (unless the app is already leaving, or the
        view that is ready belongs to a match no longer watched)."""
        if message.board is not self.board or self.match_screen is not None or self.busy is not None:
            return
        self.match_screen = self.live_match_screen()
        self.show_match_screen(self.match_screen)

    def live_match_screen(self) -> LiveMatchScreen:
        return LiveMatchScreen(self.runner, self.runner.clock.elapsed_ms)

    def show_match_screen(self, screen: LiveMatchScreen) -> None:
        """The race replaces the preparation view (which is on top: it said it was ready)."""
        self.switch_screen(screen)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self.engine or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        self.engine_ended(event.worker)
        if self.stopped_by_signal is not None:
            self._leave_after_signal()
        elif self.busy is not None:
            self.exit()

    def engine_ended(self, engine: Worker) -> None:
        """The engine's worker is done (finished, failed or cancelled): say how, before the app may leave."""
        if engine.state == WorkerState.ERROR and engine.error is not None:
            self.engine_error = one_line(engine.error)
            self.board.fail(self.engine_error)
            self._show_preparation()
            if self.match_screen is not None:
                self.notify(self.engine_error, title="the match stopped", severity="error", timeout=30)
        self.match_stopped(self.match_screen)

    def match_stopped(self, screen: LiveMatchScreen | None) -> None:
        """`screen`'s match is over: it shows the end. One not mounted yet (the match ended as it took over)
        draws the end itself when it is; one already closed (a series moved on) has nothing to show."""
        if screen is not None and screen.is_mounted and screen.is_attached:
            screen.engine_stopped()

    def _leave_after_signal(self) -> None:
        """Exit once a stop signal's teardown is done, and make sure the process really ends.

        After SIGHUP the terminal is gone, and Textual's exit blocks forever writing the
        terminal-restoring codes to it (seen: a closed `aoe demo` kept running, its input thread
        spinning). The record is written and the guests are gone by now, so if the app has not
        left within EXIT_GRACE_SECONDS the process ends itself with the signal's exit status.
        """
        assert self.stopped_by_signal is not None
        self.exit()
        if self.is_headless:
            return  # no terminal to block on (and a test's process must outlive its app)
        watchdog = threading.Timer(EXIT_GRACE_SECONDS, os._exit, (exit_status(self.stopped_by_signal),))
        watchdog.daemon = True
        watchdog.start()

    # -- quitting ----------------------------------------------------------------------------------

    @property
    def engine_running(self) -> bool:
        return self.engine is not None and not self.engine.is_finished

    @property
    def only_teardown_left(self) -> bool:
        """The match is decided: what the engine still does (the bounded drain, the teardown) must not be cut
        short, or the agents' transcripts are lost."""
        referee = self.runner.referee
        return referee is not None and referee.over

    async def action_quit(self) -> None:
        if not self.engine_running:
            self.exit()
            return
        if self.busy is not None:
            return
        if self.only_teardown_left:  # nothing to ask; wait for the worker
            self.busy = BusyScreen(FINISHING)
            self.push_screen(self.busy)
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self.abort()

        self.push_screen(ConfirmScreen(*self.ABORT_QUESTION), answer)

    async def on_unmount(self) -> None:
        """However the app ends — a crash, a closed terminal, a failing test — no guest outlives it:
        the engine is cancelled once (a second cancel would cut its teardown short) and awaited."""
        engine = self.engine
        try:
            if engine is None or engine.is_finished:
                return
            if not engine.is_cancelled and self.stoppable.stop_reason is None:
                self._stop_engine()
            try:
                await engine.wait()
            except (WorkerCancelled, WorkerFailed):
                pass
        finally:
            self._signal_handlers.close()

    def abort(self) -> None:
        """Stop the engine; the app exits once the runner has recorded the abort and torn down. When the
        engine ended while the question was open, there is nothing left to abort: leave at once."""
        assert self.engine is not None
        if not self.engine_running:
            self.exit()
            return
        self.busy = BusyScreen(TEARING_DOWN)
        self.push_screen(self.busy)
        self._stop_engine()

    def _stop_engine(self) -> None:
        """The operator's stop, recorded as theirs; an engine that has not started yet (the image build) has
        nothing to record and is cancelled."""
        if not self.stoppable.request_stop(INTERRUPTED_REASON):
            assert self.engine is not None
            self.engine.cancel()
