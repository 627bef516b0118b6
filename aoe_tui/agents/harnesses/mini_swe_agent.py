"""mini-swe-agent (`mini -y --exit-immediately`), speaking OpenAI Chat Completions (litellm) to the gateway.

It writes no event stream worth reading on stdout (a terminal rendering); its
record is the trajectory file it saves (`-o`): `info` (`exit_status`,
`submission`, `model_stats` with `api_calls` and `instance_cost`, its version)
and `messages`, the whole conversation in OpenAI's shape, where each assistant
message's `tool_calls` are `bash` commands and each `tool` message holds the
command's output and return code, and each assistant message's `extra.response`
keeps the provider's answer with its usage. The trajectory is saved after
every step, so reading it while the run goes gives the calls so far.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aoe_tui.agents.harnesses.base import (
    pinned,
    MAX_CALLS,
    MAX_DOCUMENT_BYTES,
    ConfigFile,
    Harness,
    HarnessContext,
    HarnessParser,
    HarnessReport,
    as_dict,
    as_int,
    as_number,
    as_str,
    bounded,
    error_line,
)
from aoe_tui.domain.transcript import ToolTraceEntry, TranscriptUsage

TRAJECTORY = ".mini-swe-agent/trajectory.json"  # under its HOME: out of the working folder the model lists
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # the command that ends its run (it is not executed)
QUIET_ENV = {
    "MSWEA_CONFIGURED": "true",  # no first-run setup wizard
    "MSWEA_COST_TRACKING": "ignore_errors",  # an unknown model has no price: not an error
    "MSWEA_SILENT_STARTUP": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm's price map from the package, not fetched from GitHub
    "LITELLM_TELEMETRY": "False",
    "DO_NOT_TRACK": "1",
    "HF_HUB_OFFLINE": "1",
}
_RETURN_CODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output>\n?(.*?)\n?</output>", re.DOTALL)


def files(ctx: HarnessContext) -> tuple[ConfigFile, ...]:
    return ()


def env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "HOME": ctx.home,
        "MSWEA_GLOBAL_CONFIG_DIR": f"{ctx.home}/.config/mini-swe-agent",
        "OPENAI_API_BASE": f"{ctx.gateway_url}/v1",
        "OPENAI_BASE_URL": f"{ctx.gateway_url}/v1",
        "OPENAI_API_KEY": ctx.gateway_token,
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "3",  # a refused round ends its run in seconds, not minutes
        **QUIET_ENV,
    }


def argv(ctx: HarnessContext) -> tuple[str, ...]:
    return (
        "mini",
        "-y",
        "--exit-immediately",
        "-c",
        "mini.yaml",
        "-c",
        f"agent.step_limit={ctx.max_turns}",
        "-l",
        "0",
        "-m",
        f"openai/{ctx.model}",
        "-o",
        f"{ctx.home}/{TRAJECTORY}",
        "-t",
        ctx.prompt,
    )


class MiniSweAgentParser(HarnessParser):
    """Reads the trajectory document: `feed` takes its bytes (the whole file, as it is now), `finish` reads it."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._too_big = False
        self._seen = 0

    def feed(self, data: bytes, now_ms: int | None = None) -> list[ToolTraceEntry]:
        if len(self._data) + len(data) > MAX_DOCUMENT_BYTES:
            self._too_big = True
            return []
        self._data += data
        return []

    def finish(self) -> HarnessReport:
        report = HarnessReport()
        if self._too_big:
            report.skipped_lines = 1
            report.last_error = "the trajectory file is too large to read"
            return report
        try:
            document = json.loads(self._data.decode("utf-8", errors="replace")) if self._data.strip() else None
        except (ValueError, RecursionError):
            document = None
        if not isinstance(document, dict):
            report.skipped_lines = 1 if self._data.strip() else 0
            return report
        read_trajectory(document, report)
        return report


