"""Agents' tool calls as they happen: tail each adapter's live `tool_trace.jsonl`.

Adapters append one JSON line per finished call (docs/adapters.md). Only complete
lines are taken (the adapter may be mid-append) and each file is read from
where the last poll stopped. New calls are classified by the same analyzer a
replay uses, so a call looks the same live and afterwards.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from aoe_tui.analysis.analyzer import analyze
from aoe_tui.domain.transcript import ToolTraceEntry, Transcript
from aoe_tui.app.view.session import MatchSession
from aoe_tui.app.view.tool_calls import agent_tool_calls
from aoe_tui.store.match_layout import MatchLayout


class TraceTail:
    """The complete lines appended to one JSONL file since the last read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def read_new(self) -> list[ToolTraceEntry]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        entries = []
        for line in data[:end].splitlines():
            if not line.strip():
                continue
            try:
                entries.append(ToolTraceEntry.model_validate_json(line))
            except ValidationError:
                continue  # a broken line must not stop the live feed; the saved-match loader reports it
        return entries


class LiveToolCalls:
    def __init__(self, session: MatchSession, match_dir: Path) -> None:
        self.session = session
        self.tails = {
            agent: TraceTail(MatchLayout(Path(match_dir)).agent(agent).tool_trace) for agent in session.match.agents
        }

    def poll(self) -> bool:
        """Fold new calls into the session's tool-call indexes; True when any arrived."""
        grew = False
        for agent, tail in self.tails.items():
            new = tail.read_new()
            if not new:
                continue
            match = self.session.match
            trace = match.live_tool_traces.setdefault(agent, [])
            known = len(trace)
            trace.extend(new)
            info = match.agents[agent]
            analysis = analyze(Transcript(model=info.model, tool_trace=trace), agent, info.territory)
            self.session.analyses[agent] = analysis
            calls = agent_tool_calls(match, agent, analysis, self.session.start_ms.get(agent, 0))
            self.session.tool_calls[agent].extend([call for call in calls if call.index >= known])
            grew = True
        return grew
