"""The live app driven by the scripted provider (Pilot): preparation, live feed, steering, quitting."""

from __future__ import annotations

import asyncio
import json
import math

from textual.widgets import OptionList

from aoe_tui.app.screens.commands import MatchCommands
from aoe_tui.app.screens.dialogs import BusyScreen, ConfirmScreen, PickerScreen
from aoe_tui.app.widgets.header import MatchHeader
from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.preparation import PreparationScreen
from aoe_tui.app.widgets.scrubber import TimelineScrubber
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.app.screens.territory_screen import TerritoryScreen
from aoe_tui.app.widgets.tool_feed import ToolFeed
from aoe_tui.domain.reducer import reduce
from aoe_tui.domain.world import MilestonePause
from aoe_tui.testing.scripted_provider import ScriptedProvider
from aoe_tui.store.saved_match import load_match
from tests.app_live.live_match import (
    LIVE_RACE,
    QUICK_RACE,
    FailingBootProvider,
    GatedBootProvider,
    SlowTeardownProvider,
    hold_at,
    live_app,
    until,
)
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import rendered

SIZE = (160, 48)
STEERING = ["pause_match", "resume_match", "pause_milestone", "resume_milestone", "retry_milestone"]


def table_text(table) -> str:
    return "\n".join(" ".join(str(cell) for cell in table.get_row_at(row)) for row in range(table.row_count))


def kinds(app) -> list[str]:
    return [event.kind for event in app.match_screen.session.timeline.events]


async def palette_titles(screen) -> list[str]:
    provider = MatchCommands(screen)
    return [hit.text async for hit in provider.discover()]


async def test_preparation_shows_each_territory_then_the_race_takes_over(tmp_path):
    provider = GatedBootProvider(dict(LIVE_RACE))
    app = live_app(tmp_path / "m", ManualSource(limit=10), provider)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.board.territories["builder-three"].stages["boot"] == "running")
        assert isinstance(app.screen, PreparationScreen)
        board = rendered(app.screen.query_one("#prep-board"))
        assert "builder-one" in board and "SSH preflight passed after 12.5 s" in board
        assert app.board.territories["builder-one"].stages == {
            "image": "done",
            "boot": "done",
            "ssh": "done",
            "agent": "waiting",
        }
        assert app.board.territories["builder-two"].stages["ssh"] == "waiting"
        provider.gate.set()
        await until(pilot, lambda: isinstance(app.screen, LiveMatchScreen))
        assert app.board.ready
        assert kinds(app)[:1] == ["match_state_changed"] and kinds(app).count("agent_started") == 3


async def test_a_guest_that_never_boots_stops_the_match_with_one_readable_line_and_its_console(tmp_path):
    output = tmp_path / "m"
    app = live_app(output, ManualSource(), FailingBootProvider())
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.engine.is_finished)
        failure = rendered(app.screen.query_one("#prep-failure"))
        assert "The match could not start: builder-two: SSH did not answer within 240 s" in failure
        assert "Failed to start ssh.service" in failure and "Traceback" not in failure
        assert app.board.territories["builder-two"].stages["boot"] == "failed"
        assert app.match_screen is None
        await pilot.press("q")  # nothing is running: no question
        await until(pilot, lambda: not app.is_running)
    events = load_match(output).events
    assert [e.kind for e in events] == ["match_state_changed"] and events[0].to_json()["to"] == "aborted"


async def test_the_screen_follows_live_and_counts_new_events_while_scrubbed_back(tmp_path):
    source = ManualSource(limit=0)
    app = live_app(tmp_path / "m", source)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        screen = app.screen
        assert isinstance(screen, LiveMatchScreen) and screen.playback.following
        assert "● LIVE" in rendered(screen.query_one(MatchHeader))
        assert "0:02 / 10:00" in rendered(screen.query_one(MatchHeader))
        await pilot.press("left", "left", "left")
        behind_before = len(screen.session.timeline) - 1 - screen.playback.position
        assert behind_before == 3
        await hold_at(pilot, source, 4)
        behind = len(screen.session.timeline) - 1 - screen.playback.position
        assert behind > behind_before
        assert f"{behind} new events · End rejoins live" in rendered(screen.query_one(MatchHeader))
        await pilot.press("end")
        assert screen.playback.following and "● LIVE" in rendered(screen.query_one(MatchHeader))
        await hold_at(pilot, source, 6)
        assert screen.playback.position == len(screen.session.timeline) - 1


