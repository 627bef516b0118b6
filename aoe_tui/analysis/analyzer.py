"""Turn a transcript into an `Analysis`: one classified action per observable tool call.

Pure and deterministic: the same transcript always yields the same analysis,
identified by the transcript's `source_sha256`, so a stored analysis can be
checked against its transcript and recomputed by a newer analyzer.
"""

from __future__ import annotations

import json
from typing import Any

from aoe_tui import __version__
from aoe_tui.analysis.effects import Effect
from aoe_tui.analysis.tampering import tampering_of
from aoe_tui.analysis.tool_calls import command_text, description, is_observable, shell_script, tool_effect
from aoe_tui.domain.analysis import (
    ActionKind,
    Analysis,
    AnalysisAction,
    AnalysisArchitecture,
    AnalysisMetrics,
)
from aoe_tui.domain.transcript import Transcript

ANALYZER = f"aoe_tui/{__version__}"
# The earlier analyzer's limits: enough to recognise a command or an error, small enough to store per match.
EXCERPT_CHARS = 280
COMMAND_CHARS = 700


def analyze(transcript: Transcript, agent: str | None, territory: str | None) -> Analysis:
    actions: list[AnalysisAction] = []
    seen = Effect()
    for index, entry in enumerate(transcript.tool_calls):
        if not is_observable(entry):
            continue
        effect = tool_effect(entry)
        success = not entry.is_error
        if success:
            seen.merge(effect)
        else:
            # A failed call proves nothing was built, but it still shows what the agent was working with.
            seen.service_units |= effect.service_units
            seen.technologies |= effect.technologies
        actions.append(
            AnalysisAction(
                index=index,
                tool_id=entry.id,
                kind=effect.kind,
                started_after_ms=entry.started_after_ms,
                duration_ms=entry.duration_ms,
                description=description(entry),
                command=_cut(command_text(entry), COMMAND_CHARS),
                success=success,
                output_excerpt=output_excerpt(entry.output),
                tampering=tampering_of(shell_script(entry), effect),
            )
        )
    return Analysis(
        schema_version=1,
        analyzer=ANALYZER,
        source_sha256=transcript.sha256(),
        agent=agent,
        territory=territory,
        model=transcript.model,
        outcome=transcript.outcome.status if transcript.outcome else None,
        metrics=_metrics(actions),
        architecture=AnalysisArchitecture(
            technologies=sorted(seen.technologies),
            service_units=sorted(seen.service_units),
            persistent_paths=sorted(seen.written_paths),
        ),
        actions=actions,
    )


def _metrics(actions: list[AnalysisAction]) -> AnalysisMetrics:
    def count(kind: ActionKind) -> int:
        return sum(1 for action in actions if action.kind is kind)

    mutation_starts = [
        a.started_after_ms for a in actions if a.kind is ActionKind.MUTATION and a.started_after_ms is not None
    ]
    observed_ends = [a.started_after_ms + (a.duration_ms or 0) for a in actions if a.started_after_ms is not None]
    return AnalysisMetrics(
        tool_calls=len(actions),
        tool_errors=sum(1 for action in actions if not action.success),
        discoveries=count(ActionKind.DISCOVERY),
        mutations=count(ActionKind.MUTATION),
        lifecycle_actions=count(ActionKind.LIFECYCLE),
        validations=count(ActionKind.VALIDATION),
        # Tool calls can run in parallel and be logged out of order: the earliest change is the minimum.
        first_mutation_after_ms=min(mutation_starts, default=None),
        last_observed_after_ms=max(observed_ends, default=None),
    )


def output_excerpt(output: Any) -> str | None:
    """The start of a tool's output, trimmed, with `…` when cut; None when there was no output."""
    if output is None:
        return None
    text = (output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)).strip()
    return _cut(text, EXCERPT_CHARS) if text else None


def _cut(text: str, limit: int) -> str:
    return text[:limit] + "…" if len(text) > limit else text
