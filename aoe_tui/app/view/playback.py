"""The replay cursor: where in the match we are, and how playback moves it.

The cursor is an event position plus a clock time: several events share one
millisecond (a tick evaluates every territory at once), so stepping goes by
position, while playing and seeking go by time. Time comes from an injected
clock so tests play a match deterministically. Nothing here knows Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from aoe_tui.store.markers import Marker
from aoe_tui.store.timeline import TimelineIndex

SPEEDS = (1, 5, 20, 60)
JUMP_MS = 10_000
END_OF_TIME_MS = 2**62


@dataclass
class Playback:
    timeline: TimelineIndex
    clock: Callable[[], float]
    position: int = -1
    elapsed_ms: int = 0
    playing: bool = False
    speed: int = SPEEDS[0]
    following: bool = False
    _last_tick: float | None = None

    @property
    def duration_ms(self) -> int:
        return self.timeline.duration_ms

    @property
    def last_position(self) -> int:
        return len(self.timeline) - 1

    @property
    def at_end(self) -> bool:
        return self.position >= self.last_position and self.elapsed_ms >= self.duration_ms

    @property
    def activity_horizon_ms(self) -> int:
        """Tool calls shown at the cursor happened by this time.

        The match clock freezes at the finish while agents keep working through
        the post-match drain, so at the end of the timeline every recorded call
        has happened, even those timed after the frozen clock.
        """
        return self.elapsed_ms if self.position < self.last_position else END_OF_TIME_MS

    def go_to_position(self, position: int) -> None:
        self.position = max(-1, min(position, self.last_position))
        self.elapsed_ms = self.timeline.elapsed_at(self.position) if self.position >= 0 else 0
        self.following = self.position == self.last_position

    def go_to_time(self, elapsed_ms: int) -> None:
        self.elapsed_ms = max(0, min(elapsed_ms, self.duration_ms))
        self.position = self.timeline.position_at_time(self.elapsed_ms)
        self.following = self.position == self.last_position and self.elapsed_ms == self.duration_ms

    def step(self, delta: int) -> None:
        self.go_to_position(self.position + delta)

    def jump(self, delta_ms: int) -> None:
        self.go_to_time(self.elapsed_ms + delta_ms)

    def home(self) -> None:
        self.go_to_position(-1)

    def end(self) -> None:
        self.go_to_position(self.last_position)

    def next_marker(self, markers: list[Marker]) -> Marker | None:
        marker = next((m for m in markers if m.position > self.position), None)
        if marker is not None:
            self.go_to_position(marker.position)
        return marker

    def previous_marker(self, markers: list[Marker]) -> Marker | None:
        marker = next((m for m in reversed(markers) if m.position < self.position), None)
        if marker is not None:
            self.go_to_position(marker.position)
        return marker

    def cycle_speed(self) -> int:
        self.speed = SPEEDS[(SPEEDS.index(self.speed) + 1) % len(SPEEDS)]
        return self.speed

    def toggle(self) -> bool:
        """Play from where we are (from the start if at the end), or pause."""
        if not self.playing and self.at_end:
            self.home()
        self.playing = not self.playing
        self._last_tick = self.clock() if self.playing else None
        return self.playing

    def tick(self) -> bool:
        """Advance by the clock time since the last tick times the speed; True when the cursor moved."""
        if not self.playing:
            return False
        now = self.clock()
        last, self._last_tick = self._last_tick if self._last_tick is not None else now, now
        advance = int((now - last) * 1000 * self.speed)
        if advance <= 0:
            return False
        self.go_to_time(self.elapsed_ms + advance)
        if self.elapsed_ms >= self.duration_ms:
            self.go_to_position(self.last_position)
            self.playing = False
        return True