async def test_pause_and_resume_the_match_are_confirmed_recorded_and_marked(tmp_path):
    source = ManualSource(limit=0)
    app = live_app(tmp_path / "m", source)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        screen = app.screen
        assert screen.check_action("resume_match", ()) is None and screen.check_action("pause_match", ()) is True
        titles = await palette_titles(screen)
        assert "Pause match" in titles and "Resume match" not in titles
        await pilot.press("p")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert not app.runner.world.paused
        await pilot.press("p", "y")
        await until(pilot, lambda: app.runner.world.paused and "match_paused" in kinds(app))
        assert screen.check_action("pause_match", ()) is None and screen.check_action("resume_match", ()) is True
        assert "paused" in rendered(screen.query_one(MatchHeader))
        assert "resume_match" in screen.steerable and "pause_match" not in screen.steerable
        source.limit = 10  # paused: the match clock must not move although the source does
        await pilot.pause(0.3)
        assert app.runner.clock.elapsed_ms() == 2_000
        bursts, rebuilds = [], []
        add_events = screen.add_events
        screen.add_events = lambda events: (bursts.append(len(events)), add_events(events))  # type: ignore[method-assign]
        screen.bindings_updated_signal.subscribe(screen, rebuilds.append)
        await pilot.press("r")
        await until(pilot, lambda: "match_resumed" in kinds(app))
        assert [m.kind for m in screen.session.markers].count("operator") == 2
        rows = table_text(screen.query_one("EventTable"))
        assert "match_paused" in rows and "match_resumed" in rows
        # The footer is rebuilt when what may be steered changes (resumed: pause is offered again), not once per
        # burst of live events: a rebuild re-styles every footer key, a quarter of the live screen's CPU when
        # it ran per burst.
        await hold_at(pilot, source, 18)  # the source stood at 10 while paused: 8 s more of the match
        assert len(bursts) >= 5 and len(rebuilds) < len(bursts) / 2, (rebuilds, bursts)
        assert "pause_match" in screen.steerable and "resume_match" not in screen.steerable


async def test_while_a_pause_settles_the_match_controls_wait(tmp_path):
    source = ManualSource(limit=0)
    app = live_app(tmp_path / "m", source)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        screen = app.screen
        host, gate = app.runner.referee.hosts["builder-one"], asyncio.Event()
        suspend = host.suspend

        async def slow_suspend() -> None:  # a guest that takes its time (or a reboot check still running)
            await gate.wait()
            await suspend()

        host.suspend = slow_suspend
        await pilot.press("p", "y")
        await until(pilot, lambda: app.runner.world.paused)
        assert screen.pending_operation and screen.check_action("resume_match", ()) is None
        assert "pausing: waiting for running checks to settle" in rendered(screen.query_one(TimelineScrubber))
        await pilot.press("r")
        await pilot.pause(0.1)
        assert "match_resumed" not in kinds(app)
        gate.set()
        await until(pilot, lambda: screen.pending_operation is None)
        assert screen.check_action("resume_match", ()) is True
        await pilot.press("r")
        await until(pilot, lambda: "match_resumed" in kinds(app))


