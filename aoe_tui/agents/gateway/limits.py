"""Bounds on what one agent may ask of the gateway: sizes, times, rates.

A hostile harness may send a huge body, trickle one byte a second, open a
thousand requests at once; a hostile upstream may answer without end. Each
bound turns that into a refusal or a cut exchange, never a stuck referee.
"""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class GatewayLimits:
    max_request_bytes: int = 32 * 1024 * 1024
    max_response_bytes: int = 64 * 1024 * 1024
    request_read_s: float = 60.0  # the whole request body, however slowly it comes
    connect_s: float = 30.0
    first_byte_s: float = 600.0  # a reasoning model may think for minutes before its first byte
    exchange_s: float = 1800.0  # a whole exchange, streamed or not
    concurrent_per_agent: int = 8
    rate_per_s: float = 20.0  # requests per second per agent, sustained
    burst: int = 40
    record_field_chars: int = 64 * 1024  # a string of a model-call record, after which it is cut
    record_bytes: int = 1024 * 1024  # a whole model-call record, past which its request is left out


class TokenBucket:
    """At most `burst` requests at once, refilled at `rate` per second."""

    def __init__(self, rate: float, burst: int, now: float | None = None) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at = time.monotonic() if now is None else now

    def take(self, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True
