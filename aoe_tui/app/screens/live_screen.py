"""The match screen of a running match: the replay screen fed live, plus steering.

The screen feeds itself: it is seeded with the recorder's events so far and
subscribes in the same step (nothing missed, nothing twice), and its own
worker drains that queue into one message per burst. Textual cancels the
worker when the screen unmounts and drops messages once the screen is
closing, so no live event ever meets a screen being dismantled.

Steering acts on the runner, and every action is an event the referee
records, so it shows up in the event list and as an operator marker like
anything else. Actions that make no sense right now (resume when nothing is
paused, anything once the match is over) are disabled through `check_action`,
so the footer dims them and the palette leaves them out, instead of failing
when pressed. Milestone actions apply to the selected territory (keys 1-9),
or to every territory where that makes sense.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial

from textual import work
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive

from aoe_tui.agents.harnesses import harness_spec
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.events import FINAL_MATCH_STATES, EventBase
from aoe_tui.domain.world import World
from aoe_tui.engine.provenance import provenance
from aoe_tui.engine.recorder import MatchUpdate
from aoe_tui.engine.runner import MatchRunner
from aoe_tui.engine.territory import TerritoryHost
from aoe_tui.app.screens.dialogs import ConfirmScreen, PickerScreen
from aoe_tui.app.view.live_tool_calls import LiveToolCalls
from aoe_tui.app.screens.match_screen import MatchScreen
from aoe_tui.store.saved_match import AgentInfo, SavedMatch
from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.app.screens.territory_screen import TerritoryScreen

LIVE_REFRESH_S = 1.0
STEERING = frozenset({"pause_match", "resume_match", "pause_milestone", "resume_milestone", "retry_milestone"})
EVERY_TERRITORY = None
OPERATOR_PAUSE_REASON = "paused by the operator"
PAUSING = "pausing: waiting for running checks to settle"
RESUMING = "resuming guests and agents"
QUIET_WHEN_LIVE = frozenset(
    {"toggle_play", "jump(-1)", "jump(1)", "marker(-1)", "marker(1)", "cycle_speed", "report('fought')", "toggle_race"}
)


def ssh_command(host: TerritoryHost | None) -> str:
    """The command a human pastes to get a root shell in the guest, as its host gives it."""
    if host is None:
        return "(the territory is not running)"
    return host.ssh_command() or "(no SSH: this territory is not a virtual machine)"


def live_match(runner: MatchRunner, events: list[EventBase]) -> SavedMatch:
    """The saved-match view of a match still being played: the manifest as run and the events so far."""
    manifest = runner.manifest
    return SavedMatch(
        source=runner.match_dir.root,
        shape="directory",
        name=runner.match_dir.root.name,
        manifest=manifest,
        events=list(events),
        world=World(),
        recorded_world=None,
        agents={
            a.id: AgentInfo(a.id, a.territory, a.model, a.adapter, a.reasoning_effort, harness_spec(a.adapter))
            for a in manifest.agents
        },
        provenance=provenance(manifest, runner.manifest_path),
        visualization=manifest.visualization,
        directory=runner.match_dir.root,
    )


class LiveMatchScreen(MatchScreen):
    BINDINGS = [
        # Watching live, steering matters more than playback speed (and the race chart): those keys still work,
        # off the footer.
        *[
            replace(binding, show=False)
            for binding in MatchScreen.BINDINGS
            if isinstance(binding, Binding) and binding.action in QUIET_WHEN_LIVE
        ],
        # The footer gets short words so every steering key fits at 160 columns; help and palette the long ones.
        Binding("1", "select(0)", "Select", key_display="1-9", tooltip="Select territory"),
        *[Binding(str(n), f"select({n - 1})", "", show=False) for n in range(2, 10)],
        Binding("d", "drill_down", "Details", tooltip="Territory details"),
        Binding("p", "pause_match", "Pause match"),
        Binding("r", "resume_match", "Resume match"),
        Binding("m", "pause_milestone", "Pause milestone…"),
        Binding("n", "resume_milestone", "Resume milestone…"),
        Binding("y", "retry_milestone", "Retry milestone…"),
    ]

    selected: reactive[str | None] = reactive(None, bindings=True)
    """The territory milestone actions and drill-down apply to (keys 1-9)."""
    pending_operation: reactive[str | None] = reactive(None, bindings=True)
    """A match pause/resume under way (no other match control until it is done)."""
    steerable: reactive[frozenset[str]] = reactive(frozenset(), bindings=True)
    """The steering actions the world allows now: the footer is rebuilt only when this set changes (a
    rebuild per burst of live events cost a quarter of the live screen's CPU)."""

    class Arrived(Message, bubble=False):
        """A burst of live events, handled on the screen's own message loop."""

        def __init__(self, events: list[EventBase]) -> None:
            super().__init__()
            self.events = events

    def __init__(self, runner: MatchRunner, live_clock: Callable[[], int]) -> None:
        recorder = runner.recorder
        assert recorder is not None, "the race starts after the runner made its recorder"
        super().__init__(MatchSession(live_match(runner, recorder.events)))
        self._updates: asyncio.Queue[MatchUpdate] = asyncio.Queue()
        self._unsubscribe = recorder.subscribe(self._updates.put_nowait)  # same step as the seed above
        self.runner = runner
        self.live_clock = live_clock
        self.live_calls = LiveToolCalls(self.session, runner.match_dir.root)
        ids = self.session.territory_ids()
        self.set_reactive(LiveMatchScreen.selected, ids[0] if ids else None)

    def on_mount(self) -> None:
        # Runs before MatchScreen.on_mount (Textual calls each class's handler): a live cursor starts at the end.
        self.playback.end()
        self.set_interval(LIVE_REFRESH_S, self.live_tick)
        self._show_selection()
        self._follow()

    def on_unmount(self) -> None:
        self._unsubscribe()

    # -- live feed ---------------------------------------------------------------------------------

    @property
    def live_world(self) -> World:
        return self.runner.world

    @property
    def engine_running(self) -> bool:
        referee = self.runner.referee
        return referee is not None and not referee.over

    def live_tick(self) -> None:
        """New tool calls, and the match clock moving between events (a reboot check is quiet for a while)."""
        self.live_calls.poll()
        self.refresh_cursor()

    @work(group="live-feed", exclusive=True)
    async def _follow(self) -> None:
        """Drain the recorder's updates: every burst (one referee tick) is one message, one repaint."""
        while True:
            burst = [await self._updates.get()]
            while not self._updates.empty():
                burst.append(self._updates.get_nowait())
            events = [update for update in burst if isinstance(update, EventBase)]
            if events:
                self.post_message(self.Arrived(events))

    def on_live_match_screen_arrived(self, message: Arrived) -> None:
        self.add_events(message.events)

    def add_events(self, events: list[EventBase]) -> None:
        super().add_events(events)
        self.steerable = self._steerable_now()  # what may be steered follows the world

    def header_times(self) -> tuple[int, int]:
        limit_ms = self.runner.manifest.rules.duration_seconds * 1000
        if self.playback.following and self.engine_running:
            return max(self.live_clock(), self.playback.elapsed_ms), limit_ms
        return self.playback.elapsed_ms, limit_ms

    def engine_stopped(self) -> None:
        self.live_calls.poll()
        self.refresh_cursor()
        self.steerable = self._steerable_now()

    # -- selection and drill-down ------------------------------------------------------------------

    def action_select(self, index: int) -> None:
        ids = self.session.territory_ids()
        if index < len(ids):
            self.selected = ids[index]

    def watch_selected(self) -> None:
        if self.is_mounted:
            self._show_selection()

    def _show_selection(self) -> None:
        for pane in self.query(TerritoryPane):
            pane.select(pane.territory_id == self.selected)
            if pane.territory_id == self.selected:
                pane.scroll_visible(animate=False)

    def action_drill_down(self) -> None:
        if self.selected is None:
            return
        referee = self.runner.referee
        host = referee.hosts.get(self.selected) if referee is not None else None
        self.app.push_screen(
            TerritoryScreen(
                self.selected,
                self.session.agent_for(self.selected),
                self.session.milestone_ids(),
                self.runner.match_dir.root,
                lambda: self.runner.world,
                ssh_command(host),
            )
        )

    # -- steering ----------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in STEERING:
            return True
        return True if action in self._steerable_now() else None

    def _steerable_now(self) -> frozenset[str]:
        if not self.engine_running:
            return frozenset()
        world = self.live_world
        enabled = {
            "pause_match": not world.paused and self.pending_operation is None,
            "resume_match": world.paused and self.pending_operation is None,
            "pause_milestone": bool(self._pause_options()),
            "resume_milestone": bool(world.paused_milestones),
            "retry_milestone": bool(self._retry_options()),
        }
        return frozenset(action for action, allowed in enabled.items() if allowed)

    def _operate(self, operation: Callable[[], object]) -> None:
        """Run one operator control; a refusal (the target changed meanwhile) is a notice, not a crash."""
        try:
            operation()
        except AoeError as error:
            self.notify(str(error), title="operator action refused", severity="warning")

    def _operate_async(self, doing: str, coroutine_function: Callable[[], Awaitable[object]]) -> None:
        """Pausing waits for running verifications to settle (a reboot check can take minutes): never on
        the UI's time, and no other match control until it is done — resuming a half-paused match
        would leave its guests suspended."""

        async def run() -> None:
            try:
                await coroutine_function()
            except AoeError as error:
                self.notify(str(error), title="operator action refused", severity="warning")
            finally:
                self.pending_operation = None

        self.pending_operation = doing
        self.run_worker(run(), group="operator", exit_on_error=False)

    def watch_pending_operation(self) -> None:
        if self.is_mounted:
            self.refresh_cursor()  # the status line names the operation under way

    def badge(self) -> tuple[str, str]:
        """LIVE while following (saying how it ended once decided), else how far behind live the cursor is."""
        behind = self.playback.last_position - self.playback.position
        if self.playback.following or behind <= 0:
            over = self.session.timeline.head.match_state
            if over in FINAL_MATCH_STATES:  # the drain may still add events, but the race is decided
                return f" ● LIVE · {over} ", "reverse bold " + ("$success" if over == "finished" else "$error")
            return " ● LIVE ", "reverse bold $error"
        return f" {behind} new event{'s' if behind != 1 else ''} · End rejoins live ", "reverse bold $warning"

    def _status(self) -> str:
        pending = f" · {self.pending_operation}" if self.pending_operation else ""
        if self.session.has_timeline and self.playback.following:
            return f"{self._where()} · following live{pending}"  # playback speed means nothing at the live edge
        return super()._status() + pending

    def action_pause_match(self) -> None:
        def answer(yes: bool | None) -> None:
            if yes:
                self._operate_async(PAUSING, partial(self.runner.pause_match, OPERATOR_PAUSE_REASON))

        self.app.push_screen(
            ConfirmScreen(
                "Pause the whole match?", "The clock stops, guests and agents are suspended until you resume (r)."
            ),
            answer,
        )

    def action_resume_match(self) -> None:
        self._operate_async(RESUMING, self.runner.resume_match)

    def _milestones(self) -> list[str]:
        build = self.runner.manifest.build
        return [m.id for m in build.milestones] if build else []

    def _pause_options(self) -> list[tuple[str, tuple[str, str | None]]]:
        world = self.live_world
        options: list[tuple[str, tuple[str, str | None]]] = []
        for milestone in self._milestones():
            if self.selected and not world.is_milestone_paused(self.selected, milestone):
                options.append((f"{milestone} · {self.selected}", (milestone, self.selected)))
            if not world.is_milestone_paused(EVERY_TERRITORY, milestone):
                options.append((f"{milestone} · every territory", (milestone, EVERY_TERRITORY)))
        return options

    def _resume_options(self) -> list[tuple[str, tuple[str, str | None]]]:
        return [
            (f"{pause.milestone} · {pause.territory or 'every territory'}", (pause.milestone, pause.territory))
            for pause in self.live_world.paused_milestones
        ]

    def _retry_options(self) -> list[tuple[str, str]]:
        """Milestones of the selected territory whose dependencies passed (what the referee accepts)."""
        world, build = self.live_world, self.runner.manifest.build
        territory = world.territories.get(self.selected or "")
        if territory is None or build is None or territory.competitor_state == "unavailable":
            return []
        passed = {m for m, state in territory.milestones.items() if state.passed}
        return [
            (f"{m.id} · {self.selected}" + ("  (passed: a failed re-check revokes it)" if m.id in passed else ""), m.id)
            for m in build.milestones
            if set(m.depends_on) <= passed
        ]

    def action_pause_milestone(self) -> None:
        def chosen(target: tuple[str, str | None] | None) -> None:
            if target is not None:
                self._operate(partial(self.runner.pause_milestone, *target))

        self.app.push_screen(PickerScreen("Pause which milestone?", self._pause_options()), chosen)

    def action_resume_milestone(self) -> None:
        def chosen(target: tuple[str, str | None] | None) -> None:
            if target is not None:
                self._operate(partial(self.runner.resume_milestone, *target))

        self.app.push_screen(PickerScreen("Resume which milestone?", self._resume_options()), chosen)

    def action_retry_milestone(self) -> None:
        territory = self.selected
        assert territory is not None

        def retry(milestone: str) -> None:
            self._operate(partial(self.runner.retry_milestone, territory, milestone))

        def chosen(milestone: str | None) -> None:
            if milestone is None:
                return
            state = self.live_world.territories[territory].milestones.get(milestone)
            if state is not None and state.passed:
                self.app.push_screen(
                    ConfirmScreen(
                        f"Re-check {milestone} on {territory}?",
                        "It has passed; if the re-check fails the milestone is revoked and its points are lost.",
                    ),
                    lambda yes: retry(milestone) if yes else None,
                )
            else:
                retry(milestone)

        self.app.push_screen(PickerScreen(f"Retry which milestone of {territory} now?", self._retry_options()), chosen)
