"""The app under test: a saved match opened on a clock the test moves by hand, and what a widget drew."""

from __future__ import annotations

from pathlib import Path

from aoe_tui.app.app import AoeApp
from aoe_tui.store.saved_match import load_match
from aoe_tui.testing.clock import ManualSource

SIZE = (160, 48)  # the terminal most app tests drive the app in


def replay_app(path: Path, clock: ManualSource | None = None) -> AoeApp:
    return AoeApp(load_match(path), clock=(clock or ManualSource()).now)


def rendered(widget) -> str:
    """The widget's lines as the terminal shows them, without styles."""
    return "\n".join(strip.text for strip in widget.render_lines(widget.region.reset_offset))


def screen_text(app) -> str:
    """Everything the app's current screen shows, as the terminal would, without styles."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())
