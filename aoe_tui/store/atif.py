"""`aoe export --format atif`: one ATIF-v1.4 trajectory per agent of a saved match.

ATIF (Agent Trajectory Interchange Format, RFC 0001 of the Harbor project,
the format terminal-bench style tools read) is a session of steps: user
prompts, agent turns with their tool calls, and the observations those calls
returned. We implement v1.4, the version whose RFC we could read in full; the
schema we validate against (`schemas/atif-v1.4.schema.json`) was written from
it, as no package for this Python ships the published one.

Steps come from the transcript's messages (the fixtures' content-block shape:
`text`, `tool_use`, `tool_result`), else from the referee's gateway's record
of the model exchanges (`model_calls.jsonl`, `store.model_calls`: an agent
step per exchange with its text, tool calls and usage, the tool results the
next request carried as its observations), or, when an agent left only a live tool
trace, one agent step per tool call (a match that kept neither but a stored
analysis: one step per classified command, its output excerpt as the
observation). Only those public block kinds are
exported: private reasoning (`domain.transcript.without_private_reasoning`)
never is, nor any block of a kind we do not know (it might be reasoning under
another name); the notes count both. The referee's verdict on the agent,
which no harness knows, goes in `final_metrics.extra.referee`: each milestone
passed and when, the outcome, and the failure source.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from aoe_tui.domain.analysis import Analysis
from aoe_tui.domain.errors import AoeError
from aoe_tui.domain.secret_patterns import Redactor
from aoe_tui.domain.transcript import ToolTraceEntry, without_private_reasoning
from aoe_tui.store.atomic_file import write_text_atomic
from aoe_tui.store.match_export import ExportReport, slug
from aoe_tui.store.model_calls import PROTOCOLS as MODEL_CALL_PROTOCOLS
from aoe_tui.store.model_calls import answer_text, new_input, public_record
from aoe_tui.store.saved_match import SavedMatch

ATIF_VERSION = "ATIF-v1.4"
SCHEMA_FILE = "atif-v1.4.schema.json"
TRAJECTORY_SUFFIX = ".trajectory.json"
PUBLIC_BLOCKS = frozenset({"text", "tool_use", "tool_result"})


@dataclass
class TrajectorySteps:
    """The steps being built for one agent, and what was kept back."""

    timing: dict[str, ToolTraceEntry]
    steps: list[dict[str, Any]] = field(default_factory=list)
    reasoning_removed: int = 0
    other_blocks_removed: int = 0

    def add(self, source: str, message: str, **fields: Any) -> dict[str, Any]:
        step = {"step_id": len(self.steps) + 1, "source": source, "message": message, **fields}
        self.steps.append(step)
        return step

    def agent_turn(self, message: str, calls: list[dict[str, Any]]) -> None:
        fields: dict[str, Any] = {"tool_calls": calls} if calls else {}
        timed = {
            c["tool_call_id"]: _timing(self.timing[c["tool_call_id"]])
            for c in calls
            if c["tool_call_id"] in self.timing
        }
        if timed:
            fields["extra"] = {"tool_call_timing": timed}
        self.add("agent", message, **fields)

    def observe(self, call_id: str | None, content: str) -> None:
        """A tool's result, on the agent step that made the call (else the last agent step, unattributed)."""
        owner = next((s for s in reversed(self.steps) if call_id in _call_ids(s)), None)
        if owner is None:
            owner = next((s for s in reversed(self.steps) if s["source"] == "agent"), None) or self.add("system", "")
            call_id = None
        owner.setdefault("observation", {"results": []})["results"].append(
            {"source_call_id": call_id, "content": content}
        )


def default_atif_output(match: SavedMatch) -> Path:
    return Path(f"{slug(match.name)}-atif")


def export_atif(match: SavedMatch, output: Path, known_secrets: Iterable[str | None] = ()) -> ExportReport:
    """Write `<output>/<agent>.trajectory.json` for every agent, each validated before it is written."""
    report = ExportReport(output=output)
    known = list(known_secrets)
    output.mkdir(parents=True, exist_ok=True)
    for agent_id in sorted(match.agents):
        trajectory, steps = agent_trajectory(match, agent_id)
        redactor = Redactor(known)
        trajectory = redactor.value(trajectory)
        report.redacted += [(agent_id, kind, count) for kind, count in sorted(redactor.counts.items())]
        report.reasoning_removed += steps.reasoning_removed
        if not steps.steps:
            report.left_out.append(
                (
                    agent_id,
                    "no transcript, model calls or tool trace: the trajectory holds the referee's verdict only",
                )
            )
        validate_trajectory(trajectory, f"{agent_id}{TRAJECTORY_SUFFIX}")
        write_text_atomic(
            output / f"{agent_id}{TRAJECTORY_SUFFIX}", json.dumps(trajectory, indent=2, ensure_ascii=False) + "\n"
        )
    return report


