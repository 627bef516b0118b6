"""The cycle collector and a match screen: the match's objects out of its sight, its full collections out of
the screen's frames.

Every object alive once a match is read (the match's, millions at 10^6 events) stays for the screen's life:
frozen out of the collector's sight (`settle`), a full collection walks only what frames allocate. Unfrozen,
one came every few frames and took 140 ms at 10^5 events (seconds at 10^6). They are garbage once the screen
goes: back in the collector's sight then (`release`), or every match opened in one session (the browser, a
series) would stay in memory for good.

Python runs a full collection when enough objects have outlived the young ones' collections, wherever the
program is. Even with the match's objects frozen, a full collection walks every widget, cached line and message the app keeps: 15-30 ms,
and landing inside a frame (a step, End, a 60x playback tick), it doubled that frame. While a match screen
is shown, full collections wait (their threshold is raised) and one runs when frames were drawn since the
last and none for `QUIET_S`, or at the latest `LONGEST_WAIT_S` after the last (a live screen draws every
second: it is never that quiet); it runs on the screen's timer, between frames, never inside one, and only
once Python itself would have run one (`full_collection_due`): a full collection walks the whole heap, and
one after every quiet second would be more than Python's own policy runs, for no more garbage. The young
generations are collected as usual, so short-lived cycles still go at once. The thresholds come back when
the last match screen goes.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

QUIET_S = 1.0  # no frame for this long: the screen is idle and a full collection may run
LONGEST_WAIT_S = 20.0  # frames drawn without a pause this long: the collection runs anyway
CHECK_EVERY_S = 1.0  # how often the screen asks
POSTPONED = 1_000_000  # young collections between full ones: in effect, only the idle ones run

_holders = 0
_thresholds: tuple[int, int, int] | None = None


class IdleCollector:
    """One per match screen: `hold` on mount, `settle` once its match is read, `frame_drawn` at each frame,
    `check` on a timer, `release` on unmount."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last_frame: float | None = None  # a frame drawn since the last full collection, at this time
        self._first_frame: float | None = None  # the first frame drawn since the last full collection
        self._holding = False

    def hold(self) -> None:
        """Postpone full collections (until the last holder releases)."""
        global _holders, _thresholds
        if self._holding:
            return
        self._holding = True
        if _holders == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], POSTPONED)
        _holders += 1

    @staticmethod
    def settle() -> None:
        """Freeze every object alive now out of the collector's sight (the match's, for the screen's life)."""
        gc.freeze()

    def release(self) -> None:
        """The frozen objects back in the collector's sight; full collections as before once the last holder
        releases."""
        gc.unfreeze()
        global _holders, _thresholds
        if not self._holding:
            return
        self._holding = False
        _holders -= 1
        if _holders == 0 and _thresholds is not None:
            gc.set_threshold(*_thresholds)
            _thresholds = None

    def frame_drawn(self) -> None:
        self._last_frame = self._clock()
        if self._first_frame is None:
            self._first_frame = self._last_frame

    def check(self) -> bool:
        """Run the postponed full collection if frames were drawn since the last and the screen is quiet now, or
        they have been drawn for `LONGEST_WAIT_S`; True if it ran."""
        if self._last_frame is None or self._first_frame is None:
            return False
        now = self._clock()
        if now - self._last_frame < QUIET_S and now - self._first_frame < LONGEST_WAIT_S:
            return False
        if not full_collection_due():
            return False
        self._last_frame = self._first_frame = None
        gc.collect()
        return True


def full_collection_due() -> bool:
    """As many young collections since the last full one as Python's own threshold waits for (the threshold
    `hold` put aside): before that, Python would not have run a full collection either."""
    threshold = _thresholds[2] if _thresholds is not None else gc.get_threshold()[2]
    return gc.get_count()[2] >= threshold
