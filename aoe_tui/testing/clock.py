"""The one fake clock of the tests: virtual time behind the engine's `MonotonicSource` protocol.

`sleep` moves it at once and `advance` moves it by hand, so a test decides
exactly how much time passed. A `limit` holds it there: a sleep that would
pass the limit waits (real time, polling) until the test raises it, and
`held` says it is waiting. The runner settles every tick's verifications
before sleeping on a virtual source, so whatever a live screen shows at a
given limit is the same on every run. The app's clock is any `() -> float`:
tests give it `ManualSource().now`.
"""

from __future__ import annotations

import asyncio
import math

HOLD_POLL_S = 0.01


class ManualSource:
    virtual = True

    def __init__(self, start: float = 0.0, limit: float = math.inf) -> None:
        self._now = start
        self.limit = limit
        self.held = False

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += max(seconds, 0.0)

    async def sleep(self, seconds: float) -> None:
        target = self._now + max(seconds, 0.0)
        while target > self.limit:
            self._now = max(self._now, self.limit)
            self.held = True
            await asyncio.sleep(HOLD_POLL_S)
        self.held = False
        self._now = max(self._now, target)
        await asyncio.sleep(0)