async def test_milestone_pause_resume_and_retry_act_on_the_selected_territory(tmp_path):
    source = ManualSource(limit=0)
    app = live_app(tmp_path / "m", source, ScriptedProvider(dict(QUICK_RACE)))
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 4)  # builder-three has passed service-up and is retrying the reboot
        screen = app.screen
        await pilot.press("3")
        assert screen.selected == "builder-three"
        assert screen.query_one("#pane-builder-three", TerritoryPane).has_class("-selected")
        assert not screen.query_one("#pane-builder-one", TerritoryPane).has_class("-selected")
        assert screen.check_action("resume_milestone", ()) is None
        await pilot.press("m")
        picker = app.screen
        assert isinstance(picker, PickerScreen)
        assert "host-reboot · builder-three" in picker.labels and "host-reboot · every territory" in picker.labels
        picker.query_one(OptionList).highlighted = picker.labels.index("host-reboot · builder-three")
        await pilot.press("enter")
        await pilot.pause()
        assert app.runner.world.paused_milestones == [
            MilestonePause(territory="builder-three", milestone="host-reboot")
        ]
        assert screen.check_action("resume_milestone", ()) is True
        # retrying a passed milestone asks first: a failed re-check revokes it
        await pilot.press("y")
        picker = app.screen
        label = next(label for label in picker.labels if label.startswith("service-up"))
        assert "revokes" in label and not any(label.startswith("host-reboot") for label in picker.labels[:0])
        picker.query_one(OptionList).highlighted = picker.labels.index(label)
        await pilot.press("enter")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await until(pilot, lambda: "milestone_retry_requested" in kinds(app))
        await pilot.press("n")
        picker = app.screen
        assert picker.labels == ["host-reboot · builder-three"]
        await pilot.press("enter")
        await pilot.pause()
        assert app.runner.world.paused_milestones == []
        operator = [
            e.to_json()
            for e in screen.session.timeline.events
            if e.kind.startswith("milestone_") and e.kind.endswith(("paused", "resumed", "retry_requested"))
        ]
        assert [(e["kind"], e["territory"], e["milestone"]) for e in operator] == [
            ("milestone_paused", "builder-three", "host-reboot"),
            ("milestone_retry_requested", "builder-three", "service-up"),
            ("milestone_resumed", "builder-three", "host-reboot"),
        ]


async def test_steering_is_disabled_once_the_match_is_over(tmp_path):
    source = ManualSource()
    app = live_app(tmp_path / "m", source, ScriptedProvider(dict(QUICK_RACE)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.match_screen is not None and not app.engine_running)
        screen = app.screen
        await pilot.pause()
        assert app.runner.world.winner == "builder-one"
        assert all(screen.check_action(action, ()) is None for action in STEERING)
        titles = await palette_titles(screen)
        assert not {"Pause match", "Resume match", "Pause milestone…", "Resume milestone…", "Retry milestone…"} & set(
            titles
        )
        assert "Territory details" in titles
        await pilot.press("p")
        assert app.screen is screen  # a disabled key does nothing, no dialog
        await pilot.press("q")  # the match is over: quitting needs no confirmation
        await until(pilot, lambda: not app.is_running)


async def test_quitting_mid_match_asks_then_aborts_tears_down_and_leaves_a_replayable_match(tmp_path):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    provider = app.runner.provider
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        await pilot.press("q")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert app.engine_running and isinstance(app.screen, LiveMatchScreen)
        await pilot.press("q", "y")
        assert isinstance(app.screen, BusyScreen)
        await until(pilot, lambda: not app.is_running)
    assert provider.hosts == {}  # every territory torn down before the app left
    match = load_match(output)
    last = match.events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"
    assert reduce(match.events).to_json() == json.loads((output / "world.json").read_text())


async def test_an_app_that_ends_abruptly_still_records_the_abort_and_tears_down(tmp_path):
    class GuestsTakeTimeToGo(ScriptedProvider):
        async def teardown(self) -> None:
            await asyncio.sleep(0.5)
            await super().teardown()

    output = tmp_path / "m"
    source = ManualSource(limit=0)
    provider = GuestsTakeTimeToGo(dict(LIVE_RACE))
    app = live_app(output, source, provider)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        app.exit()  # no question asked: what a crash or a closed terminal does
    assert provider.hosts == {}
    last = load_match(output).events[-1].to_json()
    assert last["kind"] == "match_state_changed" and last["to"] == "aborted"


async def test_quitting_a_decided_match_waits_for_teardown_without_asking_or_aborting(tmp_path):
    output = tmp_path / "m"
    provider = SlowTeardownProvider(dict(QUICK_RACE))
    app = live_app(output, ManualSource(), provider)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: provider.tearing_down)
        assert app.engine_running
        await pilot.press("q")
        assert isinstance(app.screen, BusyScreen) and "tearing down" in app.screen.message
        await pilot.pause(0.2)
        assert app.is_running  # still waiting for the guests to go
        provider.gate.set()
        await until(pilot, lambda: not app.is_running)
    assert provider.hosts == {}
    assert load_match(output).events[-1].kind == "post_match_drain_finished"


