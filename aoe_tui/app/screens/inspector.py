"""The inspector: raw JSON of an event (or a stall's events) or a tool call's full input and output."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from aoe_tui.app.widgets.literal import literal

# A stall of hundreds of failures is long but must still show whole; a runaway tool output is cut.
INSPECTOR_LIMIT = 1_000_000


class InspectorScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,enter", "dismiss", "Close")]

    def __init__(self, title: str, payload: Any) -> None:
        super().__init__()
        self.title_text = title
        self.payload = payload

    def compose(self) -> ComposeResult:
        with Vertical(id="inspector"):
            yield Static(Content.styled(self.title_text, "bold"), id="inspector-title")
            with VerticalScroll(id="inspector-body"):
                yield Static(
                    literal(json.dumps(self.payload, indent=2, ensure_ascii=False), INSPECTOR_LIMIT),
                    id="inspector-json",
                )
            yield Static(Content.styled("escape to close", "$text-muted"))
