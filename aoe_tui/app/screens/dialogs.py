"""Small modal dialogs of the live app: confirm a disruptive action, pick an option, wait for teardown."""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from aoe_tui.app.widgets.literal import literal

T = TypeVar("T")


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no before something that cannot be taken back (abort a match, revoke a passed milestone)."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str, detail: str = "") -> None:
        super().__init__()
        self.question, self.detail = question, detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.question, "bold"))
            if self.detail:
                yield Static(Content.styled(self.detail, "$text-muted"))
            yield Static(Content.assemble(("y", "bold $accent"), " yes   ", ("n", "bold $accent"), " / escape no"))

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class PickerScreen(ModalScreen[T | None], Generic[T]):
    """Choose one of a few labelled values (a milestone, and for whom); escape chooses nothing."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel")]

    def __init__(self, title: str, options: list[tuple[str, T]]) -> None:
        super().__init__()
        self.title_text = title
        self.values = [value for _, value in options]
        self.labels = [label for label, _ in options]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.title_text, "bold"))
            yield OptionList(*[Option(literal(label), id=str(i)) for i, label in enumerate(self.labels)])
            yield Static(Content.styled("enter to choose · escape to cancel", "$text-muted"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.values[event.option_index])


class BusyScreen(ModalScreen[None]):
    """Something must finish before the app may go (tearing the guests down); no key dismisses it."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message
        self.detail_text = ""

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Content.styled(self.message, "bold $warning"), id="busy-message")
            yield Static(Content.styled(self.detail_text, "$text-muted"), id="busy-detail")

    def detail(self, text: str) -> None:
        """The step under way; may arrive before the dialog is drawn."""
        self.detail_text = text
        if self.is_mounted:
            self.query_one("#busy-detail", Static).update(Content.styled(text, "$text-muted"))
