"""Repainting a `Static` without a layout pass when its size cannot have changed.

`Static.update` lays the whole screen out again by default. At every cursor step the header's clock and
the panes' texts change, and that layout pass (every widget arranged and re-rendered) was most of a
0.25-0.8 s frame at 10^6 events. The app's Statics take their width from their container and never
wrap, so only a changed number of lines can change one's size: only then is a layout asked for.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def line_count(content: object) -> int:
    return str(content).count("\n") + 1


def repaint(static: Static, content: Content) -> None:
    """Show `content`; lay out again only if the number of lines changed (or nothing was shown yet)."""
    shown = static.content
    static.update(content, layout=not isinstance(shown, Content) or line_count(shown) != line_count(content))
