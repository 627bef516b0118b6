"""The match screen: every widget shows the match as it stood at the cursor.

The screen owns the cursor (`Playback`) and the shared derived data
(`MatchSession`); widgets get the world at the cursor through their `show`/
`sync` methods and talk back by messages (seek, inspect). The same screen
serves a live match: `add_events` grows the timeline, and a cursor that was
following the end stays there.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

from textual import work
from textual.worker import get_current_worker
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.containers import ScrollableContainer
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from aoe_tui.domain.events import EventBase
from aoe_tui.store.log_lines import LogLines
from aoe_tui.app.screens.commands import MatchCommands
from aoe_tui.app.screens.dirty_lines import DirtyLinesCompositor
from aoe_tui.app.screens.host import host
from aoe_tui.app.screens.idle_collection import CHECK_EVERY_S, IdleCollector
from aoe_tui.app.widgets.event_list import EventList
from aoe_tui.app.view.event_rows import EventFilter
from aoe_tui.app.widgets.header import MatchHeader
from aoe_tui.app.screens.inspector import InspectorScreen
from aoe_tui.app.widgets.literal import literal
from aoe_tui.app.view.playback import JUMP_MS, Playback
from aoe_tui.app.screens.report_screen import ReportScreen
from aoe_tui.app.widgets.race_chart import RaceChart
from aoe_tui.app.widgets.scoreboard import Scoreboard
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.app.view.log_reader import Batches, Whole, reader_for
from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.app.view.tool_calls import ToolCallIndex
from aoe_tui.app.widgets.tool_feed import ToolFeed

PLAY_INTERVAL_S = 0.1
READING_SHOWN_EVERY_S = 0.5


class _CursorWidgets(NamedTuple):
    """The widgets every cursor move tells, looked up once per composition: a query walks the whole DOM,
    and two of them per frame were a third of a step's own work."""

    header: MatchHeader
    scoreboard: Scoreboard
    panes: list[TerritoryPane]
    scrubber: TimelineScrubber
    race: RaceChart
    events: EventList
    feeds: list[ToolFeed]


def _cycle(options: list[str], current: str | None) -> str | None:
    """None (no filter) -> each option -> None."""
    if not options:
        return None
    if current not in options:
        return options[0]
    index = options.index(current) + 1
    return options[index] if index < len(options) else None


