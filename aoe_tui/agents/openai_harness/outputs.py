"""The files one run leaves behind: usage checkpoint, live tool trace, transcripts, result."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aoe_tui.agents.openai_harness.files import JsonlFeed, write_json_atomic
from aoe_tui.agents.openai_harness.scrub import Scrubber
from aoe_tui.agents.openai_harness.settings import HarnessSettings
from aoe_tui.agents.openai_harness.usage import UsageTotals

STATUSES = ("completed", "failed", "unavailable", "timed_out", "interrupted", "budget_exceeded", "harness_error")


@dataclass(frozen=True)
class Outcome:
    status: str
    summary: str
    source: str | None = None  # who is to blame when not completed: player, provider, arena, controller, harness


class RunOutputs:
    def __init__(self, settings: HarnessSettings, scrub: Scrubber) -> None:
        self.settings = settings
        self._scrub = scrub
        self.trace = JsonlFeed(settings.tool_trace_file, scrub)

    def usage(self, totals: UsageTotals) -> None:
        write_json_atomic(self.settings.usage_file, totals.checkpoint(self.settings.agent_id), self._scrub)

    def tool_call(self, entry: dict[str, Any]) -> None:
        self.trace.append(entry)

    def live_transcript(self, document: dict[str, Any]) -> None:
        write_json_atomic(self.settings.live_transcript_file, document, self._scrub)

    def final(self, outcome: Outcome, totals: UsageTotals, transcript: dict[str, Any]) -> None:
        """Transcript first, result last: a result.json on disk means the run's files are complete."""
        write_json_atomic(self.settings.live_transcript_file, transcript, self._scrub)
        write_json_atomic(self.settings.transcript_file, transcript, self._scrub)
        self.usage(totals)
        write_result(
            self.settings,
            outcome,
            totals.result_usage(),
            self._scrub,
            transcript=_relative(self.settings.transcript_file, self.settings.result_file.parent),
        )


def write_result(
    settings: HarnessSettings, outcome: Outcome, usage: dict[str, Any], scrub: Scrubber, transcript: str | None
) -> None:
    assert outcome.status in STATUSES, outcome.status
    write_json_atomic(
        settings.result_file,
        {
            "schema_version": 1,
            "agent": settings.agent_id,
            "territory": settings.territory_id,
            "status": outcome.status,
            "summary": outcome.summary,
            "source": outcome.source,
            "usage": usage,
            "transcript": transcript,
        },
        scrub,
    )


def _relative(path: Path, base: Path) -> str:
    try:
        return os.path.relpath(path, base) if path.is_relative_to(base) else str(path)
    except ValueError:
        return str(path)
