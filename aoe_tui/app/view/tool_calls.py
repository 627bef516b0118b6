"""Each agent's observable tool calls, placed on the match clock.

Harnesses time tool calls from the agent's own start; the referee's clock
starts with the match. An agent's calls are shifted by its `agent_started`
event so the feed, the panes and the scrubber agree on "when". The kinds come
from the analysis (`match_analyses`: the transcript re-analyzed when there
is one, the stored analysis otherwise); the transcript adds full input/output.
"""

from __future__ import annotations

import bisect
import itertools
import json
from dataclasses import dataclass
from typing import Any

from aoe_tui.domain.analysis import Analysis, AnalysisAction
from aoe_tui.domain.transcript import ToolTraceEntry
from aoe_tui.store.saved_match import SavedMatch


@dataclass(frozen=True)
class ToolCall:
    agent: str
    index: int
    at_ms: int
    duration_ms: int | None
    kind: str
    description: str
    command: str
    success: bool | None
    output_excerpt: str
    entry: ToolTraceEntry | None

    @property
    def ended_ms(self) -> int:
        return self.at_ms + (self.duration_ms or 0)

    def detail_json(self) -> dict[str, Any]:
        """Everything known about the call, full input and output when the transcript has them."""
        detail: dict[str, Any] = {
            "agent": self.agent,
            "index": self.index,
            "at_ms": self.at_ms,
            "duration_ms": self.duration_ms,
            "kind": self.kind,
            "description": self.description,
            "command": self.command,
            "success": self.success,
        }
        if self.entry is not None:
            detail["tool"] = self.entry.model_dump(mode="json", exclude_none=True)
        else:
            detail["output_excerpt"] = self.output_excerpt
        return detail


def _command_of(entry: ToolTraceEntry | None) -> str:
    if entry is None or not isinstance(entry.input, dict):
        return ""
    for key in ("command", "cmd", "file_path", "path", "filePath"):
        if entry.input.get(key):
            return str(entry.input[key])
    return json.dumps(entry.input, ensure_ascii=False)[:200]


def _call(agent_id: str, start_ms: int, action: AnalysisAction, entry: ToolTraceEntry | None) -> ToolCall:
    started = (
        action.started_after_ms
        if action.started_after_ms is not None
        else (entry.started_after_ms if entry is not None else None) or 0
    )
    return ToolCall(
        agent=agent_id,
        index=action.index,
        at_ms=start_ms + started,
        duration_ms=action.duration_ms,
        kind=str(action.kind),
        description=action.description or (entry.name if entry else "") or "",
        command=action.command or _command_of(entry),
        success=action.success,
        output_excerpt=action.output_excerpt or "",
        entry=entry,
    )


def agent_tool_calls(match: SavedMatch, agent_id: str, analysis: Analysis, start_ms: int) -> list[ToolCall]:
    """Calls sorted by match time; the analysis decides which calls were observable."""
    trace = match.tool_trace(agent_id)
    calls = [
        _call(agent_id, start_ms, action, trace[action.index] if 0 <= action.index < len(trace) else None)
        for action in analysis.actions
    ]
    return sorted(calls, key=lambda call: (call.at_ms, call.index))


class ToolCallIndex:
    """One agent's calls with "what had happened by time t" answered by bisection."""

    def __init__(self, calls: list[ToolCall]) -> None:
        self._index(calls)

    def _index(self, calls: list[ToolCall]) -> None:
        self.calls = calls
        self._times = [call.at_ms for call in calls]
        # The latest end among the first n calls, for each n: every pane asks at every frame.
        self._ended_by = list(itertools.accumulate((call.ended_ms for call in calls), max))

    def extend(self, calls: list[ToolCall]) -> None:
        """Calls that arrived live; kept in time order so "what happened by t" stays a prefix."""
        self._index(sorted(self.calls + calls, key=lambda call: (call.at_ms, call.index)))

    def count_at(self, elapsed_ms: int) -> int:
        return bisect.bisect_right(self._times, elapsed_ms)

    def latest(self, elapsed_ms: int, limit: int) -> list[ToolCall]:
        count = self.count_at(elapsed_ms)
        return self.calls[max(count - limit, 0) : count]

    def quiet_ms(self, elapsed_ms: int, since_ms: int) -> int:
        """How long nothing observable happened before `elapsed_ms` (since the agent started if never)."""
        count = self.count_at(elapsed_ms)
        last_seen = self._ended_by[count - 1] if count else since_ms
        return max(elapsed_ms - max(last_seen, since_ms), 0)
