"""`aoe analyze PATH [--json]`: how each agent of a saved match fought.

A transcript (final, else the live tool trace) is re-analyzed with our
analyzer, which is more accurate than what older matches stored; a stored
analysis is shown only when the match kept no transcript for that agent.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from aoe_tui.analysis.match_analyses import match_analyses
from aoe_tui.analysis.tampering import tampering_summary
from aoe_tui.domain.analysis import Analysis
from aoe_tui.domain.clock import format_clock
from aoe_tui.store.saved_match import load_match

COMMAND_PREVIEW_CHARS = 100


def analysis_lines(agent: str, analysis: Analysis, source: str) -> list[str]:
    metrics, architecture = analysis.metrics, analysis.architecture
    lines = [
        f"{agent}  territory {analysis.territory or '—'}  model {analysis.model or '—'}  "
        f"outcome {analysis.outcome or '—'}  ({source})",
        "  tool calls  errors  discovery  changes  lifecycle  checks  first change  last observed",
        f"  {metrics.tool_calls:>10}  {metrics.tool_errors:>6}  {metrics.discoveries:>9}  {metrics.mutations:>7}  "
        f"{metrics.lifecycle_actions:>9}  {metrics.validations:>6}  {format_clock(metrics.first_mutation_after_ms):>12}  "
        f"{format_clock(metrics.last_observed_after_ms):>13}",
        f"  technologies:     {', '.join(architecture.technologies) or '—'}",
        f"  service units:    {', '.join(architecture.service_units) or '—'}",
        f"  persistent paths: {', '.join(architecture.persistent_paths) or '—'}",
        f"  tampering:        {tampering_summary(analysis) or '—'}",
        f"  {len(analysis.actions)} observed tool calls:",
    ]
    for action in analysis.actions:
        mark = "ok " if action.success else "ERR"
        what = " ".join((action.command or "").split())
        if len(what) > COMMAND_PREVIEW_CHARS:
            what = what[:COMMAND_PREVIEW_CHARS] + "…"
        label = f"{action.description} — " if action.description else ""
        flags = f"  [tampering: {', '.join(action.tampering)}]" if action.tampering else ""
        lines.append(
            f"    {format_clock(action.started_after_ms):>5}  {action.kind.value:<10}  {mark}  {label}{what}{flags}"
        )
    return lines


def analyze_command(args: argparse.Namespace) -> int:
    match = load_match(args.path)
    analyses = match_analyses(match)
    if args.json:
        print(
            json.dumps(
                {agent: a.model_dump(mode="json") for agent, (a, _) in analyses.items()}, indent=2, ensure_ascii=False
            )
        )
        return 0
    if not analyses:
        print(f"{match.name}: no agent transcripts or analyses in this match")
        return 0
    blocks = [analysis_lines(agent, analysis, source) for agent, (analysis, source) in analyses.items()]
    print("\n\n".join("\n".join(block) for block in blocks))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("analyze", help="how each agent fought: tool calls classified, metrics, architecture")
    p.add_argument("path", type=Path, help="a saved match: directory, published folder or .match.json file")
    p.add_argument("--json", action="store_true", help="print {agent: analysis} as JSON")
    p.set_defaults(handler=analyze_command)
