"""Codex CLI (`codex exec --json`), speaking OpenAI Responses to the gateway.

Its stream is one JSON object a line: `thread.started` (the thread id, to
resume with `codex exec resume`), `turn.started`, `item.started` /
`item.updated` / `item.completed` for each item (`command_execution` with its
command, aggregated output and exit code; `file_change` with the paths it
changed; `mcp_tool_call`; `web_search`; `agent_message` with the answer's
text; `reasoning`, never kept; `error`), `turn.completed` with the turn's usage,
`turn.failed` and `error`. Its configuration is `CODEX_HOME/config.toml`: a
custom model provider at the gateway (Responses: Chat Completions is no longer
accepted), the key read from `AOE_GATEWAY_TOKEN`.
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
    as_str,
    bounded,
)
from aoe_tui.domain.transcript import ToolTraceEntry, TranscriptUsage

QUIET_ENV: dict[str, str] = {}  # its switches are in config.toml (update check, analytics, plugins, OpenTelemetry)


def _toml(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string


def config_toml(ctx: HarnessContext) -> str:
    return "\n".join(
        [
            f"model = {_toml(ctx.model)}",
            'model_provider = "arena"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "hide_agent_reasoning = false",
            "",
            "[model_providers.arena]",
            'name = "arena gateway"',
            f"base_url = {_toml(ctx.gateway_url + '/v1')}",
            'env_key = "AOE_GATEWAY_TOKEN"',
            'wire_api = "responses"',
            "request_max_retries = 2",
            "stream_max_retries = 2",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[features]",
            "plugins = false",
            "",
            "[otel]",
            'exporter = "none"',
            "",
            "[history]",
            'persistence = "none"',
            "",
        ]
    )


def files(ctx: HarnessContext) -> tuple[ConfigFile, ...]:
    return (ConfigFile(f"{ctx.home}/.codex/config.toml", config_toml(ctx)),)


def env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "HOME": ctx.home,
        "CODEX_HOME": f"{ctx.home}/.codex",
        "AOE_GATEWAY_TOKEN": ctx.gateway_token,
        **QUIET_ENV,
    }


def argv(ctx: HarnessContext) -> tuple[str, ...]:
    return ("codex", "exec", *_exec_options(ctx), "--", ctx.prompt)


def resume_argv(ctx: HarnessContext, session_id: str) -> tuple[str, ...]:
    return ("codex", "exec", "resume", *_exec_options(ctx), "--", session_id, RESUME_PROMPT)


def _exec_options(ctx: HarnessContext) -> tuple[str, ...]:
    return (
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "-m",
        ctx.model,
    )


class CodexParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self._tokens = {"input": 0, "cached": 0, "output": 0}
        self._failed = False

    def on_event(self, event: dict[str, Any], now_ms: int | None) -> None:
        kind = event.get("type")
        if kind == "thread.started":
            self.report.session_id = as_str(event.get("thread_id")) or self.report.session_id
        elif kind in ("item.started", "item.completed"):
            self._item(as_dict(event.get("item")), kind == "item.completed", now_ms)
        elif kind == "turn.completed":
            usage = as_dict(event.get("usage"))
            for key, field in (
                ("input", "input_tokens"),
                ("cached", "cached_input_tokens"),
                ("output", "output_tokens"),
            ):
                self._tokens[key] += as_int(usage.get(field)) or 0
            self.report.usage = TranscriptUsage(
                input_tokens=self._tokens["input"],
                output_tokens=self._tokens["output"],
                cache_read_tokens=self._tokens["cached"],
            )
            self.report.completed = not self._failed
        elif kind == "turn.failed":
            self._failed = True
            self.report.completed = False
            self.error(as_str(as_dict(event.get("error")).get("message")))
        elif kind == "error":
            self.error(as_str(event.get("message")))

    def _item(self, item: dict[str, Any], done: bool, now_ms: int | None) -> None:
        item_id = as_str(item.get("id"))
        kind = item.get("type")
        if item_id is None:
            return
        if kind == "agent_message" and done:
            text = as_str(item.get("text"))
            self.report.result = bounded(text) if text is not None else self.report.result
        elif kind == "error" and done:
            self.error(as_str(item.get("message")))
        elif kind == "command_execution":
            if not done:
                self.started(item_id, "Bash", {"command": bounded(as_str(item.get("command")) or "")}, now_ms)
                return
            self.started(item_id, "Bash", {"command": bounded(as_str(item.get("command")) or "")}, now_ms)
            exit_code = item.get("exit_code")
            failed = item.get("status") == "failed" or (isinstance(exit_code, int) and exit_code != 0)
            self.ended(item_id, as_str(item.get("aggregated_output")) or "", failed, now_ms)
        elif kind == "file_change" and done:
            changes = [as_dict(change) for change in item.get("changes") or [] if isinstance(change, dict)][:100]
            described = [f"{as_str(c.get('kind')) or '?'} {as_str(c.get('path')) or '?'}" for c in changes]
            entry = ToolTraceEntry(
                id=bounded(item_id, 200),
                name="Edit",
                input={"changes": [bounded(text, 4096) for text in described]},
                output=bounded("\n".join(described)),
                is_error=item.get("status") == "failed",
                read_only=False,
                started_after_ms=now_ms,
            )
            self.whole_call(entry)
        elif kind == "mcp_tool_call":
            name = bounded(f"mcp__{as_str(item.get('server')) or '?'}__{as_str(item.get('tool')) or '?'}", 200)
            if not done:
                self.started(item_id, name, {"arguments": bounded(item.get("arguments"))}, now_ms)
                return
            self.started(item_id, name, {"arguments": bounded(item.get("arguments"))}, now_ms)
            error = as_str(as_dict(item.get("error")).get("message"))
            output = error if error is not None else bounded(item.get("result"))
            self.ended(item_id, output, item.get("status") == "failed" or error is not None, now_ms)
        elif kind == "web_search" and done:
            query = bounded(as_str(item.get("query")) or "", 4096)
            self.whole_call(
                ToolTraceEntry(
                    id=bounded(item_id, 200),
                    name="WebSearch",
                    input={"query": query},
                    output="",
                    is_error=False,
                    read_only=True,
                    started_after_ms=now_ms,
                )
            )


HARNESS = Harness(
    recipe=pinned("codex"),
    quiet_env=QUIET_ENV,
    files=files,
    env=env,
    argv=argv,
    parser=CodexParser,
    resume_argv=resume_argv,
)
