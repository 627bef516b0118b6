from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.view.tool_calls import ToolCall, ToolCallIndex
from aoe_tui.store.saved_match import load_match

from tests.fixture_paths import HARNESS, PRIMARY_FAILOVER


def call(at_ms: int, duration_ms: int = 1000) -> ToolCall:
    return ToolCall("a", 0, at_ms, duration_ms, "discovery", "look", "ls", True, "", None)


def test_calls_are_placed_on_the_match_clock_from_the_analysis():
    session = MatchSession(load_match(HARNESS))
    calls = session.tool_calls["claux"].calls
    analysis = session.analyses["claux"]
    assert len(calls) == len(analysis.actions)
    assert calls[0].at_ms == session.start_ms["claux"] + analysis.actions[0].started_after_ms
    assert [c.at_ms for c in calls] == sorted(c.at_ms for c in calls)


def test_transcript_entries_give_full_input_and_output():
    session = MatchSession(load_match(PRIMARY_FAILOVER))
    calls = session.tool_calls["luna-failover-engineer"].calls
    detail = calls[0].detail_json()
    assert (
        calls[0].entry is not None
        and calls[0].entry.id == session.analyses["luna-failover-engineer"].actions[0].tool_id
    )
    assert "input" in detail["tool"] and "output" in detail["tool"]


def test_latest_and_quiet_time_at_a_moment():
    index = ToolCallIndex([call(1000), call(5000), call(30_000)])
    assert [c.at_ms for c in index.latest(6000, 3)] == [1000, 5000]
    assert index.quiet_ms(6000, since_ms=0) == 0  # the 5 s call still runs until 6 s
    assert index.quiet_ms(20_000, since_ms=0) == 14_000
    assert ToolCallIndex([]).quiet_ms(12_000, since_ms=2000) == 10_000