class MatchScreen(Screen[None]):
    COMMANDS = {MatchCommands}
    # Scrubbing keys are priority bindings: a focused table or scroll pane must
    # not swallow home/end/arrows, or the timeline stops answering its keys.
    BINDINGS = [
        Binding("space", "toggle_play", "Play/pause"),
        Binding("left", "step(-1)", "◀ event", show=False, priority=True),
        Binding("right", "step(1)", "event ▶", show=False, priority=True),
        Binding("shift+left", "jump(-1)", "-10 s", priority=True),
        Binding("shift+right", "jump(1)", "+10 s", priority=True),
        Binding("left_square_bracket", "marker(-1)", "◀ marker", key_display="["),
        Binding("right_square_bracket", "marker(1)", "marker ▶", key_display="]"),
        Binding("home", "home", "Start", show=False, priority=True),
        Binding("end", "end", "End / follow", show=False, priority=True),
        Binding("s", "cycle_speed", "Speed"),
        Binding("e", "show_tab('events')", "Events", show=False),
        Binding("c", "next_feed", "Tool calls", show=False),
        Binding("k", "cycle_filter('kind')", "Filter kind", show=False),
        Binding("t", "cycle_filter('territory')", "Filter territory", show=False),
        Binding("u", "cycle_filter('agent')", "Filter agent", show=False),
        Binding("x", "clear_filters", "Clear filters", show=False),
        Binding("f", "report('fought')", "How they fought"),
        Binding("g", "report('agents')", "Agents", show=False),
        Binding("w", "report('standings')", "Standings", show=False),
        Binding("v", "report('provenance')", "Provenance", show=False),
        Binding("question_mark", "app.help", "Help", key_display="?"),
        Binding("escape", "back", "Back", show=False),
        Binding("q", "app.quit", "Quit"),
        # Last: where the footer is too narrow for all, Help and Quit stay in view (the chart is in help).
        Binding("h", "toggle_race", "Race chart", tooltip="Race chart: points over time"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    def __init__(self, session: MatchSession) -> None:
        super().__init__()
        self._compositor = DirtyLinesCompositor()  # a cursor move draws the lines it changed, not the screen
        self._collector = IdleCollector()  # the cycle collector's full collections wait for idle moments
        self.session = session
        self.playback = Playback(session.timeline, clock=lambda: host(self.app).clock())
        self._agents = [a for a in session.match.agents]
        self.reading: float | None = None  # how much of a long log the background read has done
        self._swapping = False  # the widgets are being rebuilt on the whole match
        self._widgets: _CursorWidgets | None = None

    def compose(self) -> ComposeResult:
        match = self.session.match
        yield MatchHeader(match.arena_name, match.name, self.session.has_timeline)
        yield Scoreboard(self.session.territory_ids(), self.session.milestone_ids(), id="scoreboard")
        with ScrollableContainer(id="panes"):
            for territory_id in self.session.territory_ids():
                agent_id = self.session.agent_for(territory_id)
                yield TerritoryPane(
                    territory_id,
                    match.agents.get(agent_id) if agent_id else None,
                    self.session.milestone_ids(),
                    match.visualization,
                    (self.session.tool_calls.get(agent_id) if agent_id else None) or ToolCallIndex([]),
                    self.session.start_ms.get(agent_id, 0) if agent_id else 0,
                    match.hides_topology,
                    self.session.health if self.session.is_conquest else None,
                    self.session.conquest_duration_ms(),
                )
        yield RaceChart(id="race")
        yield TimelineScrubber(id="scrubber")
        with TabbedContent(id="lower"):
            with TabPane("Events", id="tab-events"):
                yield EventList(self.session.timeline, self.session.rows, id="events")
            for index, agent_id in enumerate(self._agents):
                with TabPane(literal(f"Tools · {agent_id}"), id=f"tab-feed-{index}"):
                    yield ToolFeed(agent_id, self.session.tool_calls[agent_id], id=f"feed-{index}")
        yield Footer()

    def on_unmount(self) -> None:
        self._collector.release()

    def _collect_when_idle(self) -> None:
        """Not while a long log is read: its millions of new objects are not frozen yet, and a full collection
        would walk them all, holding up the read and the screen."""
        if self.reading is None:
            self._collector.check()

    def on_mount(self) -> None:
        self._collector.hold()
        self.set_interval(CHECK_EVERY_S, self._collect_when_idle)
        if not self.session.has_timeline:
            self.playback.end()
        self._play_timer = self.set_interval(PLAY_INTERVAL_S, self._tick, pause=True)
        self.refresh_cursor()
        if self.session.match.pending_log is not None:
            self.reading = 0.0
            self._reading_timer = self.set_interval(READING_SHOWN_EVERY_S, self._show_reading)
            self.call_after_refresh(self._read_whole_log)  # the first frame is drawn before the read begins
        else:
            self._collector.settle()
        skipped = self.session.match.skipped_files()
        if skipped:
            self.notify(
                "\n".join(f"{name}: {reason}" for name, reason in skipped),
                severity="warning",
                timeout=15,
                title=f"{len(skipped)} damaged file{'s' if len(skipped) != 1 else ''} skipped",
            )

    # -- the cursor ---------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Nothing answers while the widgets are rebuilt on the whole match (half a second at most)."""
        return None if self._swapping else True

    def refresh_cursor(self) -> None:
        """Show the match at the cursor everywhere; each widget repaints only what changed, and all of it
        lands in one frame (no half-updated screen between the header and the panes)."""
        if self._swapping:
            return  # the swap shows the cursor once the new widgets are there
        self._collector.frame_drawn()
        playback = self.playback
        world = self.session.timeline.state_at(playback.position)
        standings = world.standings()
        widgets = self._cursor_widgets()
        with self.app.batch_update():
            widgets.header.show(world, *self.header_times(), self.badge())
            widgets.scoreboard.show(world)
            for pane in widgets.panes:
                rank = standings.index(pane.territory_id) + 1 if pane.territory_id in standings else len(standings) + 1
                pane.show(world, playback.elapsed_ms, playback.activity_horizon_ms, rank)
            widgets.scrubber.show(playback.elapsed_ms, playback.duration_ms, self.session.markers, self._status())
            if self.has_class("-race"):
                widgets.race.show(
                    self.session.race, self.session.territory_ids(), playback.elapsed_ms, playback.duration_ms
                )
            widgets.events.sync(playback.position)
            for feed in widgets.feeds:
                feed.sync(playback.activity_horizon_ms)

    def _cursor_widgets(self) -> _CursorWidgets:
        if self._widgets is None:
            self._widgets = _CursorWidgets(
                self.query_one(MatchHeader),
                self.query_one(Scoreboard),
                list(self.query(TerritoryPane)),
                self.query_one(TimelineScrubber),
                self.query_one(RaceChart),
                self.query_one(EventList),
                list(self.query(ToolFeed)),
            )
        return self._widgets

    async def recompose(self) -> None:
        self._widgets = None  # the next cursor move finds the new ones
        await super().recompose()

    def header_times(self) -> tuple[int, int]:
        """(time at the cursor, time the header measures it against)."""
        return self.playback.elapsed_ms, self.playback.duration_ms

    def badge(self) -> tuple[str, str]:
        """REPLAY, saying so when the match was aborted (the cursor's state may still read "preparing")."""
        if self.session.timeline.head.match_state == "aborted":
            return " REPLAY · aborted ", "reverse bold $error"
        return " REPLAY ", "reverse bold $accent"

    def _status(self) -> str:
        if not self.session.has_timeline:
            return "no timeline: final state only"
        state = "▶ playing" if self.playback.playing else "paused"
        reading = f"reading the log {self.reading:.0%} · " if self.reading is not None else ""
        return f"{reading}{self._where()} · {self.playback.speed}x {state}"

    # -- a long log, read while its start is shown -----------------------------------------------------

    class LogGrown(Message):
        """More of the log, read by the reader process."""

        def __init__(self, batches: Batches) -> None:
            super().__init__()
            self.batches = batches
            self.drawn = threading.Event()  # set once the screen has drawn them

    class LogRead(Message):
        """The whole log is read, and everything the screen derives from it."""

        def __init__(self, session: MatchSession) -> None:
            super().__init__()
            self.session = session

    @work(thread=True, exclusive=True, group="read-log")
    def _read_whole_log(self) -> None:
        """The whole match read by another process (`LogReader`, started by `aoe replay` while the app
        started), this thread handing its batches to the screen as messages, the next once the last is drawn
        (what came meanwhile comes as one): the reader never waits for the screen, and the screen draws only
        what it can."""
        worker = get_current_worker()
        match, timeline = self.session.match, self.session.timeline
        assert isinstance(timeline.events, LogLines)
        try:
            reader = reader_for(match)
        except OSError as error:
            self.app.call_from_thread(self._reading_failed, f"{match.pending_log}: cannot be read ({error.strerror})")
            return
        try:
            for message in reader.messages(timeline, lambda: worker.is_cancelled):
                if isinstance(message, Batches):
                    grown = self.LogGrown(message)
                    self.post_message(grown)
                    while not (grown.drawn.wait(0.1) or worker.is_cancelled):
                        pass
                elif isinstance(message, Whole):
                    self.post_message(self.LogRead(message.session))
                else:
                    self.app.call_from_thread(self._reading_failed, message)
        finally:
            reader.close()

    def on_match_screen_log_grown(self, message: LogGrown) -> None:
        """Batches of the log: the timeline grows; a cursor following the end moves with it (End while a log
        loads follows it, as `tail -f` does, until the user moves away)."""
        self.call_after_refresh(message.drawn.set)
        if self.reading is None:
            return  # the read failed, or the whole match is shown already
        grown = message.batches
        self.session.timeline.take_batches(grown.batches, grown.data)
        self.reading = grown.fraction
        if self.playback.following:
            self.playback.end()
        self.refresh_cursor()

    async def on_match_screen_log_read(self, message: LogRead) -> None:
        await self._show_whole_match(message.session)

    def _show_reading(self) -> None:
        """The read's progress in the scrubber's status line (the rest of the screen has not changed)."""
        playback = self.playback
        self.query_one(TimelineScrubber).show(
            playback.elapsed_ms, playback.duration_ms, self.session.markers, self._status()
        )

    def _reading_failed(self, error: str) -> None:
        self._reading_timer.stop()
        self.reading = None
        self.notify(error, severity="error", title="the rest of the log could not be read", timeout=15)
        self.refresh_cursor()

    async def _show_whole_match(self, session: MatchSession) -> None:
        """Every widget rebuilt on the whole match; the cursor stays where the user left it."""
        self._reading_timer.stop()
        self.session = session
        self.playback.timeline = session.timeline
        self._agents = list(session.match.agents)
        self._swapping = True
        try:
            await self.recompose()
        finally:
            self._swapping = False
        self._collector.settle()  # the whole match, read in the background, frozen as the preview was
        self.reading = None
        if self.playback.following:
            self.playback.end()
        self.refresh_cursor()

    def _where(self) -> str:
        return f"event {self.playback.position + 1}/{len(self.session.timeline)}"

    def _tick(self) -> None:
        if self.playback.tick():
            self.refresh_cursor()
        if not self.playback.playing:
            self._play_timer.pause()

    def add_events(self, events: list[EventBase]) -> None:
        """Live seam: grow the timeline (a cursor following the end moves with it); a burst of live
        events (one referee tick) costs one repaint, not one per event."""
        if not events:
            return
        following = self.playback.following or len(self.session.timeline) == 0
        self.session.extend(events)
        self.query_one(EventList).timeline_grew()
        if following:
            self.playback.end()
        self.refresh_cursor()

    # -- actions ------------------------------------------------------------------------------------

    def action_toggle_play(self) -> None:
        if not self.session.has_timeline:
            return
        if self.playback.toggle():
            self._play_timer.resume()
        else:
            self._play_timer.pause()
        self.refresh_cursor()

    def action_step(self, delta: int) -> None:
        self.playback.step(delta)
        self.refresh_cursor()

    def action_jump(self, direction: int) -> None:
        self.playback.jump(direction * JUMP_MS)
        self.refresh_cursor()

    def action_marker(self, direction: int) -> None:
        moved = (self.playback.next_marker if direction > 0 else self.playback.previous_marker)(self.session.markers)
        if moved is not None:
            self.refresh_cursor()

    def action_home(self) -> None:
        self.playback.home()
        self.refresh_cursor()

    def action_end(self) -> None:
        self.playback.end()
        self.refresh_cursor()

    def action_cycle_speed(self) -> None:
        self.playback.cycle_speed()
        self.refresh_cursor()

    def seek(self, elapsed_ms: int) -> None:
        self.playback.go_to_time(elapsed_ms)
        self.refresh_cursor()

    def on_timeline_scrubber_seek(self, message: TimelineScrubber.Seek) -> None:
        self.seek(message.elapsed_ms)

    def action_toggle_race(self) -> None:
        """The race chart in place of the territory panes, or the panes back."""
        self.toggle_class("-race")
        self.refresh_cursor()

    def action_show_tab(self, tab: str) -> None:
        self.query_one("#lower", TabbedContent).active = f"tab-{tab}"

    def action_next_feed(self) -> None:
        """Cycles through the agents' tool-call feeds."""
        if not self._agents:
            return
        lower = self.query_one("#lower", TabbedContent)
        feeds = [f"tab-feed-{i}" for i in range(len(self._agents))]
        lower.active = feeds[(feeds.index(lower.active) + 1) % len(feeds)] if lower.active in feeds else feeds[0]
        self.query_one(f"#{lower.active.removeprefix('tab-')}", ToolFeed).focus()

    def set_filter(self, **changes: str | None) -> None:
        events = self.query_one(EventList)
        current = events.event_filter
        events.set_filter(
            EventFilter(**{"kind": current.kind, "territory": current.territory, "agent": current.agent, **changes})
        )
        self.action_show_tab("events")

    def filter_options(self, field: str) -> list[str]:
        timeline = self.session.timeline
        if field == "kind":
            return sorted(timeline.columns.kind_names)
        if field == "territory":
            return self.session.territory_ids()
        return list(self.session.match.agents)

    def action_cycle_filter(self, field: str) -> None:
        current = getattr(self.query_one(EventList).event_filter, field)
        self.set_filter(**{field: _cycle(self.filter_options(field), current)})

    def action_clear_filters(self) -> None:
        self.set_filter(kind=None, territory=None, agent=None)

    def action_report(self, tab: str) -> None:
        self.app.push_screen(ReportScreen(self.session, tab))

    def action_back(self) -> None:
        if len(self.app.screen_stack) > 2:
            self.app.pop_screen()

    def on_event_list_inspect(self, message: EventList.Inspect) -> None:
        events = [self.session.timeline.events[p].to_json() for p in message.positions]
        first = self.session.timeline.events[message.positions[0]]
        if len(events) == 1:
            self.app.push_screen(InspectorScreen(f"event #{first.sequence} · {first.kind}", events[0]))
        else:
            self.app.push_screen(
                InspectorScreen(f"stall: {len(events)} identical {first.kind} events from #{first.sequence}", events)
            )

    def on_tool_feed_inspect(self, message: ToolFeed.Inspect) -> None:
        call = message.call
        self.app.push_screen(InspectorScreen(f"{call.agent} tool call #{call.index} · {call.kind}", call.detail_json()))
