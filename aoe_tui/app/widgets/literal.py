"""Player text on screen: always shown as the characters it is, never as markup or as a terminal command.

A service may answer `[/]`, an agent may run `ls [/usr/bin]`: Textual parses
a plain `str` given to a `Static`, a `DataTable` cell, a tab or option label or
a border title as markup, and such text raised `MarkupError` and killed the
app. So every widget that can show player text gets `literal(...)` (a
`Content`, which is never parsed) or is a `LiteralTable`, and the app's line
filter (`NoControlCharacters`) drops any control character that still reaches
a rendered line, so no escape sequence of a crafted match ever reaches the
operator's terminal.
"""

from __future__ import annotations

import re

from rich.segment import Segment
from rich.text import Text
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

from aoe_tui.domain.untrusted import DEFAULT_LIMIT, clean_text

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def literal(text: object, limit: int = DEFAULT_LIMIT) -> Content:
    """`text` cleaned of escapes and controls, as content that is never parsed for markup."""
    return Content(clean_text(text, limit))


def literal_cell(value: object) -> object:
    """A table cell: text is shown literally (DataTable would parse a str as markup); numbers as they are."""
    return Text(clean_text(value), end="", no_wrap=True) if isinstance(value, str) else value


class LiteralTable(DataTable):
    """A DataTable whose str cells are text, not markup; every table of the app shows player text."""

    def add_row(self, *cells, **kwargs):
        return super().add_row(*map(literal_cell, cells), **kwargs)

    def update_cell(self, row_key, column_key, value, *, update_width: bool = False) -> None:
        super().update_cell(row_key, column_key, literal_cell(value), update_width=update_width)

    def update_cell_at(self, coordinate, value, *, update_width: bool = False) -> None:
        super().update_cell_at(coordinate, literal_cell(value), update_width=update_width)


def row_name(key: RowKey) -> str:
    """The key a row was added with: every table whose rows can be selected names them (`add_row(key=...)`)."""
    if key.value is None:
        raise ValueError("a selectable row was added without a key")
    return key.value


class NoControlCharacters(LineFilter):
    """The last line of defence: control characters never reach the terminal, whatever widget drew them."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(_CONTROL.search(segment.text) for segment in segments if not segment.control):
            return segments
        return [
            segment if segment.control else Segment(_CONTROL.sub("", segment.text), segment.style)
            for segment in segments
        ]
