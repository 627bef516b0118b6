"""One human line per meaningful update, for headless runs (and any log view).

Per-tick noise is dropped: evaluation starts, usage charges, and a milestone
failing again for the same reason it failed last time. What remains reads
like a match report: who passed what, why someone failed, who won. Every
line is cleaned (`clean_text`) before it reaches the operator's terminal, so
a guest cannot retitle or clear it even through a progress message.
"""

from __future__ import annotations

import re

from aoe_tui.domain.clock import format_clock
from aoe_tui.domain.events import EventBase
from aoe_tui.domain.untrusted import clean_text
from aoe_tui.engine.recorder import MatchUpdate, Progress

_SILENT = frozenset({"milestone_evaluation_started", "usage_charged"})
_FRESH_IDS = re.compile(r"(record|opaque)-[0-9a-f]+")


def _gist(detail: str | None) -> str | None:
    """A failure's detail without the fresh record ids each attempt uses: same gist, same failure."""
    return _FRESH_IDS.sub(r"\1-…", detail) if detail else detail


class Narrator:
    def __init__(self) -> None:
        self._last_failure: dict[tuple[str, str], str | None] = {}

    def line(self, update: MatchUpdate) -> str | None:
        if isinstance(update, Progress):
            where = f"{update.territory:<14} " if update.territory else ""
            return clean_text(f"[setup] {where}{update.message}")
        line = self._event_line(update)
        return clean_text(line) if line is not None else None

    def _event_line(self, e: EventBase) -> str | None:
        if e.kind in _SILENT:
            return None
        f = e.to_json()
        text = self._describe(e.kind, f)
        if text is None:
            return None
        return f"[{format_clock(e.elapsed_ms)}] {text}"

    def _describe(self, kind: str, f: dict) -> str | None:
        t = f.get("territory") or ""
        if kind == "milestone_failed":
            key = (t, f["milestone"])
            if self._last_failure.get(key) == _gist(f.get("detail")):
                return None
            self._last_failure[key] = _gist(f.get("detail"))
            return f"{t:<14} {f['milestone']} failed ({f.get('category')}): {f.get('detail')}"
        if kind == "milestone_passed":
            self._last_failure.pop((t, f["milestone"]), None)
            return f"{t:<14} {f['milestone']} passed (+{f['points']})"
        simple = {
            "match_state_changed": lambda: (
                f"match {f['from']} -> {f['to']}" + (f" ({f['reason']})" if f.get("reason") else "")
            ),
            "competitor_state_changed": lambda: f"{t:<14} {f['from']} -> {f['to']}: {f.get('reason')}",
            "territory_registered": lambda: f"{t:<14} registered ({f['class']}, agent {f['agent']})",
            "agent_started": lambda: f"{t:<14} agent {f['agent']} started ({f.get('model')})",
            "milestone_revoked": lambda: f"{t:<14} {f['milestone']} REVOKED: {f.get('reason')}",
            "durable_deployment_completed": lambda: f"{t:<14} DURABLE DEPLOYMENT",
            "match_finished": lambda: f"match finished: winner {f.get('winner') or 'none'} ({f.get('reason')})",
            "post_match_drain_started": lambda: (
                f"drain: waiting up to {f['timeout_ms'] // 1000} s for {f['pending_agents']} agents"
            ),
            "post_match_drain_finished": lambda: (
                f"drain: {f['captured_agents']} captured, {f['terminated_agents']} terminated"
            ),
            "agent_finished": lambda: (
                f"agent {f['agent']} finished ({'success' if f.get('success') else 'no success'}, {f.get('source')}): {f.get('detail')}"
            ),
            "agent_interrupted": lambda: f"agent {f['agent']} interrupted ({f.get('source')}): {f.get('detail')}",
            "agent_outraced": lambda: f"agent {f['agent']} outraced: {f.get('reason')}",
            "agent_terminated": lambda: f"agent {f['agent']} terminated: {f.get('reason')}",
            "usage_rejected": lambda: f"agent {f['agent']} usage not charged: {f.get('detail')}",
            "infrastructure_failure": lambda: f"ARENA FAULT {f['component']}: {f.get('detail')}",
            "match_paused": lambda: "operator paused the match",
            "match_resumed": lambda: f"operator resumed the match after {f.get('paused_ms', 0) / 1000:.1f} s",
            "milestone_paused": lambda: f"operator paused {f['milestone']} for {t or 'every territory'}",
            "milestone_resumed": lambda: f"operator resumed {f['milestone']} for {t or 'every territory'}",
            "milestone_retry_requested": lambda: f"operator asked to retry {f['milestone']} on {t}",
        }
        describe = simple.get(kind)
        return describe() if describe else kind
