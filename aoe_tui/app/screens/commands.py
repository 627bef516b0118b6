"""The command palette: every action of the current screen, plus the event filters.

Bindings carry descriptions, so the palette lists the same words the footer
and the help screen use; actions the screen disables right now are left out; filters add one command per kind, territory and
agent because cycling through twenty kinds by key is slow.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.actions import parse
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.screen import Screen

from aoe_tui.app.screens.help_screen import binding_title, screen_bindings
from aoe_tui.app.widgets.literal import literal


def _enabled(screen: Screen, binding: Binding) -> bool:
    """A disabled action (no steering once the match is over) is left out, not offered to fail."""
    _, name, parameters = parse(binding.action)
    return bool(screen.check_action(name, parameters))


def _highlight(matcher: Matcher, title: str) -> Content:
    """`Matcher.highlight` parses the title as markup; a filter names an event kind from the log."""
    content = literal(title)
    _, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if offset < len(content) and not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


@runtime_checkable
class FilteredScreen(Protocol):
    """A screen whose events can be filtered (the match screens): the palette offers one command per value."""

    def filter_options(self, field: str) -> list[str]: ...

    def set_filter(self, **changes: str | None) -> None: ...


class MatchCommands(Provider):
    def _commands(self) -> list[tuple[str, Callable[[], object]]]:
        screen = self.screen
        commands: list[tuple[str, Callable[[], object]]] = [
            (binding_title(binding), partial(screen.call_later, screen.run_action, binding.action))
            for binding in screen_bindings(screen)
            if binding.description and _enabled(screen, binding)
        ]
        if isinstance(screen, FilteredScreen):
            for field in ("kind", "territory", "agent"):
                for option in screen.filter_options(field):
                    commands.append(
                        (f"Filter events: {field} = {option}", partial(screen.set_filter, **{field: option}))
                    )
        return commands

    async def discover(self) -> Hits:
        for title, command in self._commands():
            yield DiscoveryHit(literal(title), command, text=title)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, command in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, _highlight(matcher, title), command, text=title)