def agent_trajectory(match: SavedMatch, agent_id: str) -> tuple[dict[str, Any], TrajectorySteps]:
    info = match.agents[agent_id]
    transcript = match.transcripts.get(agent_id)
    trace = match.tool_trace(agent_id)
    steps = TrajectorySteps(timing={entry.id: entry for entry in trace if entry.id})
    model_calls = match.agent_model_calls(agent_id) if transcript is None or not transcript.messages else []
    if transcript is not None and transcript.messages:
        _from_messages(steps, transcript.messages)
    elif model_calls:
        _from_model_calls(steps, model_calls)
    elif trace:
        _from_trace(steps, trace)
    elif agent_id in match.analyses:
        _from_analysis(steps, match.analyses[agent_id])
    agent: dict[str, Any] = {"name": info.adapter or "unknown", "version": _adapter_version(match, info.adapter)}
    if info.model:
        agent["model_name"] = info.model
    agent["extra"] = {"agent_id": agent_id, "territory": info.territory, "reasoning_effort": info.reasoning_effort}
    trajectory = {
        "schema_version": ATIF_VERSION,
        "session_id": f"{match.name}:{agent_id}",
        "agent": agent,
        "steps": steps.steps,
        "notes": _notes(match, steps),
        "final_metrics": {
            **_usage(match, agent_id),
            "total_steps": len(steps.steps),
            "extra": {"referee": referee_verdict(match, agent_id)},
        },
    }
    return trajectory, steps


