"""Keeps provider secrets out of everything the harness writes or prints.

Error bodies of some providers echo the Authorization header, and a model can
be talked into printing anything; so instead of trusting each call site, every
byte leaving the harness (files, log lines) passes through one scrubber.
"""

from __future__ import annotations

from typing import Iterable

REDACTED = "[redacted]"
_MIN_SECRET_LENGTH = 4  # shorter "secrets" would redact ordinary words


class Scrubber:
    def __init__(self, secrets: Iterable[str | None]) -> None:
        kept = {s for s in secrets if s and len(s) >= _MIN_SECRET_LENGTH}
        self._secrets = sorted(kept, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return text
