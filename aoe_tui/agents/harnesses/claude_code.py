"""Claude Code (`claude -p --output-format stream-json`), speaking Anthropic Messages to the gateway.

Its stream is one JSON object a line: `system` (init: session id, tools, model),
`assistant` messages whose content holds `tool_use` blocks, `user` messages whose
content holds the matching `tool_result` blocks, and a last `result` (the final
text, `is_error`, `num_turns`, `usage`, `total_cost_usd`). Tool names are ours
already (Bash, Read, Write, Edit, Glob, Grep, ...).
"""

from __future__ import annotations

from typing import Any

from aoe_tui.agents.harnesses.base import (
    pinned,
    RESUME_PROMPT,
    ConfigFile,
    Harness,
    HarnessContext,
    JsonLinesParser,
    as_dict,
    as_int,
    as_number,
    as_str,
    bounded,
    bounded_input,
    epoch_ms,
)
from aoe_tui.domain.transcript import TranscriptUsage

QUIET_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",  # telemetry, error reporting, update checks, feedback
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY": "1",
}


def files(ctx: HarnessContext) -> tuple[ConfigFile, ...]:
    return ()


def env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "HOME": ctx.home,
        "ANTHROPIC_BASE_URL": ctx.gateway_url,
        "ANTHROPIC_API_KEY": ctx.gateway_token,
        "ANTHROPIC_MODEL": ctx.model,
        "ANTHROPIC_DEFAULT_OPUS_MODEL": ctx.model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": ctx.model,
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": ctx.model,
        "ANTHROPIC_SMALL_FAST_MODEL": ctx.model,
        "IS_SANDBOX": "1",  # it refuses to bypass permissions as root otherwise; the guest is the sandbox
        **QUIET_ENV,
    }


def argv(ctx: HarnessContext, resume: str | None = None) -> tuple[str, ...]:
    return (
        "claude",
        "-p",
        *(("--resume", resume) if resume is not None else ()),
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "bypassPermissions",
        "--model",
        ctx.model,
        "--max-turns",
        str(ctx.max_turns),
        "--",
        ctx.prompt if resume is None else RESUME_PROMPT,
    )


def resume_argv(ctx: HarnessContext, session_id: str) -> tuple[str, ...]:
    return argv(ctx, session_id)


class ClaudeCodeParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self._asked_at: dict[str, int] = {}  # call id -> when the model's message asking for it was written

    def on_event(self, event: dict[str, Any], now_ms: int | None) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.report.session_id = as_str(event.get("session_id")) or self.report.session_id
        elif kind == "assistant":
            message = as_dict(event.get("message"))
            for block in _blocks(message):
                if block.get("type") == "tool_use" and (call_id := as_str(block.get("id"))):
                    name = bounded(as_str(block.get("name")) or "?", 200)
                    self.started(call_id, name, bounded_input(block.get("input")), now_ms)
                    if (at := epoch_ms(event.get("timestamp"))) is not None and len(self._asked_at) < 1000:
                        self._asked_at[call_id] = at
            if event.get("error") is not None:
                self.error(_text_of(message) or as_str(event.get("error")))
        elif kind == "user":
            for block in _blocks(as_dict(event.get("message"))):
                if block.get("type") == "tool_result" and (call_id := as_str(block.get("tool_use_id"))):
                    self.ended(call_id, _result_text(block.get("content")), block.get("is_error") is True, now_ms)
                    self.timed(call_id, self._asked_at.pop(call_id, None), epoch_ms(event.get("timestamp")))
        elif kind == "result":
            self._result(event)

    def _result(self, event: dict[str, Any]) -> None:
        report = self.report
        report.session_id = as_str(event.get("session_id")) or report.session_id
        text = as_str(event.get("result"))
        report.result = bounded(text) if text is not None else None
        failed = event.get("is_error") is True or event.get("subtype") != "success"
        report.completed = not failed
        if failed:
            errors = event.get("errors")
            last = errors[-1] if isinstance(errors, list) and errors else None
            self.error(as_str(last) or text or as_str(event.get("subtype")))
        report.model_rounds = as_int(event.get("num_turns"))
        usage = as_dict(event.get("usage"))
        if usage:
            report.usage = TranscriptUsage(
                input_tokens=as_int(usage.get("input_tokens")),
                output_tokens=as_int(usage.get("output_tokens")),
                cache_read_tokens=as_int(usage.get("cache_read_input_tokens")),
                cache_creation_tokens=as_int(usage.get("cache_creation_input_tokens")),
                cost_usd=as_number(event.get("total_cost_usd")),
            )


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


def _text_of(message: dict[str, Any]) -> str | None:
    texts = [as_str(block.get("text")) or "" for block in _blocks(message) if block.get("type") == "text"]
    return "\n".join(texts) or None


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [as_str(as_dict(part).get("text")) or "" for part in content if as_dict(part).get("type") == "text"]
        return "\n".join(parts)
    return ""


HARNESS = Harness(
    recipe=pinned("claude-code"),
    quiet_env=QUIET_ENV,
    files=files,
    env=env,
    argv=argv,
    parser=ClaudeCodeParser,
    resume_argv=resume_argv,
)
