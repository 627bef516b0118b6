"""The one place events are made: number them, stamp the match clock, write, fold, tell.

Every event goes through `emit`, so the log on disk, the in-memory world and
what subscribers (the TUI, the headless printer) see can never disagree. The
engine builds each event as its class, unstamped; `emit` gives it its
sequence number and the match clock.
Every string field is cleaned here (`clean_value`): guest and agent text
enters the record through this door, so nothing downstream meets an escape
sequence or an unbounded output. Our own wording is plain text and passes
through unchanged. Progress messages (image check, boot, SSH preflight, agent start) are not
events — they are not part of the match record — but travel the same
subscription so one consumer sees everything in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from collections.abc import Callable

from aoe_tui.domain.events import UNSTAMPED, EventBase
from aoe_tui.domain.reducer import apply_event
from aoe_tui.domain.untrusted import clean_value
from aoe_tui.domain.world import World
from aoe_tui.engine.clock import MatchClock
from aoe_tui.store.event_log import EventLogWriter, LogWriteFailed


@dataclass(frozen=True)
class Progress:
    """A setup step the match record does not keep: `stage` is image, boot, ssh, agent, teardown, match."""

    stage: str
    message: str
    territory: str | None = None


MatchUpdate = EventBase | Progress
Subscriber = Callable[[MatchUpdate], None]
E = TypeVar("E", bound=EventBase)


class MatchRecorder:
    def __init__(self, clock: MatchClock, log_path: Path | None = None) -> None:
        self.clock = clock
        self.world = World()
        self.events: list[EventBase] = []
        self._writer = EventLogWriter(log_path) if log_path is not None else None
        self._subscribers: list[Subscriber] = []
        self.on_log_failure: Callable[[LogWriteFailed], None] = lambda failure: None
        """Told once when the log's file system refuses a write: nothing more can be recorded (the runner stops)."""

    @property
    def log_failure(self) -> LogWriteFailed | None:
        return self._writer.failure if self._writer is not None else None

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Call `subscriber` with every later update; returns the unsubscribe function."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def emit(self, unstamped: E) -> E:
        """Record `unstamped` (an event the engine just built) as the next event, its strings cleaned."""
        if unstamped.sequence != UNSTAMPED or unstamped.elapsed_ms != UNSTAMPED:
            raise ValueError(f"{unstamped.kind} is already stamped (sequence {unstamped.sequence}); emit a new event")
        fields = clean_value(unstamped.to_json())
        event = type(unstamped).model_validate(
            {**fields, "sequence": len(self.events), "elapsed_ms": self.clock.elapsed_ms()}
        )
        if self._writer is not None:
            first = self._writer.failure is None
            try:
                self._writer.append(event)
            except LogWriteFailed as failure:  # the event is not kept anywhere: memory stays the log on disk
                if first:
                    self.on_log_failure(failure)
                raise
        self.events.append(event)
        apply_event(self.world, event)
        self._tell(event)
        return event

    def progress(self, stage: str, message: str, territory: str | None = None) -> None:
        self._tell(Progress(stage, message, territory))

    def _tell(self, update: MatchUpdate) -> None:
        for subscriber in list(self._subscribers):
            subscriber(update)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