def read_trajectory(document: dict[str, Any], report: HarnessReport) -> None:
    info = as_dict(document.get("info"))
    messages = [as_dict(m) for m in document.get("messages") or [] if isinstance(m, dict)]
    pending: dict[str, ToolTraceEntry] = {}
    started: dict[str, object] = {}  # call id -> when the model's answer asking for it came (epoch seconds)
    tokens = {"input": 0, "output": 0, "cached": 0}
    rounds = 0
    failure: str | None = None  # the exception its run ended on, from its `exit` message
    for message in messages[:100_000]:
        role = message.get("role")
        if role == "assistant":
            rounds += 1
            usage = as_dict(as_dict(as_dict(message.get("extra")).get("response")).get("usage"))
            tokens["input"] += as_int(usage.get("prompt_tokens")) or 0
            tokens["output"] += as_int(usage.get("completion_tokens")) or 0
            tokens["cached"] += as_int(as_dict(usage.get("prompt_tokens_details")).get("cached_tokens")) or 0
            for call in message.get("tool_calls") or []:
                call = as_dict(call)
                call_id = as_str(call.get("id"))
                function = as_dict(call.get("function"))
                if call_id is None or len(pending) >= 1000:
                    continue
                try:
                    arguments = json.loads(as_str(function.get("arguments")) or "{}")
                except (ValueError, RecursionError):
                    arguments = {}
                command = as_str(as_dict(arguments).get("command")) or ""
                started[bounded(call_id, 200)] = as_dict(message.get("extra")).get("timestamp")
                pending[call_id] = ToolTraceEntry(
                    id=bounded(call_id, 200), name="Bash", input={"command": bounded(command)}, read_only=False
                )
        elif role == "exit":
            extra = as_dict(message.get("extra"))
            failure = error_line(as_str(extra.get("exception_str")) or as_str(message.get("content"))) or failure
        elif role == "tool":
            entry = pending.pop(as_str(message.get("tool_call_id")) or "", None)
            if entry is None or len(report.tool_trace) >= MAX_CALLS:
                continue
            extra = as_dict(message.get("extra"))
            output, code = _observation(extra, _content_text(message.get("content")))
            submitted = SUBMIT in str(as_dict(entry.input).get("command"))
            exception = as_str(extra.get("exception_info"))
            entry.output = bounded(output or (exception or "") if not submitted else output or "(submitted)")
            entry.is_error = code is not None and code != 0 and not submitted
            began, ended = as_number(started.pop(entry.id or "", None)), as_number(extra.get("timestamp"))
            if began is not None and ended is not None and 0 <= ended - began < 10**6:
                entry.duration_ms = round((ended - began) * 1000)
            report.tool_trace.append(entry)
    report.usage = TranscriptUsage(
        input_tokens=tokens["input"],
        output_tokens=tokens["output"],
        cache_read_tokens=tokens["cached"],
        cost_usd=as_number(as_dict(info.get("model_stats")).get("instance_cost")),
    )
    report.model_rounds = as_int(as_dict(info.get("model_stats")).get("api_calls")) or rounds
    status = as_str(info.get("exit_status"))
    submission = as_str(info.get("submission"))
    report.completed = status == "Submitted"
    report.result = bounded(submission) if submission else None
    if status is not None and not report.completed:
        report.last_error = failure or error_line(submission) or error_line(status)


def _observation(extra: dict[str, Any], content: str) -> tuple[str, int | None]:
    """A command's output and return code: from `extra` (2.x), else the JSON or tagged text the model was shown."""
    if isinstance(extra.get("raw_output"), str):
        code = extra.get("returncode")
        return extra["raw_output"], code if isinstance(code, int) and not isinstance(code, bool) else None
    try:
        shown = json.loads(content) if content.lstrip().startswith("{") else None
    except (ValueError, RecursionError):
        shown = None
    if isinstance(shown, dict) and isinstance(shown.get("output"), str):
        code = shown.get("returncode")
        return shown["output"], code if isinstance(code, int) and not isinstance(code, bool) else None
    found_code = _RETURN_CODE.search(content[:4096])
    found = _OUTPUT.search(content)
    return (found.group(1) if found else content), int(found_code.group(1)) if found_code else None


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(as_str(as_dict(part).get("text")) or "" for part in content[:100])
    return ""


HARNESS = Harness(
    recipe=pinned("mini-swe-agent"),
    quiet_env=QUIET_ENV,
    files=files,
    env=env,
    argv=argv,
    parser=MiniSweAgentParser,
    trajectory=TRAJECTORY,
)