async def test_tool_calls_appear_as_the_adapters_append_them(tmp_path):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        screen = app.screen
        trace = output / "agents" / "oracle" / "tool_trace.jsonl"
        trace.parent.mkdir(parents=True, exist_ok=True)
        calls = [
            {
                "id": "call-001",
                "name": "Bash",
                "input": {"command": "systemctl status builder-app.service", "description": "Check the slot unit"},
                "output": "inactive",
                "is_error": False,
                "started_after_ms": 1000,
                "duration_ms": 300,
            },
            {
                "id": "call-002",
                "name": "Bash",
                "input": {"command": "cat > /opt/builder/app.py <<'EOF'\nprint(1)\nEOF"},
                "output": "",
                "is_error": False,
                "started_after_ms": 2000,
                "duration_ms": 100,
            },
        ]
        trace.write_text(json.dumps(calls[0]) + "\n" + json.dumps(calls[1])[:20])  # second line mid-append
        screen.live_tick()
        await pilot.pause()
        feed = screen.query_one("#feed-0", ToolFeed)
        assert feed.row_count == 1 and screen.session.tool_calls["oracle"].calls[0].kind == "discovery"
        trace.write_text(json.dumps(calls[0]) + "\n" + json.dumps(calls[1]) + "\n")
        screen.live_tick()
        await pilot.pause()
        assert feed.row_count == 2 and screen.session.tool_calls["oracle"].calls[1].kind == "mutation"
        pane_lines = "\n".join(rendered(lines) for lines in screen.query("#pane-builder-one .lines"))
        assert "Check the slot unit" in pane_lines  # the pane's activity


async def test_drill_down_shows_console_ssh_milestone_evidence_failures_and_agent_output(tmp_path):
    output = tmp_path / "m"
    source = ManualSource(limit=0)
    app = live_app(output, source)
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 4)  # builder-two has passed two milestones and failed the restart
        (output / "territories" / "builder-two" / "console.log").write_text("\x1b[0mDebian GNU/Linux 12 login:\n")
        agent_dir = output / "agents" / "amnesiac"
        agent_dir.mkdir(parents=True, exist_ok=True)
        (agent_dir / "stdout.log").write_text("wrote /opt/builder/app.py\n")
        await pilot.press("2", "d")
        assert isinstance(app.screen, TerritoryScreen)
        body = rendered(app.screen.query_one("#drill-body-text"))
        assert "Debian GNU/Linux 12 login:" in body and "\x1b" not in body
        assert "no SSH: this territory is not a virtual machine" in body
        assert "wrote /opt/builder/app.py" in body
        assert "evidence" in body and "last failure (verification_failed)" in body
        await pilot.press("escape")
        assert isinstance(app.screen, LiveMatchScreen)


async def test_resizing_during_a_live_match_down_to_80x24(tmp_path):
    source = ManualSource(limit=0)
    app = live_app(tmp_path / "m", source, ScriptedProvider(dict(QUICK_RACE)))
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 2)
        screen = app.screen
        assert screen.has_class("-wide")
        await pilot.resize_terminal(80, 24)
        await hold_at(pilot, source, 4)
        assert screen.has_class("-narrow") and screen.query_one("#scoreboard").display
        assert "builder-three" in rendered(screen.query_one("#scoreboard"))
        await pilot.press("3")
        assert screen.selected == "builder-three"
        await pilot.resize_terminal(160, 48)
        source.limit = math.inf
        await until(pilot, lambda: not app.engine_running)
        assert screen.has_class("-wide") and "winner builder-one" in rendered(screen.query_one(MatchHeader))