def referee_verdict(match: SavedMatch, agent_id: str) -> dict[str, Any]:
    """What the referee decided about this agent: its milestones (passed, when), outcome and failure source."""
    world = match.world
    agent = world.agents.get(agent_id)
    territory_id = (agent.territory if agent else None) or match.agents[agent_id].territory
    territory = world.territories.get(territory_id or "")
    milestones = territory.milestones if territory else {}
    order = [m.id for m in match.manifest.build.milestones] if match.manifest and match.manifest.build else []
    order += [m for m in milestones if m not in order]
    return {
        "match": match.name,
        "arena": match.manifest.arena.id if match.manifest else (match.provenance or {}).get("arena_id"),
        "territory": territory_id,
        "match_state": world.match_state,
        "finish_reason": world.finish_reason,
        "won": territory_id is not None and world.winner == territory_id,
        "outcome": {
            "competitor_state": territory.competitor_state if territory else None,
            "terminal_state": agent.terminal_state if agent else None,
            "successful": agent.successful if agent else None,
            "detail": agent.terminal_detail if agent else None,
        },
        "failure_source": agent.failure_source if agent else None,
        "milestones": [
            {
                "milestone": milestone,
                "passed": state.passed,
                "passed_at_ms": state.passed_at_ms if state.passed else None,
                "points": state.points,
                "failure_category": state.failure_category,
                "failure_detail": state.failure_detail,
            }
            for milestone in order
            if (state := milestones.get(milestone)) is not None
        ],
        "milestone_points": territory.milestone_points if territory else 0,
        "durable_at_ms": territory.durable_at_ms if territory else None,
    }


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(files("aoe_tui.store").joinpath("schemas", SCHEMA_FILE).read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def validate_trajectory(trajectory: dict[str, Any], where: str) -> None:
    """The schema, then what it cannot say: step ids 1, 2, 3, ... and results naming a call of their own step."""
    error = next(iter(sorted(_validator().iter_errors(trajectory), key=lambda e: list(e.absolute_path))), None)
    if error is not None:
        location = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise AoeError(f"{where}: not valid {ATIF_VERSION} at {location}: {error.message}")
    for index, step in enumerate(trajectory["steps"], 1):
        if step["step_id"] != index:
            raise AoeError(f"{where}: step {index} has step_id {step['step_id']}")
        for result in step.get("observation", {}).get("results", []):
            if result.get("source_call_id") is not None and result["source_call_id"] not in _call_ids(step):
                raise AoeError(f"{where}: step {index} observes {result['source_call_id']!r}, not one of its calls")


def _from_messages(steps: TrajectorySteps, messages: list[Any]) -> None:
    public, steps.reasoning_removed = without_private_reasoning(messages)
    for message in public:
        if not isinstance(message, dict):
            steps.other_blocks_removed += 1
            continue
        role, content = message.get("role"), message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        known = [b for b in blocks if isinstance(b, dict) and b.get("type") in PUBLIC_BLOCKS]
        steps.other_blocks_removed += len(blocks) - len(known)
        text = "\n\n".join(str(b.get("text") or "") for b in known if b["type"] == "text")
        if role == "assistant":
            uses = [b for b in known if b["type"] == "tool_use"]
            calls = [_call(b, f"step-{len(steps.steps) + 1}-call-{i}") for i, b in enumerate(uses, 1)]
            steps.agent_turn(text, calls)
        elif role in ("user", "system"):
            for block in known:
                if block["type"] == "tool_result":
                    steps.observe(block.get("tool_use_id"), _as_text(block.get("content")))
            if text or not known:
                steps.add(role, text)
        else:
            steps.other_blocks_removed += 1


def _from_model_calls(steps: TrajectorySteps, records: list[dict[str, Any]]) -> None:
    """The referee's gateway's record: per exchange, what its request added (a user or system text, the
    results of the previous exchange's tool calls) and an agent step with the answer's text, tool calls and
    usage. Reasoning is taken out of each record first (`public_record`), and never read."""
    for number, raw in enumerate(records, 1):
        record, removed = public_record(raw)
        steps.reasoning_removed += removed
        protocol = record.get("protocol") if isinstance(record.get("protocol"), str) else ""
        if protocol not in MODEL_CALL_PROTOCOLS:
            steps.other_blocks_removed += 1
            continue
        for said in new_input(protocol, record.get("request")):
            if said.source == "tool":
                steps.observe(_result_owner(steps, said.call_id, said.name), said.text)
            elif said.text:
                steps.add(said.source, said.text)
        recorded = record.get("tool_calls")
        listed: list[Any] = recorded if isinstance(recorded, list) else []
        calls = [
            _recorded_call(call, f"exchange-{number}-call-{index}")
            for index, call in enumerate(listed, 1)
            if isinstance(call, dict)
        ]
        fields: dict[str, Any] = {"tool_calls": calls} if calls else {}
        if metrics := _exchange_metrics(record.get("usage")):
            fields["metrics"] = metrics
        extra = {
            key: record.get(key)
            for key in ("sequence", "elapsed_ms", "duration_ms", "status", "streamed", "cut", "protocol")
            if record.get(key) is not None
        }
        if isinstance(record.get("model"), str) and record["model"]:
            fields["model_name"] = record["model"]
        steps.add("agent", answer_text(protocol, record.get("response")), **fields, extra={"model_call": extra})


def _result_owner(steps: TrajectorySteps, call_id: str | None, name: str | None) -> str | None:
    """The call a tool result answers: its id, else (Gemini names the function only) the last agent step's
    first call of that name; None when neither is known (the result goes to the last agent step, unattributed)."""
    last = next((s for s in reversed(steps.steps) if s["source"] == "agent"), None)
    if last is None:
        return call_id
    if call_id is not None and call_id in _call_ids(last):
        return call_id
    if name:
        answered = {r.get("source_call_id") for r in last.get("observation", {}).get("results", [])}
        for call in last.get("tool_calls", []):
            if call["function_name"] == name and call["tool_call_id"] not in answered:
                return str(call["tool_call_id"])
    return call_id


def _recorded_call(call: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    """A tool call as the gateway lists it: `arguments` is JSON text, an object when it parses to one."""
    text = call.get("arguments")
    try:
        arguments = json.loads(text) if isinstance(text, str) and text.strip() else None
    except ValueError:
        arguments = text
    return {
        "tool_call_id": str(call.get("id") or fallback_id),
        "function_name": str(call.get("name") or "unknown"),
        "arguments": _arguments(arguments),
    }


def _exchange_metrics(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, dict):
        return {}
    pairs = [
        ("prompt_tokens", usage.get("input_tokens")),
        ("completion_tokens", usage.get("output_tokens")),
        ("cached_tokens", usage.get("cached_tokens")),
    ]
    metrics: dict[str, Any] = {
        key: value for key, value in pairs if isinstance(value, int) and not isinstance(value, bool) and value >= 0
    }
    cost = usage.get("provider_cost_usd")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0:
        metrics["cost_usd"] = cost
    return metrics


def _from_trace(steps: TrajectorySteps, trace: list[ToolTraceEntry]) -> None:
    for index, entry in enumerate(trace, 1):
        call_id = entry.id or f"call-{index}"
        steps.agent_turn(
            "",
            [{"tool_call_id": call_id, "function_name": entry.name or "unknown", "arguments": _arguments(entry.input)}],
        )
        steps.observe(call_id, _as_text(entry.output))


def _from_analysis(steps: TrajectorySteps, analysis: Analysis) -> None:
    """A match that kept only its stored analysis (the earlier controller's single files): its classified commands."""
    for action in analysis.actions:
        call_id = action.tool_id or f"action-{action.index}"
        arguments = {
            key: value for key, value in (("command", action.command), ("description", action.description)) if value
        }
        step = steps.add(
            "agent",
            "",
            tool_calls=[{"tool_call_id": call_id, "function_name": "command", "arguments": arguments}],
            extra={
                "from_stored_analysis": {"kind": action.kind.value, "success": action.success},
                "tool_call_timing": {
                    call_id: {"started_after_ms": action.started_after_ms, "duration_ms": action.duration_ms}
                },
            },
        )
        if action.output_excerpt is not None:
            step["observation"] = {"results": [{"source_call_id": call_id, "content": action.output_excerpt}]}


def _call(block: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    return {
        "tool_call_id": str(block.get("id") or fallback_id),
        "function_name": str(block.get("name") or "unknown"),
        "arguments": _arguments(block.get("input")),
    }


def _arguments(value: Any) -> dict[str, Any]:
    """ATIF wants an object; a harness that sent a bare string or list gets it wrapped."""
    if isinstance(value, dict):
        return value
    return {} if value is None else {"input": value}


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in value):
        return "\n".join(str(b.get("text") or "") for b in value)
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _call_ids(step: dict[str, Any]) -> set[str]:
    return {call["tool_call_id"] for call in step.get("tool_calls", [])}


def _timing(entry: ToolTraceEntry) -> dict[str, Any]:
    return {"started_after_ms": entry.started_after_ms, "duration_ms": entry.duration_ms, "is_error": entry.is_error}


def _adapter_version(match: SavedMatch, adapter: str | None) -> str:
    digest = ((match.provenance or {}).get("adapter_sha256") or {}).get(adapter or "")
    return f"sha256:{digest[:16]}" if isinstance(digest, str) and digest else "unknown"


def _usage(match: SavedMatch, agent_id: str) -> dict[str, Any]:
    """Token and cost totals: the transcript's (prompt tokens include cached ones), else the referee's."""
    transcript = match.transcripts.get(agent_id)
    usage = transcript.usage if transcript is not None else None
    totals: dict[str, Any] = {}
    if usage is not None:
        pairs = [
            ("total_prompt_tokens", usage.input_tokens),
            ("total_completion_tokens", usage.output_tokens),
            ("total_cached_tokens", usage.cache_read_tokens),
            ("total_cost_usd", usage.cost_usd),
        ]
        totals = {key: value for key, value in pairs if value is not None}
    elif (agent := match.world.agents.get(agent_id)) is not None:
        if agent.tokens_known:
            totals = {"total_prompt_tokens": agent.input_tokens, "total_completion_tokens": agent.output_tokens}
        if agent.cost_known:
            totals["total_cost_usd"] = agent.cost_microusd / 1_000_000
    return totals


def _notes(match: SavedMatch, steps: TrajectorySteps) -> str:
    return (
        f"Exported by aoe_tui from the Agents of Empires match {match.name}. Private reasoning is never exported "
        f"({steps.reasoning_removed} reasoning block(s) left out; {steps.other_blocks_removed} message block(s) of "
        "other kinds left out). Steps carry no timestamps: a match records elapsed time only, so tool timings "
        "(ms after the agent started) are in each step's extra.tool_call_timing. The referee's verdict is in "
        "final_metrics.extra.referee."
    )
