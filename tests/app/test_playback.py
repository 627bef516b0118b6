from aoe_tui.app.view.playback import SPEEDS, Playback
from aoe_tui.store.markers import find_markers
from aoe_tui.store.saved_match import load_match
from aoe_tui.store.timeline import TimelineIndex

from tests.fixture_paths import HARNESS
from aoe_tui.testing.clock import ManualSource


def make_playback(clock: ManualSource | None = None) -> Playback:
    return Playback(TimelineIndex(load_match(HARNESS).events), clock=(clock or ManualSource()).now)


def test_steps_go_by_event_and_time_follows_the_event():
    playback = make_playback()
    playback.step(20)
    assert playback.position == 19
    assert playback.elapsed_ms == playback.timeline.events[19].elapsed_ms
    playback.step(-100)
    assert (playback.position, playback.elapsed_ms) == (-1, 0)


def test_jump_goes_by_time_and_stops_at_both_ends():
    playback = make_playback()
    playback.jump(10_000)
    assert playback.elapsed_ms == 10_000
    assert playback.timeline.events[playback.position].elapsed_ms <= 10_000
    assert playback.timeline.events[playback.position + 1].elapsed_ms > 10_000
    playback.jump(10**9)
    assert playback.elapsed_ms == playback.duration_ms and playback.following
    playback.jump(-(10**9))
    assert playback.elapsed_ms == 0


def test_markers_are_visited_in_order_both_ways():
    playback = make_playback()
    markers = find_markers(playback.timeline.events)
    visited = []
    while (marker := playback.next_marker(markers)) is not None:
        visited.append(marker.position)
    assert visited == sorted({m.position for m in markers})
    assert playback.previous_marker(markers).position == visited[-2]


def test_speed_cycles_through_every_speed():
    playback = make_playback()
    assert [playback.cycle_speed() for _ in SPEEDS] == [5, 20, 60, 1]


def test_playing_advances_by_clock_time_times_speed_and_stops_at_the_end():
    clock = ManualSource()
    playback = make_playback(clock)
    playback.cycle_speed()  # 5x
    playback.toggle()
    clock.advance(2.0)
    assert playback.tick()
    assert playback.elapsed_ms == 10_000
    clock.advance(60.0)
    playback.tick()
    assert playback.at_end and not playback.playing
    playback.toggle()  # playing again from the end starts over
    assert playback.playing and playback.position == -1
