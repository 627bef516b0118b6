"""Gemini CLI (`gemini --output-format stream-json`), speaking Gemini streamGenerateContent to the gateway.

Its stream is one JSON object a line, each with a `type` and an ISO
`timestamp`: `init` (session id, model), `message` (role `user` or
`assistant`; assistant text comes in `delta` pieces), `tool_use` (`tool_name`,
`tool_id`, `parameters`), `tool_result` (`tool_id`, `status` success/error,
`output`, `error.message`), `error` (severity and message) and a last `result`
(`status`, `error`, `stats` with token totals). Its settings
(`~/.gemini/settings.json`) choose API-key auth and turn usage statistics,
telemetry, auto-update and its notification off.
"""

from __future__ import annotations

import json
from typing import Any

from aoe_tui.agents.harnesses.base import (
    pinned,
    ConfigFile,
    Harness,
    HarnessContext,
    JsonLinesParser,
    as_dict,
    as_int,
    as_str,
    bounded,
    bounded_input,
    epoch_ms,
)
from aoe_tui.domain.transcript import TranscriptUsage

QUIET_ENV = {
    "GEMINI_CLI_TRUST_WORKSPACE": "true",  # headless: no trust prompt for the working folder
    "GEMINI_TELEMETRY_ENABLED": "false",
    "NO_BROWSER": "true",
}
# Gemini CLI's tool names -> ours
TOOL_NAMES = {
    "run_shell_command": "Bash",
    "read_file": "Read",
    "read_many_files": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "glob": "Glob",
    "search_file_content": "Grep",
    "grep_search": "Grep",
    "list_directory": "LS",
    "web_fetch": "WebFetch",
    "google_web_search": "WebSearch",
    "write_todos": "TodoWrite",
}


def settings() -> dict[str, Any]:
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False, "logPrompts": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "disableAutoUpdate": True},
        "model": {"disableLoopDetection": True},
        "ide": {"enabled": False},
    }


def files(ctx: HarnessContext) -> tuple[ConfigFile, ...]:
    return (ConfigFile(f"{ctx.home}/.gemini/settings.json", json.dumps(settings(), indent=2) + "\n"),)


def env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "HOME": ctx.home,
        "GOOGLE_GEMINI_BASE_URL": ctx.gateway_url,
        "GEMINI_API_KEY": ctx.gateway_token,
        "GEMINI_MODEL": ctx.model,
        **QUIET_ENV,
    }


def argv(ctx: HarnessContext) -> tuple[str, ...]:
    return ("gemini", "--yolo", "-m", ctx.model, "--output-format", "stream-json", "-p", ctx.prompt)


class GeminiCliParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self._answer: list[str] = []
        self._answer_chars = 0
        self._clock: dict[str, int] = {}

    def on_event(self, event: dict[str, Any], now_ms: int | None) -> None:
        kind = event.get("type")
        at = epoch_ms(event.get("timestamp"))
        if kind == "init":
            self.report.session_id = as_str(event.get("session_id")) or self.report.session_id
        elif kind == "message" and event.get("role") == "assistant":
            text = as_str(event.get("content")) or ""
            if event.get("delta") is not True:
                self._answer, self._answer_chars = [], 0
            if self._answer_chars < 64 * 1024:
                self._answer.append(text)
                self._answer_chars += len(text)
        elif kind == "message" and event.get("role") == "user":
            self._answer, self._answer_chars = [], 0
        elif kind == "tool_use" and (call_id := as_str(event.get("tool_id"))):
            tool = as_str(event.get("tool_name")) or "?"
            self.started(
                call_id, TOOL_NAMES.get(tool, bounded(tool, 200)), bounded_input(event.get("parameters")), now_ms
            )
            if at is not None and len(self._clock) < 1000:
                self._clock[call_id] = at
            self._answer, self._answer_chars = [], 0
        elif kind == "tool_result" and (call_id := as_str(event.get("tool_id"))):
            failed = event.get("status") != "success"
            output = as_str(event.get("output"))
            if failed:
                output = output or as_str(as_dict(event.get("error")).get("message"))
            self.ended(call_id, output or "", failed, now_ms)
            self.timed(call_id, self._clock.pop(call_id, None), at)
        elif kind == "error":
            self.error(as_str(event.get("message")))
        elif kind == "result":
            self._result(event)

    def _result(self, event: dict[str, Any]) -> None:
        report = self.report
        report.completed = event.get("status") == "success"
        if not report.completed:
            self.error(as_str(as_dict(event.get("error")).get("message")) or "the run ended in error")
        if self._answer:
            report.result = bounded("".join(self._answer))
        stats = as_dict(event.get("stats"))
        if stats:
            report.usage = TranscriptUsage(
                input_tokens=as_int(stats.get("input_tokens")) or as_int(stats.get("input")),
                output_tokens=as_int(stats.get("output_tokens")),
                cache_read_tokens=as_int(stats.get("cached")),
            )
            report.model_rounds = as_int(stats.get("api_requests")) or report.model_rounds


HARNESS = Harness(
    recipe=pinned("gemini-cli"),
    quiet_env=QUIET_ENV,
    files=files,
    env=env,
    argv=argv,
    parser=GeminiCliParser,
)
