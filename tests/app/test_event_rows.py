from aoe_tui.app.view.event_rows import EventFilter, EventRows
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineIndex

from tests.fixture_paths import HARNESS


def test_identical_failures_collapse_into_one_growing_stall_row():
    events = load_match(HARNESS).events
    rows = EventRows(TimelineIndex(events), EventFilter())
    stall = next(row for row in list(rows) if row.is_stall and events[row.first_position].territory_id == "builder-one")
    failures = stall.failure_positions
    assert len(failures) >= 10
    assert all(events[p].kind == "milestone_failed" for p in failures)
    # each failed attempt's evaluation_started is folded into the same row
    absorbed = [p for p in stall.positions if p not in failures]
    assert len(absorbed) == len(failures)
    assert all(events[p].kind == "milestone_evaluation_started" for p in absorbed)
    assert rows.cells(stall, stall.first_position)[1] == "milestone_evaluation_started"
    first, second = failures[0], failures[1]
    assert rows.cells(stall, first)[1] == "milestone_failed"  # one failure is just a failure
    assert rows.cells(stall, second)[1] == "stall ×2"
    end_cells = rows.cells(stall, len(events) - 1)
    assert end_cells[1] == f"stall ×{len(failures)}"
    assert "–" in end_cells[0] and "curl" in end_cells[3]
    assert len(list(rows)) < len(events) - len(stall.positions) + 2


def test_visible_rows_are_the_prefix_begun_by_the_cursor():
    events = load_match(HARNESS).events
    rows = EventRows(TimelineIndex(events), EventFilter())
    assert rows.visible(-1) == []
    assert [row.first_position for row in rows.visible(5)] == [0, 1, 2, 3, 4, 5]
    assert rows.visible(len(events) - 1) == list(rows)


def test_filters_combine():
    events = load_match(HARNESS).events
    rows = EventRows(TimelineIndex(events), EventFilter(kind="milestone_passed", territory="builder-three"))
    assert [events[row.first_position].milestone for row in list(rows)] == [
        "service-up",
        "write-read",
        "service-restart",
        "host-reboot",
    ]
    assert list(EventRows(TimelineIndex(events), EventFilter(agent="claux")))
    assert all(
        events[r.first_position].agent_id == "claux"
        for r in list(EventRows(TimelineIndex(events), EventFilter(agent="claux")))
    )
