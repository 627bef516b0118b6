"""OpenAI Chat Completions (`POST /v1/chat/completions`), the dialect of most local servers and routers.

A streamed reply is `chat.completion.chunk` events: deltas of the message's
content and of each tool call by index, the finish reason, and (when the
client asked with `stream_options.include_usage`) a last chunk holding
`usage`, then `data: [DONE]`.
"""

from __future__ import annotations

from typing import Any

from aoe_tui.agents.wire.sse import ServerSentEvent
from aoe_tui.agents.wire.usage import (
    SeenToolCall,
    TokenUsage,
    arguments_text,
    as_object,
    integer,
    json_event,
    number,
)

PATH = "/v1/chat/completions"


def body_usage(document: Any) -> TokenUsage | None:
    usage = as_object(document).get("usage")
    if not isinstance(usage, dict):
        return None
    details = as_object(usage.get("prompt_tokens_details"))
    return TokenUsage(
        integer(usage.get("prompt_tokens")),
        integer(usage.get("completion_tokens")),
        integer(details.get("cached_tokens")),
        number(usage.get("cost")),
    )


def tool_calls(document: Any) -> list[SeenToolCall]:
    choices = as_object(document).get("choices")
    message = as_object(as_object(choices[0]).get("message")) if isinstance(choices, list) and choices else {}
    listed = message.get("tool_calls")
    calls: list[Any] = listed if isinstance(listed, list) else []
    return [
        SeenToolCall(
            str(call.get("id") or f"call-{index}"),
            str(as_object(call.get("function")).get("name", "")),
            arguments_text(as_object(call.get("function")).get("arguments")),
        )
        for index, call in enumerate(calls)
        if isinstance(call, dict)
    ]


def error_body(status: int, message: str) -> dict[str, Any]:
    kind = {401: "invalid_api_key", 402: "insufficient_quota", 429: "rate_limit_exceeded"}.get(
        status, "invalid_request"
    )
    return {"error": {"message": message, "type": kind, "code": kind}}


class Fold:
    """Reassembles a streamed reply into the `chat.completion` document it stands for."""

    def __init__(self) -> None:
        self._head: dict[str, Any] = {}
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._usage: dict[str, Any] | None = None

    def add(self, event: ServerSentEvent) -> None:
        chunk = json_event(event.data)
        if chunk is None:
            return
        for key in ("id", "model", "created"):
            if key in chunk and key not in self._head:
                self._head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return
        choice = as_object(choices[0])
        delta = as_object(choice.get("delta"))
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        for name in ("reasoning", "reasoning_content"):
            if isinstance(delta.get(name), str):
                self._reasoning.append(delta[name])
        for call in delta.get("tool_calls") or []:
            self._add_call(as_object(call))
        if choice.get("finish_reason"):
            self._finish = str(choice["finish_reason"])

    def _add_call(self, delta: dict[str, Any]) -> None:
        given = delta.get("index")
        index = given if isinstance(given, int) else len(self._calls)
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
        call["id"] = call["id"] or delta.get("id")
        function = as_object(delta.get("function"))
        if isinstance(function.get("name"), str):
            call["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["arguments"] += function["arguments"]

    @property
    def usage(self) -> TokenUsage | None:
        return body_usage({"usage": self._usage}) if self._usage is not None else None

    def document(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._content) or None}
        if self._reasoning:
            message["reasoning"] = "".join(self._reasoning)
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"] or f"call-{index}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for index, call in sorted(self._calls.items())
            ]
        document: dict[str, Any] = {
            **self._head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._usage is not None:
            document["usage"] = self._usage
        return document
