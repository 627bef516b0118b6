"""Anthropic Messages (`POST /v1/messages`, and `/v1/messages/count_tokens`, which is not a model round).

A stream opens with `message_start` (the message with its input usage),
then per content block `content_block_start`, deltas (`text_delta`,
`input_json_delta`, `thinking_delta`) and `content_block_stop`, then
`message_delta` with the stop reason and the cumulative output usage, then
`message_stop`.
"""

from __future__ import annotations

import json
from typing import Any

from aoe_tui.agents.wire.sse import ServerSentEvent
from aoe_tui.agents.wire.usage import SeenToolCall, TokenUsage, as_object, integer, json_event, number, plus

PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
}


def body_usage(document: Any) -> TokenUsage | None:
    usage = as_object(document).get("usage")
    if not isinstance(usage, dict):
        return None
    cache_read = integer(usage.get("cache_read_input_tokens"))
    cache_write = integer(usage.get("cache_creation_input_tokens"))
    base = integer(usage.get("input_tokens"))
    # Anthropic's input_tokens leaves out what was read from or written to the cache; the input is all three.
    return TokenUsage(
        plus(base, cache_read, cache_write) if base is not None else None,
        integer(usage.get("output_tokens")),
        cache_read,
        number(usage.get("cost")),
    )


def tool_calls(document: Any) -> list[SeenToolCall]:
    content = as_object(document).get("content")
    return [
        SeenToolCall(str(block.get("id", "")), str(block.get("name", "")), json.dumps(block.get("input", {})))
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use")
    ]


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = _ERROR_TYPES.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


class Fold:
    def __init__(self) -> None:
        self._message: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._partial_json: dict[int, list[str]] = {}
        self._usage: dict[str, Any] = {}

    def add(self, event: ServerSentEvent) -> None:
        document = json_event(event.data)
        if document is None:
            return
        kind = document.get("type", event.event)
        if kind == "message_start":
            self._message = dict(as_object(document.get("message")))
            self._usage.update(as_object(self._message.pop("usage", None)))
        elif kind == "content_block_start" and isinstance(document.get("index"), int):
            self._blocks[document["index"]] = dict(as_object(document.get("content_block")))
        elif kind == "content_block_delta" and isinstance(document.get("index"), int):
            self._delta(document["index"], as_object(document.get("delta")))
        elif kind == "message_delta":
            self._message.update(as_object(document.get("delta")))
            self._usage.update({k: v for k, v in as_object(document.get("usage")).items() if v is not None})

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        kind = delta.get("type")
        if kind == "text_delta":
            block["text"] = block.get("text", "") + str(delta.get("text", ""))
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + str(delta.get("thinking", ""))
        elif kind == "input_json_delta":
            self._partial_json.setdefault(index, []).append(str(delta.get("partial_json", "")))

    @property
    def usage(self) -> TokenUsage | None:
        return body_usage({"usage": self._usage}) if self._usage else None

    def document(self) -> dict[str, Any]:
        content = []
        for index, block in sorted(self._blocks.items()):
            if index in self._partial_json:
                text = "".join(self._partial_json[index])
                try:
                    block = {**block, "input": json.loads(text) if text else {}}
                except ValueError:
                    block = {**block, "input": text}
            content.append(block)
        return {**self._message, "content": content, "usage": self._usage}
