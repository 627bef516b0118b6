"""A live match whose agents print markup and escape sequences: the app keeps running and shows them literally.

Before the app rendered player text literally, a tool call like `ls [/usr/bin]`
or a summary with `[/]` raised `MarkupError`: the app exited, the engine was
cancelled and the match was recorded as interrupted by the operator.
"""

from __future__ import annotations

import json

from aoe_tui.app.screens.live_screen import LiveMatchScreen
from aoe_tui.app.screens.territory_screen import TerritoryScreen
from aoe_tui.testing.scripted_provider import AgentScript, ScriptedLauncher
from tests.app_live.live_match import hold_at, live_app
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import screen_text

SIZE = (160, 48)
ESCAPES = "\x1b]0;pwned\x07\x1b[2J"
SUMMARY = "gave up: GET /health returned body '[/]' [bold red]boom"
COMMAND = "ls [/usr/bin]"
OUTPUT = "[link=https://x]y[/link] [/]"


async def test_markup_from_a_live_agent_is_text_and_the_match_goes_on(tmp_path):
    output, source = tmp_path / "m", ManualSource(limit=0)
    launcher = ScriptedLauncher(
        scripts={"amnesiac": AgentScript(finishes_after=2, status="failed", summary=SUMMARY + ESCAPES)}
    )
    app = live_app(output, source, launcher=launcher)
    runner = app.runner
    async with app.run_test(size=SIZE) as pilot:
        await hold_at(pilot, source, 4)
        screen = app.screen
        assert isinstance(screen, LiveMatchScreen)
        trace = output / "agents" / "oracle" / "tool_trace.jsonl"
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.write_text(
            json.dumps(
                {
                    "id": "call-001",
                    "name": "Bash",
                    "input": {"command": COMMAND, "description": OUTPUT},
                    "output": OUTPUT + ESCAPES,
                    "is_error": False,
                    "started_after_ms": 1000,
                    "duration_ms": 300,
                }
            )
            + "\n"
        )
        (output / "agents" / "oracle" / "stdout.log").write_text(f"{OUTPUT}{ESCAPES}\n")
        screen.live_tick()
        await pilot.pause()
        screen.action_next_feed()
        await pilot.pause()
        text = screen_text(app)
        assert COMMAND in text and OUTPUT in text and "pwned" not in text
        screen.set_filter(kind="agent_finished")
        await pilot.pause()
        assert SUMMARY in screen_text(app)
        screen.action_clear_filters()
        screen.notify(SUMMARY, title="[bold]title[/]")
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, TerritoryScreen) and OUTPUT in screen_text(app)
        await pilot.press("escape")
        await hold_at(pilot, source, 5)
        assert app.is_running and app.engine_running and app.screen is screen
        assert "match_finished" not in [e.kind for e in runner.recorder.events]
    finished = [e.to_json() for e in runner.recorder.events if e.kind == "agent_finished"]
    assert finished[0]["detail"] == SUMMARY  # markup kept as text, escapes stripped where it entered the log
