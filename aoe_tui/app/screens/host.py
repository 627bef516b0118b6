"""What the screens ask of the app that shows them, as a type.

Textual types a screen's `self.app` as a plain `App`; our screens also read the app's injected clock and
ask it to open a match (`AoeApp` and its live and series kinds provide both). The app imports the screens,
so the screens cannot import the app back: they name the two things they use here, and `host` checks the
running app has them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from textual.app import App

from aoe_tui.store.saved_match import SavedMatch


@runtime_checkable
class MatchHost(Protocol):
    clock: Callable[[], float]

    def open_match(self, match: SavedMatch) -> None: ...


def host(app: App[object]) -> MatchHost:
    """The running app as the screens use it; an app without a clock or `open_match` is a programming error."""
    if not isinstance(app, MatchHost):
        raise TypeError(f"{type(app).__name__} cannot host aoe's screens: it has no clock or open_match")
    return app
