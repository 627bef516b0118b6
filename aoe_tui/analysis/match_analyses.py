"""Which analysis to show for each agent of a saved match.

A transcript (final, else the live tool trace) is re-analyzed with our
analyzer, which is more accurate than what older matches stored; a stored
analysis is used only when the match kept no transcript for that agent. The
CLI and the app both ask here so they never disagree.
"""

from __future__ import annotations

from aoe_tui.analysis.analyzer import analyze
from aoe_tui.domain.analysis import Analysis
from aoe_tui.domain.transcript import Transcript
from aoe_tui.store.saved_match import SavedMatch


def match_analyses(match: SavedMatch) -> dict[str, tuple[Analysis, str]]:
    """agent -> (analysis, where it came from), sorted by agent id."""
    found: dict[str, tuple[Analysis, str]] = {}
    agents = sorted(set(match.transcripts) | set(match.live_tool_traces) | set(match.analyses))
    for agent in agents:
        info = match.agents.get(agent)
        territory = info.territory if info else None
        transcript = match.transcripts.get(agent)
        if transcript is None and match.live_tool_traces.get(agent):
            transcript = Transcript(model=info.model if info else None, tool_trace=match.live_tool_traces[agent])
            source = "live tool trace"
        else:
            source = "transcript"
        if transcript is not None:
            found[agent] = (analyze(transcript, agent, territory), source)
        else:
            stored = match.analyses[agent]
            found[agent] = (stored, f"stored analysis by {stored.analyzer or 'an unknown analyzer'}")
    return found
