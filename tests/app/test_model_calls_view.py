"""An agent's model calls in the territory details, and whose usage figures the app shows.

The calls are the referee's gateway's record (`model_calls.jsonl`), player
and provider text: a tool named with markup, HTML and terminal escapes is
shown as the characters it is. Usage measured by the referee is labelled so,
with the adapter's own report beside it when that differs.
"""

from __future__ import annotations

from textual.content import Content

from aoe_tui.app.app import AoeApp
from aoe_tui.app.screens.report_screen import ReportScreen
from aoe_tui.app.screens.territory_screen import TerritoryScreen
from aoe_tui.app.view import presentation as show
from aoe_tui.app.view.model_calls import model_call_line, model_call_lines, model_calls_title, plain
from aoe_tui.app.widgets.territory_pane import TerritoryPane
from aoe_tui.domain.world import AgentState
from aoe_tui.store.match_layout import MatchLayout
from aoe_tui.store.model_calls import ModelCallTail, summarize
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource
from tests.app.app_under_test import rendered, screen_text
from tests.store.model_calls_match import ANTHROPIC, CHAT, CUT, RESPONSES, TERRITORY, chat_records, model_calls_match

SIZE = (200, 60)
SHOWN_HOSTILE = "[bold]x[/bold]<script>alert(1)</script>red"  # the escapes gone, the rest literal


def test_each_exchange_is_one_line_with_its_facts():
    lines = [plain(model_call_line(summarize(record))) for record in chat_records()]
    assert lines[0] == "0:05  openai-chat  200  streamed  100 in / 20 out  → shell"
    assert lines[1] == f"0:10  openai-chat  200  whole  150 in / n/a out  → shell, {SHOWN_HOSTILE}"
    assert lines[2] == f"0:15  openai-chat  402  streamed  n/a in / n/a out  cut: {CUT}"


def test_a_hostile_record_is_shown_literally_and_bounded():
    record = {
        **chat_records()[0],
        "protocol": "[red]openai[/red]\x1b[2J",
        "cut": "[/]\x1b]0;pwned\x07" + "x" * 500,
        "tool_calls": [{"name": "<b>[link=https://x]y[/link]</b>\n" + "y" * 500}],
    }
    line = model_call_line(summarize(record))
    assert {part[1] for part in line if isinstance(part, tuple)} <= {"bold", "$success", "$error", "$accent"}
    text = Content.assemble(*line).plain
    assert "[red]openai[/red]" in text and "<b>[link=https://x]y[/link]</b>" in text and "cut: [/]" in text
    assert "\x1b" not in text and "pwned" not in text and "\n" not in text and len(text) < 300


def test_the_lines_come_from_the_tail_and_say_when_there_are_none(tmp_path):
    match = model_calls_match(tmp_path, nested=True)
    tail = ModelCallTail(MatchLayout(match).agent(CHAT).model_calls)
    lines = model_call_lines(tail, shown=2)
    assert [plain(line)[:5] for line in lines] == ["0:10 ", "0:15 "]
    assert model_calls_title(tail, shown=2) == "Model calls (the referee's gateway: last 2 of 3)"
    nothing = ModelCallTail(MatchLayout(match).agent("nobody").model_calls)
    assert [plain(line) for line in model_call_lines(nothing)] == ["(no model calls recorded)"]


async def test_the_territory_details_show_the_agents_model_calls_literally(tmp_path):
    match = load_match(model_calls_match(tmp_path, nested=True))
    app = AoeApp(match, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        app.push_screen(
            TerritoryScreen(
                TERRITORY,
                CHAT,
                screen.session.milestone_ids(),
                match.directory,
                lambda: screen.session.timeline.head,
                "ssh root@[::1]",
            )
        )
        await pilot.pause()
        body = rendered(app.screen.query_one("#drill-body-text"))
        assert "Model calls (the referee's gateway: last 3 of 3)" in body
        assert "0:05  openai-chat  200  streamed  100 in / 20 out  → shell" in body
        assert SHOWN_HOSTILE in body and f"cut: {CUT}" in body
        text = screen_text(app)
        assert "\x1b" not in text and "pwned" not in text


def test_usage_labels_say_who_measured_and_what_the_adapter_said():
    adapter_only = AgentState(input_tokens=10, output_tokens=2, tokens_known=True)
    assert show.usage_note(adapter_only) == "" and not show.reported_usage_differs(adapter_only)
    same = AgentState(metered=True, input_tokens=10, output_tokens=2, tokens_known=True, reported_input_tokens=10)
    assert show.usage_note(same) == "measured by the referee"
    differs = same.model_copy(update={"reported_input_tokens": 9_000, "reported_output_tokens": 800})
    assert show.usage_note(differs) == "measured by the referee; adapter says 9,000 in / 800 out"
    unmeasured = AgentState(metered=True, reported_cost_microusd=12_000)
    assert show.reported_usage(unmeasured) == "adapter says n/a in / n/a out · $0.0120"
    assert show.reported_usage_differs(unmeasured)


async def test_the_panes_and_the_report_label_measured_usage(tmp_path):
    match = load_match(model_calls_match(tmp_path))
    app = AoeApp(match, clock=ManualSource().now)
    async with app.run_test(size=SIZE) as pilot:
        app.screen.playback.end()
        app.screen.refresh_cursor()
        await pilot.pause()
        panes = {  # the agent part's lines (the panes may be cut to fit the screen)
            pane.territory_id: "\n".join(line.plain for line in pane._parts["agent-status"])
            for pane in app.screen.query(TerritoryPane)
        }
        assert "tokens 1,200 in / 300 out · cost $0.0040" in panes[TERRITORY]
        assert "measured by the referee" in panes[TERRITORY]
        assert "adapter says 9,000 in / 800 out · $0.0095" in panes[TERRITORY]
        assert "measured by the referee" in panes["builder-two"] and "adapter says" not in panes["builder-two"]
        assert "measured by the referee" not in panes["builder-three"]
        await pilot.press("g")
        assert isinstance(app.screen, ReportScreen)
        notes = rendered(app.screen.query_one("#usage-notes"))
        assert f"{CHAT}: usage measured by the referee; adapter says 9,000 in / 800 out · $0.0095" in notes
        assert f"{ANTHROPIC}: usage measured by the referee" in notes and RESPONSES not in notes
