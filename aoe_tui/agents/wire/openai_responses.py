"""OpenAI Responses (`POST /v1/responses`), which Codex speaks.

The stream's `response.completed` (or `response.incomplete` / `response.failed`)
event carries the whole final response, usage included, so reassembly is
taking that one; the deltas before it are only for a live display.
"""

from __future__ import annotations

from typing import Any

from aoe_tui.agents.wire.openai_chat import error_body as error_body
from aoe_tui.agents.wire.sse import ServerSentEvent
from aoe_tui.agents.wire.usage import SeenToolCall, TokenUsage, arguments_text, as_object, integer, json_event, number

PATH = "/v1/responses"
_FINAL_EVENTS = {"response.completed", "response.incomplete", "response.failed"}


def body_usage(document: Any) -> TokenUsage | None:
    usage = as_object(document).get("usage")
    if not isinstance(usage, dict):
        return None
    details = as_object(usage.get("input_tokens_details"))
    return TokenUsage(
        integer(usage.get("input_tokens")),
        integer(usage.get("output_tokens")),
        integer(details.get("cached_tokens")),
        number(usage.get("cost")),
    )


def tool_calls(document: Any) -> list[SeenToolCall]:
    output = as_object(document).get("output")
    return [
        SeenToolCall(str(item.get("call_id") or item.get("id") or ""), str(item.get("name", "")), _arguments(item))
        for item in (output if isinstance(output, list) else [])
        if isinstance(item, dict) and item.get("type") in ("function_call", "custom_tool_call", "local_shell_call")
    ]


def _arguments(item: dict[str, Any]) -> str:
    if item.get("type") == "local_shell_call":
        return arguments_text(item.get("action"))
    return arguments_text(item.get("arguments", item.get("input")))


class Fold:
    def __init__(self) -> None:
        self._final: dict[str, Any] | None = None
        self._started: dict[str, Any] = {}

    def add(self, event: ServerSentEvent) -> None:
        document = json_event(event.data)
        if document is None:
            return
        kind = document.get("type", event.event)
        response = document.get("response")
        if kind == "response.created" and isinstance(response, dict):
            self._started = response
        elif kind in _FINAL_EVENTS and isinstance(response, dict):
            self._final = response

    @property
    def usage(self) -> TokenUsage | None:
        return body_usage(self._final) if self._final is not None else None

    def document(self) -> dict[str, Any]:
        return self._final if self._final is not None else {**self._started, "status": "incomplete"}
