"""opencode (`opencode run --format json`), speaking OpenAI Chat Completions to the gateway.

Its stream is one JSON object a line, each with a `type`, a `sessionID` and a
`part`: `step_start`, `tool_use` (a finished tool part: `tool`, `callID`,
`state` with `status`, `input`, `output` or `error`, and `time.start`/`end` in
epoch milliseconds), `text` (the answer's text), `step_finish` (`tokens` with
input, output, reasoning and cache read/write, and `cost`), and `error` (a
named error with `data.message`). The provider is `@ai-sdk/openai-compatible`
(built in, nothing fetched) at the gateway; its small model (titles) is the
same model.
"""

from __future__ import annotations

import json
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
)
from aoe_tui.domain.transcript import ToolTraceEntry, TranscriptUsage

PROVIDER = "arena"
QUIET_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",  # models.dev
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",  # reads no ~/.claude
    "NPM_CONFIG_REGISTRY": "http://127.0.0.1:9/",  # the registry look-up it makes once goes nowhere
}
# opencode's tool names -> ours
TOOL_NAMES = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "multiedit": "Edit",
    "patch": "Edit",
    "apply_patch": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "list": "LS",
    "webfetch": "WebFetch",
    "websearch": "WebSearch",
    "todowrite": "TodoWrite",
    "todoread": "TodoWrite",
    "task": "Task",
}


def config(ctx: HarnessContext) -> dict[str, Any]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": f"{PROVIDER}/{ctx.model}",
        "small_model": f"{PROVIDER}/{ctx.model}",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "arena gateway",
                "options": {"baseURL": f"{ctx.gateway_url}/v1", "apiKey": "{env:AOE_GATEWAY_TOKEN}"},
                "models": {ctx.model: {"name": ctx.model, "tool_call": True}},
            }
        },
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
        "plugin": [],
        "lsp": False,
        "formatter": False,
    }


def files(ctx: HarnessContext) -> tuple[ConfigFile, ...]:
    return (ConfigFile(f"{ctx.home}/.config/opencode/opencode.json", json.dumps(config(ctx), indent=2) + "\n"),)


def env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "HOME": ctx.home,
        "OPENCODE_CONFIG": f"{ctx.home}/.config/opencode/opencode.json",
        "AOE_GATEWAY_TOKEN": ctx.gateway_token,
        **QUIET_ENV,
    }


def argv(ctx: HarnessContext) -> tuple[str, ...]:
    return ("opencode", "run", "--model", f"{PROVIDER}/{ctx.model}", "--format", "json", "--auto", "--", ctx.prompt)


def resume_argv(ctx: HarnessContext, session_id: str) -> tuple[str, ...]:
    model = f"{PROVIDER}/{ctx.model}"
    return (
        "opencode",
        "run",
        "--session",
        session_id,
        "--model",
        model,
        "--format",
        "json",
        "--auto",
        "--",
        RESUME_PROMPT,
    )


class OpencodeParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self._tokens = {"input": 0, "output": 0, "read": 0, "write": 0}
        self._cost = 0.0
        self._steps = 0
        self._texts: list[str] = []

    def on_event(self, event: dict[str, Any], now_ms: int | None) -> None:
        kind = event.get("type")
        part = as_dict(event.get("part"))
        self.report.session_id = as_str(event.get("sessionID")) or self.report.session_id
        if kind == "tool_use":
            self._tool(part, now_ms)
        elif kind == "text":
            text = as_str(part.get("text"))
            if text:
                self._texts = [*self._texts[-20:], text]
                self.report.result = bounded(text)
        elif kind == "step_finish":
            self._steps += 1
            tokens = as_dict(part.get("tokens"))
            cache = as_dict(tokens.get("cache"))
            self._tokens["input"] += as_int(tokens.get("input")) or 0
            self._tokens["output"] += (as_int(tokens.get("output")) or 0) + (as_int(tokens.get("reasoning")) or 0)
            self._tokens["read"] += as_int(cache.get("read")) or 0
            self._tokens["write"] += as_int(cache.get("write")) or 0
            self._cost += as_number(part.get("cost")) or 0.0
            self.report.usage = TranscriptUsage(
                input_tokens=self._tokens["input"],
                output_tokens=self._tokens["output"],
                cache_read_tokens=self._tokens["read"],
                cache_creation_tokens=self._tokens["write"],
                cost_usd=self._cost,
            )
            self.report.model_rounds = self._steps
            reason = as_str(part.get("reason"))
            self.report.completed = reason not in ("tool-calls", "error", None) or self.report.completed
        elif kind == "error":
            error = as_dict(event.get("error"))
            message = as_str(as_dict(error.get("data")).get("message")) or as_str(error.get("name"))
            self.error(message)
            self.report.completed = False

    def _tool(self, part: dict[str, Any], now_ms: int | None) -> None:
        state = as_dict(part.get("state"))
        status = state.get("status")
        if status not in ("completed", "error"):
            return
        tool = as_str(part.get("tool")) or "?"
        name = TOOL_NAMES.get(tool, bounded(tool, 200))
        timing = as_dict(state.get("time"))
        start, end = as_int(timing.get("start")), as_int(timing.get("end"))
        failed = status == "error"
        output = as_str(state.get("error")) if failed else as_str(state.get("output"))
        metadata = as_dict(state.get("metadata"))
        exit_code = metadata.get("exit")
        entry = ToolTraceEntry(
            id=bounded(as_str(part.get("callID")) or as_str(part.get("id")) or "?", 200),
            name=name,
            input=bounded_input(state.get("input")),
            output=bounded(output or ""),
            is_error=failed or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0),
            read_only=name in ("Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch"),
            started_after_ms=now_ms,
            duration_ms=max(0, end - start) if start is not None and end is not None and end - start < 10**9 else None,
        )
        self.whole_call(entry)


HARNESS = Harness(
    recipe=pinned("opencode"),
    quiet_env=QUIET_ENV,
    files=files,
    env=env,
    argv=argv,
    parser=OpencodeParser,
    resume_argv=resume_argv,
)
