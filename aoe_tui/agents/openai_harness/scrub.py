"""Keeps provider secrets out of everything the harness writes or prints.

Error bodies of some providers echo the Authorization header, and a model can
be talked into printing anything; so instead of trusting each call site, every
byte leaving the harness (files, log lines) passes through one scrubber. It
replaces the exact secret values it was given (what a secret is: `domain.secret_patterns`).
"""

from __future__ import annotations

from collections.abc import Iterable

from aoe_tui.domain.secret_patterns import Redactor


class Scrubber:
    def __init__(self, secrets: Iterable[str | None]) -> None:
        self._redactor = Redactor(secrets, shapes=False)

    def __call__(self, text: str) -> str:
        return self._redactor.text(text)
