"""One human line per meaningful update, for headless runs (and any log view).

A line is the event list's row in words: the match clock, who (`actor`),
the kind, and what happened (`summary`), both from `domain.event_text`, so a
headless run reads like the app. Per-tick noise is dropped: evaluation
starts, usage charges, a milestone failing again for the same reason it
failed last time, and a conquest's every-tick probes and healthy-tick
resources (a probe is a line only when its verdict or detail changes). Every line is cleaned (`clean_text`) before it reaches the
operator's terminal, so a guest cannot retitle or clear it even through a
progress message.
"""

from __future__ import annotations

import re

from aoe_tui.domain import events as ev
from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.event_text import actor, summary
from aoe_tui.domain.untrusted import clean_text
from aoe_tui.engine.recorder import MatchUpdate, Progress

_SILENT = (ev.MilestoneEvaluationStarted, ev.UsageCharged, ev.UsageReported)
_FRESH_IDS = re.compile(r"(record|opaque)-[0-9a-f]+")
ACTOR_WIDTH = 14


def failure_gist(detail: str | None) -> str | None:
    """A failure's detail without the fresh record ids each attempt uses: same gist, same failure
    (a repeated failure is narrated once, with the first attempt's ids)."""
    return _FRESH_IDS.sub(r"\1-…", detail) if detail else detail


class Narrator:
    def __init__(self) -> None:
        self._last_failure: dict[tuple[str, str], str | None] = {}
        self._last_health: dict[str, tuple[bool, str | None]] = {}

    def line(self, update: MatchUpdate) -> str | None:
        if isinstance(update, Progress):
            where = f"{update.territory:<{ACTOR_WIDTH}} " if update.territory else ""
            return clean_text(f"[setup] {where}{update.message}")
        if not self._worth_a_line(update):
            return None
        what = summary(update)
        return clean_text(
            f"[{format_clock(update.elapsed_ms)}] {actor(update):<{ACTOR_WIDTH}} {update.kind}"
            + (f": {what}" if what else "")
        )

    def _worth_a_line(self, event: ev.EventBase) -> bool:
        """Not per-tick noise, and not a milestone failing again the way it failed last time."""
        if isinstance(event, _SILENT):
            return False
        if isinstance(event, ev.MilestoneFailed):
            key, gist = (event.territory, event.milestone), failure_gist(event.detail)
            repeated = key in self._last_failure and self._last_failure[key] == gist
            self._last_failure[key] = gist
            return not repeated
        if isinstance(event, ev.HealthObserved):
            verdict = (event.healthy, event.detail)
            changed = self._last_health.get(event.territory) != verdict
            self._last_health[event.territory] = verdict
            return changed
        if isinstance(event, ev.ResourcesChanged):
            return event.reason != "healthy tick"
        if isinstance(event, ev.MilestonePassed):
            self._last_failure.pop((event.territory, event.milestone), None)
        return True
