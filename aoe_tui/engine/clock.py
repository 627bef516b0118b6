"""The match clock: elapsed match time from an injected monotonic source.

The source is injected so fast tests drive time by hand
(`aoe_tui.testing.clock.ManualSource`) while real matches use
`time.monotonic`. Paused time is never counted and a finished match's clock
stays frozen, so `elapsed_ms` is exactly the time the players had.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class MonotonicSource(Protocol):
    # Virtual time must not run ahead of real work (verifiers are real
    # processes), so the runner settles each tick's evaluations before
    # sleeping on a virtual source.
    virtual: bool

    def now(self) -> float:
        """Seconds from an arbitrary origin; never decreases."""

    async def sleep(self, seconds: float) -> None:
        """Wait `seconds` of this source's time."""


class SystemSource:
    virtual = False

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(seconds, 0.0))


class MatchClock:
    def __init__(self, source: MonotonicSource | None = None) -> None:
        self.source = source or SystemSource()
        self._started_at: float | None = None
        self._paused_at: float | None = None
        self._paused_total = 0.0
        self._frozen_ms: int | None = None

    def start(self) -> None:
        if self._started_at is None:
            self._started_at = self.source.now()

    @property
    def started(self) -> bool:
        return self._started_at is not None

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    @property
    def frozen(self) -> bool:
        return self._frozen_ms is not None

    def elapsed_ms(self) -> int:
        if self._frozen_ms is not None:
            return self._frozen_ms
        if self._started_at is None:
            return 0
        now = self._paused_at if self._paused_at is not None else self.source.now()
        return int((now - self._started_at - self._paused_total) * 1000)

    def pause(self) -> None:
        if self._paused_at is None and not self.frozen:
            self._paused_at = self.source.now()

    def resume(self) -> int:
        """Resume and return how long (ms) the clock stood still."""
        if self._paused_at is None:
            return 0
        stood = self.source.now() - self._paused_at
        self._paused_total += stood
        self._paused_at = None
        return int(stood * 1000)

    def freeze(self) -> int:
        """Stop the clock for good (match over); returns the final elapsed_ms."""
        if self._frozen_ms is None:
            self._frozen_ms = self.elapsed_ms()
        return self._frozen_ms

    async def sleep(self, seconds: float) -> None:
        await self.source.sleep(seconds)
