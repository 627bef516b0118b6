"""The help screen (`?`): every key of the screen it was opened from, and what the mouse does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

MOUSE_HELP = [
    ("click / drag", "on the scrubber: seek to that moment"),
    ("enter / click", "on an event or tool call: open it in the inspector"),
    ("ctrl+p", "command palette: every action and filter"),
]
MARKER_HELP = "markers: ▲ pass  ✗ failure stall  ▼ revoked  ◆ durable  ⚑ finish  ‖ operator  ! infrastructure"


def screen_bindings(screen: Screen) -> list[Binding]:
    """The screen's own bindings and those it inherits from our screens (a live match screen adds
    steering keys); Textual's generic screen keys are not ours to list."""
    ours = [cls for cls in reversed(type(screen).__mro__) if not cls.__module__.startswith("textual")]
    by_key: dict[str, Binding] = {}
    for cls in ours:
        for binding in cls.__dict__.get("BINDINGS", []):
            if isinstance(binding, Binding):
                by_key[binding.key] = binding  # a subclass re-declaring a key replaces it, in place
    return list(by_key.values())


def binding_title(binding: Binding) -> str:
    """What a key does in full words: the footer may show a shorter description, the tooltip says it all."""
    return binding.tooltip or binding.description


def binding_lines(screen: Screen) -> list[tuple[str, str]]:
    lines = []
    for binding in screen_bindings(screen):
        if isinstance(binding, Binding) and binding.description:
            keys = binding.key_display or binding.key
            lines.append(
                (keys.replace("left_square_bracket", "[").replace("right_square_bracket", "]"), binding_title(binding))
            )
    return lines


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def __init__(self, screen: Screen) -> None:
        super().__init__()
        self.lines = binding_lines(screen) + MOUSE_HELP

    def compose(self) -> ComposeResult:
        width = max(len(keys) for keys, _ in self.lines)
        body = Content("\n").join(
            Content.assemble((keys.ljust(width), "bold $accent"), "  ", description) for keys, description in self.lines
        )
        with Vertical(id="help"):
            yield Static(Content.styled("Keys", "bold"), id="help-title")
            with VerticalScroll():
                yield Static(body)
                yield Static(Content.styled(MARKER_HELP, "$text-muted"))
            yield Static(Content.styled("escape to close", "$text-muted"))
